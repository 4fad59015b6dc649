'use strict';
// A state store that answers asynchronously, a few event-loop turns late, and copies values in and out,
// as a store in another process (Redis) does: what the code under test relies on must survive that.
class SlowStore {
  constructor(inner) {
    this.inner = inner;
    this.shared = true;
    this.ops = 0;
  }
  async pause() {
    for (let i = 0; i < ++this.ops % 3; i++) await new Promise((r) => setImmediate(r));
  }
}
for (const method of ['get', 'put', 'claim', 'claimAll', 'advance', 'delete', 'lease', 'schedule', 'takeDue', 'settle', 'epoch', 'close']) {
  SlowStore.prototype[method] = async function (...args) {
    await this.pause();
    return structuredClone(await this.inner[method](...args.map((a) => (typeof a === 'object' && a !== null ? structuredClone(a) : a))));
  };
}

module.exports = { SlowStore };
