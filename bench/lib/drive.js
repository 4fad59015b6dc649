'use strict';
// Shared by the benchmarks that push msgs through a flow: feeding a node with a bounded number of msgs
// outstanding, an order of variants per round that charges none of them for always following another,
// and the rounds themselves.
const helper = require('node-red-node-test-helper');
const { median, num, sleep } = require('./common');
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

/**
 * Runs `names` of `variants` (name → (n) => Promise of n msgs done) for `rounds` rounds of `messages` msgs
 * each, in a Williams order, a GC and a pause before each. Returns per variant, by round, the rate
 * (msgs/s) and this process's CPU per msg (µs); variants not named have empty lists. `around(name)`, if
 * given, runs before a measurement (outside its time) and returns what to run after it.
 */
async function measureRounds({ variants, names, rounds, messages, label, log, around }) {
  const rates = Object.fromEntries(Object.keys(variants).map((n) => [n, []]));
  const cpu = Object.fromEntries(Object.keys(variants).map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    const line = [];
    for (const name of williams(names.length, r).map((k) => names[k])) {
      // What the previous variant left (garbage, closing sockets) is not charged to this one.
      global.gc?.();
      await sleep(100);
      const after = around?.(name);
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      await variants[name](messages);
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      const c = process.cpuUsage(c0);
      after?.();
      rates[name].push(messages / s);
      cpu[name].push((c.user + c.system) / messages);
      line.push(`${name} ${num(messages / s)}`);
    }
    log(`${label}: round ${r + 1}/${rounds} (msgs/s): ${line.join(', ')}`);
  }
  return { rates, cpu };
}

/** The median of the rounds' ratios of a's rate to b's: the load changes between rounds more than within one. */
function ratioOf(rates, a, b) {
  return median(rates[a].map((x, r) => x / rates[b][r]));
}

module.exports = { driveFlow, williams, measureRounds, ratioOf, to, text, FROM };
