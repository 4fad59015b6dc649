'use strict';
// Send throughput (npm run bench, or node bench/send.js [--rounds 8] [--messages 4000] [--concurrency 16]).
// One loopback server (bench/lib/server.js, a child process that drains the body and answers the JSON
// success envelope) and, in this process, four clients sending the identical multipart request
// (method, from, body, format, api_key), `concurrency` at a time, in interleaved rounds:
//   - whatsapp: the kaleyra-whatsapp node in the real Node-RED runtime (node-red-node-test-helper);
//   - raw: undici Pool + form-data, the form as one Buffer, without Node-RED (reported, not a target:
//     it has no runtime, no msgs, no checks);
//   - floor: a bare node made here whose input handler sends with the raw client (undici + form-data):
//     the runtime's own cost per msg plus the limit, i.e. what any node can do in this runtime; ours
//     should be at or above it;
//   - core: a function node building msg.payload as an object of fields with msg.headers content-type
//     multipart/form-data, into the core `http request` node (keep-alive on), as users do today.
// Rounds interleave the variants (in a Williams order, after a GC each); prints msgs/s per round, CPU
// time per msg, the medians and the ratios (each round's ratio, then their median).
// --monitor: instead, the cost of the account monitor (issue 21) in one run: the same whatsapp node on an
// account with its monitor (hooks, the account view's deltas on RED.comms, and /kaleyra/metrics's registry
// scraped every second while it runs) against one on an account with `monitor: false`, rounds alternating.
const { randomUUID } = require('node:crypto');

// A GC before each measurement: run with --expose-gc.
if (require.main === module) require('./lib/common').exposeGc(__filename);

const helper = require('node-red-node-test-helper');
// Node-RED as the tests reach it: KALEYRA_NODE_RED_DIR runs a benchmark against another version.
const { nodeRedMain, fromNodeRed } = require('../test/helpers/node-red');
const { Pool } = require('undici');
const FormData = require('form-data');
const { startServer, median, num, unspy, main } = require('./lib/common');
const { driveFlow, measureRounds, ratioOf, to, text, FROM } = require('./lib/drive');

helper.init(nodeRedMain);
const catchNode = fromNodeRed('@node-red/nodes/core/common/25-catch.js');
const functionNode = fromNodeRed('@node-red/nodes/core/function/10-function.js');
const httpRequestNode = fromNodeRed('@node-red/nodes/core/network/21-httprequest.js');
const configNode = require('../nodes/kaleyra-config.js');
const whatsappNode = require('../nodes/kaleyra-whatsapp.js');

const KEY = 'BENCHKEY0123456789abcdef';

// What a user writes in the function node today (the same fields, in the same order, as the node sends).
const FUNCTION_BODY = `
msg.url = env.get('BENCH_URL') + '/api/v4/';
msg.headers = { 'content-type': 'multipart/form-data' };
msg.payload = {
  method: 'wa',
  from: msg.from,
  body: JSON.stringify({ type: 'text', text: { message: msg.payload }, to: msg.to }),
  format: 'json',
  api_key: env.get('BENCH_KEY'),
};
return msg;`;

function flow(url, o) {
  return [
    { id: 't1', type: 'tab', label: 'bench', env: [{ name: 'BENCH_URL', value: url, type: 'str' }, { name: 'BENCH_KEY', value: KEY, type: 'str' }] },
    // Defaults (timeout 30 s, 2 retries, no rate limit, queue of 1000) but for the concurrency.
    { id: 'acct', type: 'kaleyra-config', name: 'bench', messagingUrl: url, simulator: false, concurrency: o.concurrency },
    { id: 'wa', type: 'kaleyra-whatsapp', z: 't1', account: 'acct', wires: [['wa-out']] },
    { id: 'wa-out', type: 'helper', z: 't1' },
    // The same, on an account without the monitor (--monitor compares the two).
    { id: 'acct-off', type: 'kaleyra-config', name: 'bench off', messagingUrl: url, simulator: false, concurrency: o.concurrency, monitor: false },
    { id: 'wa-off', type: 'kaleyra-whatsapp', z: 't1', account: 'acct-off', wires: [['wa-off-out']] },
    { id: 'wa-off-out', type: 'helper', z: 't1' },
    { id: 'floor', type: 'bench-raw', z: 't1', wires: [['floor-out']] },
    { id: 'floor-out', type: 'helper', z: 't1' },
    { id: 'fn', type: 'function', z: 't1', func: FUNCTION_BODY, outputs: 1, wires: [['req']] },
    { id: 'req', type: 'http request', z: 't1', method: 'POST', ret: 'obj', paytoqs: 'ignore', url: '', persist: true, tls: '', proxy: '', authType: '', senderr: false, headers: [], wires: [['req-out']] },
    { id: 'req-out', type: 'helper', z: 't1' },
    { id: 'c1', type: 'catch', z: 't1', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'caught', type: 'helper', z: 't1' },
  ];
}

