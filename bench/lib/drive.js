'use strict';
// Shared by the benchmarks that push msgs through a flow: feeding a node with a bounded number of msgs
// outstanding, and an order of variants per round that charges none of them for always following another.
const helper = require('node-red-node-test-helper');
const FROM = '918000000000';
const to = (i) => `9197${String(10_000_000 + (i % 10_000_000)).slice(-8)}`;
const text = (i) => `bench message ${i}`;

/** Feeds `n` msgs into `entry`, `concurrency` outstanding at a time; resolves when `exit` got all of them. */
function driveFlow(entry, exit, n, concurrency) {
  return new Promise((resolve, reject) => {
    let fed = 0;
    let got = 0;
    const feed = () => {
      const i = fed++;
      entry.receive({ payload: text(i), to: to(i), from: FROM });
    };
    const onOut = (msg) => {
      const p = msg.payload;
      const ok = Array.isArray(p) ? p[0]?.id : p?.status === 'OK';
      if (!ok) return finish(new Error(`unexpected output: ${JSON.stringify(p).slice(0, 200)}`));
      if (++got === n) return finish();
      if (fed < n) feed();
    };
    const onError = (msg) => finish(new Error(`error: ${msg.error?.message}`));
    function finish(err) {
      exit.off('input', onOut);
      helper.getNode('caught').off('input', onError);
      if (err) reject(err);
      else resolve();
    }
    exit.on('input', onOut);
    helper.getNode('caught').on('input', onError);
    for (let k = 0; k < Math.min(concurrency, n); k++) feed();
  });
}

/**
 * Round r's order of n variants (a Williams design): over n rounds each variant runs right after every
 * other one exactly once, so none is always measured after the same one (say, the slow core node).
 */
function williams(n, r) {
  const first = [0];
  for (let k = 1; first.length < n; k++) {
    first.push(k);
    if (first.length < n) first.push(n - k);
  }
  const row = first.map((x) => (x + r) % n);
  return n % 2 === 1 && Math.floor(r / n) % 2 === 1 ? row.reverse() : row;
}

module.exports = { driveFlow, williams, to, text, FROM };
