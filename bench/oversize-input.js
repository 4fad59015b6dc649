'use strict';
// Refusing oversize input (node bench/oversize-input.js [--rounds 7]): KaleyraClient.sendMessage against
// the built-in simulator with a text over the 4096-character limit, of 10 MB, 100 KB and 5 KB (letters,
// so one UTF-16 unit per character), a `to` string of 10 MB and a latitude of 20,000 digits and a letter.
// Each is refused before any request; the time to refuse should not grow with the size of the input.
// Prints the median time per case over `rounds` refusals, one line each, and the ratio of the 10 MB
// text's refusal to the 5 KB one's. Not in run-all (not a target). Issue 19, item 6.
const { KaleyraClient } = require('../dist/core/client');
const { Simulator, DEMO_KEY } = require('../dist/simulator');
const { median, options } = require('./lib/common');

const FROM = '918000000000';
const TO = '919812345678';
const KB = 1024;
const MB = 1024 * KB;

/** A flat string of n copies of `unit`: repeat() builds a rope, which the first scan would flatten (timed then). */
function flat(unit, n) {
  const s = unit.repeat(n);
  /\u0000/.test(s); // a regex flattens its subject
  return s;
}

async function refusalMs(client, input, expect) {
  const t0 = process.hrtime.bigint();
  let err;
  try {
    await client.sendMessage(input);
  } catch (e) {
    err = e;
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (!err || err.code !== 'INVALID_INPUT' || err.field !== expect) throw new Error(`expected INVALID_INPUT on ${expect}, got ${err ? `${err.code} ${err.message.slice(0, 200)}` : 'a success'}`);
  return { ms, message: err.message };
}

async function run() {
  const o = options({ rounds: 7 });
  const sim = new Simulator({});
  const urls = await sim.start();
  const client = new KaleyraClient({ apiKey: DEMO_KEY, ...urls });
  const cases = [
    ['text of 10 MB', { from: FROM, to: TO, body: flat('a', 10 * MB) }, 'text.message'],
    ['text of 100 KB', { from: FROM, to: TO, body: flat('a', 100 * KB) }, 'text.message'],
    ['text of 5 KB', { from: FROM, to: TO, body: flat('a', 5 * KB) }, 'text.message'],
    ['to string of 10 MB', { from: FROM, to: flat('9', 10 * MB), body: 'hi' }, 'to'],
    // A run of digits the decimal pattern could split in every way: quadratic before the fix.
    ['latitude 20k digits', { from: FROM, to: TO, body: { type: 'location', location: { latitude: `${flat('1', 20_000)}x`, longitude: 1 } } }, 'location.latitude'],
  ];
  const medians = new Map();
  try {
    for (const [name, input, field] of cases) {
      await refusalMs(client, input, field); // warm-up
      const times = [];
      let message = '';
      for (let r = 0; r < o.rounds; r++) ({ ms: times[r], message } = await refusalMs(client, input, field));
      medians.set(name, median(times));
      console.log(`oversize-input: ${name.padEnd(19)} refused in ${median(times).toFixed(3)} ms (median of ${o.rounds}; max ${Math.max(...times).toFixed(3)} ms): ${message.slice(0, 90)}`);
    }
    const ratio = medians.get('text of 10 MB') / medians.get('text of 5 KB');
    console.log(`oversize-input: refusing 10 MB of text takes ${ratio.toFixed(1)}x the time of 5 KB (bounded: near 1)`);
    if (sim.requests.length !== 0) throw new Error(`${sim.requests.length} requests reached the simulator`);
  } finally {
    await client.close();
    await sim.stop();
  }
}

run().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