/**
 * The limit: the same request straight through undici, no runtime and no checks, and form-data used the
 * cheapest way known here (as the transport does): a randomUUID() boundary rather than its own
 * crypto.randomBytes() one, and the form collected from its stream into one Buffer rather than
 * getBuffer(), which re-copies the growing body for every part.
 */
function rawClient(url, concurrency) {
  const pool = new Pool(url, { connections: concurrency, keepAliveTimeout: 4_000 });
  const toBuffer = (form) =>
    new Promise((resolve, reject) => {
      const parts = [];
      form.on('data', (part) => parts.push(String(part)));
      form.on('error', reject);
      form.on('end', () => resolve(Buffer.from(parts.join(''))));
      form.resume();
    });
  async function one(message, mobile) {
    const form = new FormData();
    form.setBoundary(`----kaleyra${randomUUID()}`); // the transport's form of boundary: the same bytes
    form.append('method', 'wa');
    form.append('from', FROM);
    form.append('body', JSON.stringify({ type: 'text', text: { message }, to: mobile }));
    form.append('format', 'json');
    form.append('api_key', KEY);
    const body = await toBuffer(form);
    const headers = { 'content-type': `multipart/form-data; boundary=${form.getBoundary()}`, 'content-length': String(body.length) };
    const res = await pool.request({ method: 'POST', path: '/api/v4/', headers, body });
    const env = JSON.parse(await res.body.text());
    if (res.statusCode !== 200 || env.status !== 'OK') throw new Error(`unexpected answer ${res.statusCode}`);
  }
  async function run(n) {
    let next = 0;
    const worker = async () => {
      while (next < n) {
        const i = next++;
        await one(text(i), to(i));
        // Yielding to the event loop before the next request measured 8-25% faster here (answers that
        // arrived together are all read before new requests are written): the limit is the faster form.
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  }
  return { one, run, close: () => pool.close() };
}

/** The multipart body with its boundary replaced, so two clients' requests can be compared. */
function normalise(c) {
  const boundary = /boundary=(\S+)/.exec(c.type)?.[1];
  return boundary ? c.body.split(boundary).join('BOUNDARY') : c.body;
}

/** The floor: a node that sends each msg with the raw client, then send + done. */
function floorNode(raw) {
  return (RED) => {
    function BenchRaw(config) {
      RED.nodes.createNode(this, config);
      this.on('input', (msg, send, done) => {
        raw.one(msg.payload, msg.to).then(() => {
          msg.payload = [{ id: 'x', mobile: msg.to }];
          send(msg);
          done();
        }, done);
      });
    }
    RED.nodes.registerType('bench-raw', BenchRaw);
  };
}

async function run(opts = {}) {
  const o = { rounds: 8, messages: 4000, concurrency: 16, warmup: 2000, log: console.log, ...opts };
  const server = await startServer();
  const raw = rawClient(server.url, o.concurrency);
  await helper.load([catchNode, functionNode, httpRequestNode, configNode, whatsappNode, floorNode(raw)], flow(server.url, o), { acct: { apiKey: KEY }, 'acct-off': { apiKey: KEY } });
  unspy(helper, flow(server.url, o).map((n) => n.id));
  const wa = helper.getNode('wa');
  const fn = helper.getNode('fn');
  const variants = {
    whatsapp: (n) => driveFlow(wa, helper.getNode('wa-out'), n, o.concurrency),
    raw: (n) => raw.run(n),
    floor: (n) => driveFlow(helper.getNode('floor'), helper.getNode('floor-out'), n, o.concurrency),
    core: (n) => driveFlow(fn, helper.getNode('req-out'), n, o.concurrency),
    'monitor-off': (n) => driveFlow(helper.getNode('wa-off'), helper.getNode('wa-off-out'), n, o.concurrency),
  };
  if (o.monitor) return monitorCost(o, variants, server, raw);
  // By round: rates, and CPU time of this process per msg (the server is another process), which is
  // steadier than rates on a busy machine.
  let rates;
  let cpu;
  try {
    // The three send the same request: compare one of each (the boundary aside).
    const bodies = {};
    for (const [name, go] of Object.entries(variants)) {
      const { next } = await server.capture();
      await go(1);
      bodies[name] = await next;
    }
    // The raw client's request is the reference; its content type has no boundary to compare.
    for (const name of ['whatsapp', 'floor', 'core']) {
      if (normalise(bodies[name]) !== normalise(bodies.raw)) {
        throw new Error(`the ${name} request differs from the raw one:\n${normalise(bodies[name])}\n---\n${normalise(bodies.raw)}`);
      }
    }
    o.log(`send: the requests are identical (${bodies.raw.body.length} bytes of multipart body; boundary aside)`);
    // --only <name>[,<name>...]: some of the variants (to profile one with node --cpu-prof, say).
    const names = o.only ? String(o.only).split(',') : ['whatsapp', 'raw', 'floor', 'core'];
    for (const name of names) await variants[name](o.warmup);

    ({ rates, cpu } = await measureRounds({ variants, names, rounds: o.rounds, messages: o.messages, label: 'send', log: o.log }));
  } finally {
    await raw.close();
    await helper.unload();
    await server.stop();
  }
  const m = Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, v.length ? median(v) : NaN]));
  const ratio = (a, b) => ratioOf(rates, a, b);
  const vsRaw = ratio('whatsapp', 'raw');
  const vsFloor = ratio('whatsapp', 'floor');
  const vsCore = ratio('whatsapp', 'core');
  o.log(`send: medians of ${o.rounds} rounds × ${o.messages} msgs, concurrency ${o.concurrency} (msgs/s): whatsapp ${num(m.whatsapp)}, floor (bare node: undici + form-data inside a node) ${num(m.floor)}, core http request ${num(m.core)}, raw undici+form-data without Node-RED ${num(m.raw)}`);
  const c = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, v.length ? median(v) : NaN]));
  o.log(`send: CPU of this process per msg (µs, medians): whatsapp ${num(c.whatsapp)}, floor ${num(c.floor)}, core ${num(c.core)}, raw ${num(c.raw)}`);
  o.log(`send: whatsapp / floor = ${vsFloor.toFixed(2)} (target ≥ 1: at or above the runtime's floor); whatsapp / core = ${vsCore.toFixed(2)} (target ≥ 4); whatsapp / raw = ${vsRaw.toFixed(2)} and floor / raw = ${ratio('floor', 'raw').toFixed(2)} (reported: raw has no runtime) (medians of the rounds' ratios)`);
  return {
    medians: m,
    rows: [
      {
        bench: 'send: kaleyra-whatsapp, concurrency 16',
        value: `${num(m.whatsapp)} msgs/s`,
        compared: `${vsFloor.toFixed(2)}× a bare node doing the same request with undici + form-data (${num(m.floor)}/s); ${vsCore.toFixed(2)}× core http request (${num(m.core)}/s); ${vsRaw.toFixed(2)}× raw undici without Node-RED (${num(m.raw)}/s)`,
        target: '≥ 1× the bare node, ≥ 4× core',
        met: vsFloor >= 1 && vsCore >= 4,
      },
    ],
  };
}

