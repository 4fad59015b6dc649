'use strict';
// The node's own cost per msg, without the network (node bench/overhead.js [--rounds 5] [--messages 50000]):
// the kaleyra-whatsapp node in the real runtime, 16 msgs outstanding, with undici's Pool.request answering
// at once with the service's success envelope. What is left is Node-RED's receive/send plus our
// validation, form, flow control, retry wrapper, decoding and output: the part of a send this package
// can make cheaper. Profile it with node --cpu-prof bench/overhead.js. Not in run-all (not a target).
const helper = require('node-red-node-test-helper');
const { Pool } = require('undici');
const { nodeRedMain } = require('../test/helpers/node-red');
const { unspy, median, options } = require('./lib/common');

const ANSWER = JSON.stringify({ status: 'OK', message: 'message processed successfully', data: [{ id: 'bench0000000000000001', mobile: '919700000001', status: 'AWAITED-DLR' }] });
const LENGTH = String(Buffer.byteLength(ANSWER));
// The transport takes Pool from undici when it first sends: answered here before any socket is opened.
Pool.prototype.request = () => Promise.resolve({ statusCode: 200, headers: { 'content-length': LENGTH }, body: { text: () => Promise.resolve(ANSWER), destroy() {} } });

helper.init(nodeRedMain);
const FLOW = [
  { id: 't1', type: 'tab' },
  { id: 'acct', type: 'kaleyra-config', messagingUrl: 'http://127.0.0.1:9', simulator: false, concurrency: 16 },
  { id: 'wa', type: 'kaleyra-whatsapp', z: 't1', account: 'acct', wires: [['out']] },
  { id: 'out', type: 'helper', z: 't1' },
];

/** Feeds n msgs, `concurrency` outstanding; resolves when all came out. */
function drive(n, concurrency) {
  return new Promise((resolve, reject) => {
    const wa = helper.getNode('wa');
    const out = helper.getNode('out');
    let fed = 0;
    let got = 0;
    const feed = () => {
      const i = fed++;
      wa.receive({ payload: `bench message ${i}`, to: `9197${String(10_000_000 + i).slice(-8)}`, from: '918000000000' });
    };
    const onOut = (msg) => {
      if (!Array.isArray(msg.payload) || !msg.payload[0]?.id) return reject(new Error(`unexpected output ${JSON.stringify(msg.payload)}`));
      if (++got < n) return fed < n && feed();
      out.off('input', onOut);
      resolve();
    };
    out.on('input', onOut);
    for (let k = 0; k < concurrency; k++) feed();
  });
}

async function run(o) {
  await helper.load([require('../nodes/kaleyra-config.js'), require('../nodes/kaleyra-whatsapp.js')], FLOW, { acct: { apiKey: 'BENCHKEY0123456789abcdef' } });
  unspy(helper, FLOW.map((n) => n.id));
  const cpu = [];
  try {
    await drive(o.messages / 2, 16); // warm-up
    for (let r = 0; r < o.rounds; r++) {
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      await drive(o.messages, 16);
      const c = process.cpuUsage(c0);
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      cpu.push((c.user + c.system) / o.messages);
      console.log(`overhead: round ${r + 1}/${o.rounds}: ${cpu.at(-1).toFixed(1)} µs CPU per msg, ${Math.round(o.messages / s)} msgs/s`);
    }
  } finally {
    await helper.unload();
  }
  console.log(`overhead: median ${median(cpu).toFixed(1)} µs CPU per msg (runtime + node + core, no network)`);
}

run(options({ rounds: 5, messages: 50_000 })).catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
