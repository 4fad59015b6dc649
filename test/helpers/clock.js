'use strict';
// Clocks for tests whose verdict must not depend on how fast the machine is.

// Runs `fn` with Date.now moved forward by `offsetMs`: TTLs and expiries seen from the future.
async function withClock(offsetMs, fn) {
  const real = Date.now;
  Date.now = () => real() + offsetMs;
  try {
    return await fn();
  } finally {
    Date.now = real;
  }
}

/** Turns of the event loop (setImmediate, which stays real) that let code woken by a timer run on. */
async function settle(turns = 20) {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A clock the test moves by hand: Date.now, setTimeout/clearTimeout and setInterval/clearInterval are
 * replaced until restore(). A timer fires only when advance() reaches its time, timers in time order;
 * after each firing the code it woke runs on (setImmediate and promises stay real) before the next one.
 * What happens is then counted in firings and simulated milliseconds, whatever the machine's speed.
 * Timers made before install (or by Node.js internals) are untouched: clear*() passes them on.
 * Code under a fake clock must not wait on a real timer (helpers such as until() would wait forever).
 */
function fakeTimers() {
  const real = { now: Date.now, setTimeout, clearTimeout, setInterval, clearInterval };
  let time = real.now();
  let order = 0;
  const timers = new Set();

  class FakeTimer {
    constructor(fn, ms, args, every) {
      Object.assign(this, { fn, args, every, at: time + Math.max(0, Number(ms) || 0), order: order++ });
      timers.add(this);
    }
    ref() {
      return this;
    }
    unref() {
      return this;
    }
    hasRef() {
      return true;
    }
    refresh() {
      this.at = time + (this.every ?? 0);
      return this;
    }
  }
  const clear = (which) => (handle) => (handle instanceof FakeTimer ? timers.delete(handle) : real[which](handle));

  globalThis.setTimeout = (fn, ms, ...args) => new FakeTimer(fn, ms, args);
  globalThis.setInterval = (fn, ms, ...args) => new FakeTimer(fn, ms, args, Math.max(1, Number(ms) || 0));
  globalThis.clearTimeout = clear('clearTimeout');
  globalThis.clearInterval = clear('clearInterval');
  Date.now = () => time;

  return {
    /** The fake time, epoch ms. */
    get now() {
      return time;
    },
    /** Timers set and not yet fired (or cleared): a stopped component should leave none. */
    get pending() {
      return timers.size;
    },
    settle,
    /** Moves the clock `ms` forward, firing the timers due on the way (an interval once per period). */
    async advance(ms) {
      const target = time + ms;
      await settle();
      for (;;) {
        let next;
        for (const t of timers) if (t.at <= target && (!next || t.at < next.at || (t.at === next.at && t.order < next.order))) next = t;
        if (!next) break;
        time = next.at;
        if (next.every) {
          next.at += next.every;
          next.order = order++;
        } else timers.delete(next);
        next.fn(...next.args);
        await settle();
      }
      time = target;
      await settle();
    },
    restore() {
      Object.assign(globalThis, { setTimeout: real.setTimeout, clearTimeout: real.clearTimeout, setInterval: real.setInterval, clearInterval: real.clearInterval });
      Date.now = real.now;
      timers.clear();
    },
  };
}

module.exports = { withClock, fakeTimers, settle };