/**
 * --monitor: whatsapp on the monitored account against monitor-off, alternating; while the monitored one
 * runs, the metrics registry is scraped every second (a scrape interval far below Prometheus's usual 15 s)
 * and the account view's deltas go out through RED.comms as in the editor.
 */
async function monitorCost(o, variants, server, raw) {
  const { registry } = require('../dist/nodes/metrics');
  let scrapes = 0;
  const around = (name) => {
    if (name !== 'whatsapp') return undefined;
    // One scrape as the round starts (a round may take less than a second), then one a second.
    const scrape = () => void registry.metrics().then(() => scrapes++);
    scrape();
    const timer = setInterval(scrape, 1000);
    return () => clearInterval(timer);
  };
  let rates;
  let cpu;
  try {
    for (const name of ['whatsapp', 'monitor-off']) await variants[name](o.warmup);
    ({ rates, cpu } = await measureRounds({ variants, names: ['whatsapp', 'monitor-off'], rounds: o.rounds, messages: o.messages, label: 'send (monitor)', log: o.log, around }));
  } finally {
    await raw.close();
    await helper.unload();
    await server.stop();
  }
  const ratio = ratioOf(rates, 'whatsapp', 'monitor-off');
  o.log(`send (monitor): medians of ${o.rounds} rounds × ${o.messages} msgs: monitor on ${num(median(rates.whatsapp))}/s, off ${num(median(rates['monitor-off']))}/s; on / off = ${ratio.toFixed(3)} (target ≥ 0.97); ${scrapes} scrapes while on`);
  o.log(`send (monitor): CPU of this process per msg (µs, medians): on ${num(median(cpu.whatsapp), 1)}, off ${num(median(cpu['monitor-off']), 1)}`);
  return {
    medians: { on: median(rates.whatsapp), off: median(rates['monitor-off']) },
    rows: [{ bench: 'send: kaleyra-whatsapp with the account monitor (metrics, account view) on vs off', value: `${ratio.toFixed(3)}×`, compared: `${num(median(rates.whatsapp))}/s on, ${num(median(rates['monitor-off']))}/s off`, target: '≥ 0.97×', met: ratio >= 0.97 }],
  };
}

module.exports = { run };

if (require.main === module) main('send', run);
