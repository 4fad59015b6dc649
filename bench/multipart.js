'use strict';
// The fields-only form of a text send, three ways, at the node (docs/adr/0006-multipart.md): the
// kaleyra-whatsapp node in the real Node-RED runtime with its transport writing the form directly (the
// package's only way), with undici's own FormData (web-standard, undici writes it), and with form-data
// (collected from its stream into one Buffer, its cheapest use known here); those two are the benchmark's
// own (bench/lib/encoders.js). One account per encoder, the same loopback server (bench/lib/server.js),
// interleaved rounds in a Williams order, a GC before each measurement.
// node bench/multipart.js [--rounds 8] [--messages 4000] [--concurrency 16]
if (require.main === module) require('./lib/common').exposeGc(__filename);

const helper = require('node-red-node-test-helper');
const { Response } = require('undici');
const { nodeRedMain, fromNodeRed } = require('../test/helpers/node-red');
const { startServer, median, num, unspy, main } = require('./lib/common');
const { driveFlow, measureRounds, ratioOf } = require('./lib/drive');
const { useEncoder } = require('./lib/encoders');

helper.init(nodeRedMain);
const catchNode = fromNodeRed('@node-red/nodes/core/common/25-catch.js');
const configNode = require('../nodes/kaleyra-config.js');
const whatsappNode = require('../nodes/kaleyra-whatsapp.js');

const KEY = 'BenchKey0123456789abcdef';
const ENCODERS = ['direct', 'undici', 'form-data'];

function flow(url, concurrency) {
  const f = [{ id: 't1', type: 'tab', label: 'bench' }];
  for (const e of ENCODERS) {
    f.push(
      { id: `acct-${e}`, type: 'kaleyra-config', name: e, messagingUrl: url, concurrency },
      { id: `wa-${e}`, type: 'kaleyra-whatsapp', z: 't1', account: `acct-${e}`, wires: [[`out-${e}`]] },
      { id: `out-${e}`, type: 'helper', z: 't1' },
    );
  }
  f.push({ id: 'c1', type: 'catch', z: 't1', scope: null, uncaught: false, wires: [['caught']] }, { id: 'caught', type: 'helper', z: 't1' });
  return f;
}

/** The fields of a captured multipart request, decoded by undici (the bytes differ between encoders). */
async function fields(captured) {
  const form = await new Response(Buffer.from(captured.body, 'latin1'), { headers: { 'content-type': captured.type } }).formData();
  return JSON.stringify([...form.entries()]);
}

async function run(opts = {}) {
  const o = { rounds: 8, messages: 4000, concurrency: 16, warmup: 2000, log: console.log, ...opts };
  const server = await startServer();
  const credentials = Object.fromEntries(ENCODERS.map((e) => [`acct-${e}`, { apiKey: KEY }]));
  const f = flow(server.url, o.concurrency);
  await helper.load([catchNode, configNode, whatsappNode], f, credentials);
  unspy(helper, f.map((n) => n.id));
  let rates;
  try {
    // The account's client reached into, to switch its encoder: a benchmark's instrument, never a flow's.
    for (const e of ENCODERS) useEncoder((await helper.getNode(`acct-${e}`).client()).transport, e);
    const variants = Object.fromEntries(ENCODERS.map((e) => [e, (n) => driveFlow(helper.getNode(`wa-${e}`), helper.getNode(`out-${e}`), n, o.concurrency)]));
    const sent = {};
    for (const e of ENCODERS) {
      const { next } = await server.capture();
      await variants[e](1);
      sent[e] = await fields(await next);
    }
    for (const e of ENCODERS) if (sent[e] !== sent.direct) throw new Error(`the ${e} form has other fields:\n${sent[e]}\n---\n${sent.direct}`);
    o.log(`multipart: the three forms carry the same fields: ${sent.direct.replace(KEY, '***')}`);
    for (const e of ENCODERS) await variants[e](o.warmup);
    ({ rates } = await measureRounds({ variants, names: ENCODERS, rounds: o.rounds, messages: o.messages, label: 'multipart', log: o.log }));
  } finally {
    await helper.unload();
    await server.stop();
  }
  const m = Object.fromEntries(ENCODERS.map((e) => [e, median(rates[e])]));
  const vsUndici = ratioOf(rates, 'direct', 'undici');
  const vsFormData = ratioOf(rates, 'direct', 'form-data');
  o.log(`multipart: medians of ${o.rounds} rounds × ${o.messages} msgs (msgs/s): direct ${num(m.direct)}, undici FormData ${num(m.undici)}, form-data ${num(m['form-data'])}`);
  o.log(`multipart: direct / undici = ${vsUndici.toFixed(2)}, direct / form-data = ${vsFormData.toFixed(2)} (keep direct only if both ≥ 1.10)`);
  return {
    rows: [
      {
        bench: 'multipart: text send, form written directly',
        value: `${num(m.direct)} msgs/s`,
        compared: `${vsUndici.toFixed(2)}× undici FormData (${num(m.undici)}/s); ${vsFormData.toFixed(2)}× form-data (${num(m['form-data'])}/s)`,
        target: '≥ 1.10× both to keep it',
        met: vsUndici >= 1.1 && vsFormData >= 1.1,
      },
    ],
  };
}

module.exports = { run };

if (require.main === module) main('multipart', run);
