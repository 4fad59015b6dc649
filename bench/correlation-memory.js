'use strict';
// Memory of the correlation store over 1,000,000 sends (ADR 0003): the account's memory store with its
// documented bound (MEMORY_LIMITS.correlationEntries), driven as a "Report to" send drives it (track,
// the service's ids, a SENT and a DELIVERED callback), one send after another. Prints the live heap
// (after a GC) and the entries held every 100,000 sends: both must level off once the bound is reached.
// node bench/correlation-memory.js [--sends 1000000]
if (require.main === module) require('./lib/common').exposeGc(__filename);

const { Correlator, newRef } = require('../dist/core/correlation');
const { MemoryStore } = require('../dist/core/state-store');
const { MEMORY_LIMITS } = require('../dist/nodes/registry');
const { main, mb, num } = require('./lib/common');

async function run(opts = {}) {
  const o = { sends: 1_000_000, every: 100_000, log: console.log, ...opts };
  const store = new MemoryStore({ maxEntries: MEMORY_LIMITS.correlationEntries });
  const correlator = new Correlator(store); // as the account uses its memory store
  const heap = () => {
    global.gc?.();
    return process.memoryUsage().heapUsed;
  };
  const base = heap();
  const samples = [];
  const t0 = Date.now();
  for (let i = 1; i <= o.sends; i++) {
    const ref = newRef();
    const mobile = `9198${String(10_000_000 + (i % 10_000_000)).slice(-8)}`;
    await correlator.track(ref, 'message', { order: i });
    await correlator.identified(ref, { [mobile]: `id${i}` });
    await correlator.delivery(ref, mobile, 'SENT');
    await correlator.delivery(ref, mobile, 'DELIVERED');
    if (i % o.every === 0) {
      const h = heap() - base;
      samples.push({ sends: i, heap: h, entries: store.size });
      o.log(`correlation-memory: ${num(i)} sends: ${num(store.size)} entries, live heap +${mb(h)} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    }
  }
  // Levelled off: the second half of the run grew the heap by little compared with the first.
  const half = samples[Math.floor(samples.length / 2) - 1];
  const last = samples.at(-1);
  const growth = last.heap - half.heap;
  o.log(`correlation-memory: bound ${num(MEMORY_LIMITS.correlationEntries)} entries; heap at ${num(half.sends)} sends +${mb(half.heap)}, at ${num(last.sends)} +${mb(last.heap)} (second half: ${growth >= 0 ? '+' : ''}${mb(growth)})`);
  return {
    rows: [
      {
        bench: `correlation store, ${num(o.sends)} sends (memory store)`,
        value: `${num(last.entries)} entries, live heap +${mb(last.heap)}`,
        compared: `+${mb(half.heap)} at ${num(half.sends)} sends; bound ${num(MEMORY_LIMITS.correlationEntries)} entries`,
        target: 'bounded: no growth once the bound is reached (second half < 10% of the first)',
        met: last.entries <= MEMORY_LIMITS.correlationEntries && growth < 0.1 * half.heap,
      },
    ],
  };
}

module.exports = { run };

if (require.main === module) main('correlation-memory', run);
