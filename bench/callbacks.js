'use strict';
// Callback ingest (npm run bench, or node bench/callbacks.js [--rounds 5] [--duration 4] [--connections 32]).
// One Node-RED runtime (node-red-node-test-helper) whose RED.httpNode is served on 127.0.0.1 (as
// test/helpers/http-node.js does), with two flows on it:
//   - kaleyra-callback (with a token) → a helper node: every request is parsed, validated and correlated
//     with a send tracked under its kref (spec 6.1 delivery callbacks: GET with status, mobile, timestamp);
//   - the core `http in` (GET) → `http response`, the plainest webhook a user can build.
// The load comes from autocannon in a separate process (bench/lib/load.js), so it does not compete with
// Node-RED for the same core (the machine has two: one each). Interleaved rounds; medians and ratios.
const { fork } = require('node:child_process');
const path = require('node:path');
const helper = require('node-red-node-test-helper');
// Node-RED as the tests reach it: KALEYRA_NODE_RED_DIR runs a benchmark against another version.
const { nodeRedMain, fromNodeRed } = require('../test/helpers/node-red');
const { HttpNode } = require('../test/helpers/http-node');
const { median, num, unspy, sleep, main } = require('./lib/common');

helper.init(nodeRedMain);
const httpInNode = fromNodeRed('@node-red/nodes/core/network/21-httpin.js');
const callbackNode = require('../nodes/kaleyra-callback.js');
const configNode = require('../nodes/kaleyra-config.js');

const TOKEN = 'bench-token-0123456789';
const REFS = 500;
const STATUSES = ['SENT', 'DELIVERED', 'READ'];
const mobile = (i) => `9197${String(10_000_000 + i).slice(-8)}`;

const FLOW = [
  { id: 't1', type: 'tab', label: 'bench' },
  { id: 'acct', type: 'kaleyra-config', name: 'bench account', messagingUrl: 'http://127.0.0.1:9', publicUrl: 'https://public.example' },
  { id: 'cb', type: 'kaleyra-callback', z: 't1', account: 'acct', path: '/kaleyra/cb', wires: [['cb-out']] },
  { id: 'cb-out', type: 'helper', z: 't1' },
  { id: 'in', type: 'http in', z: 't1', url: '/core/cb', method: 'get', upload: false, swaggerDoc: '', wires: [['res']] },
  { id: 'res', type: 'http response', z: 't1', statusCode: '', headers: {}, wires: [] },
];

/** Runs autocannon in its own process; resolves to its result line. */
function load(url, paths, o) {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(__dirname, 'lib/load.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let answer;
    child.once('message', (m) => (answer = m));
    child.on('exit', (code) => (answer ? resolve(answer) : reject(new Error(`autocannon exited with ${code}`))));
    child.send({ url, paths, connections: o.connections, duration: o.duration });
  });
}

async function run(opts = {}) {
  const o = { rounds: 5, duration: 4, connections: 32, log: console.log, ...opts };
  const http = new HttpNode();
  await helper.load([httpInNode, configNode, callbackNode, http.capture], FLOW, { cb: { token: TOKEN }, acct: { apiKey: 'BenchKey0123456789' } });
  unspy(helper, FLOW.map((n) => n.id));
  const url = await http.start('/');
  // Sends tracked under REFS krefs, one recipient each, so every callback finds its record: asked of the
  // account as a send node that reports to the callback node asks (the bench stands in for that node).
  const account = helper.getNode('acct');
  const krefs = [];
  for (let i = 0; i < REFS; i++) {
    const report = await account.report(helper.getNode('cb'), 'cb', 'message', `order-${i}`);
    krefs.push(new URL(report.url).searchParams.get('kref'));
    await report.sent({ [mobile(i)]: `msgid${i}` });
  }
  const timestamp = 1_700_000_000;
  const ours = [];
  const core = [];
  for (let i = 0; i < REFS * STATUSES.length; i++) {
    const r = i % REFS;
    const q = `status=${STATUSES[Math.floor(i / REFS)]}&mobile=${mobile(r)}&timestamp=${timestamp + i}`;
    ours.push(`/kaleyra/cb?token=${TOKEN}&kref=${krefs[r]}&${q}`);
    core.push(`/core/cb?kref=${krefs[r]}&${q}`);
  }

  // What the node emits: every event must carry its correlation (the id and ref of the tracked send).
  let events = 0;
  let uncorrelated = 0;
  helper.getNode('cb-out').on('input', (msg) => {
    events++;
    if (!msg.payload.id || !msg.payload.ref) uncorrelated++;
  });

  const rates = { callback: [], core: [] };
  // CPU time of the Node-RED process per request (autocannon is another process): steadier than rates.
  const cpu = { callback: [], core: [] };
  let requests = 0;
  try {
    // A check, then a short warm-up of each.
    const check = await http.fetch(ours[0]);
    if (check.status !== 200) throw new Error(`the callback node answered ${check.status}`);
    requests = 1;
    requests += (await load(url, ours, { ...o, duration: 1 })).total;
    await load(url, core, { ...o, duration: 1 });
    for (let r = 0; r < o.rounds; r++) {
      // --only <name>: one of the two (to profile it with node --cpu-prof).
      const order = o.only ? [o.only] : r % 2 ? ['core', 'callback'] : ['callback', 'core'];
      const line = [];
      for (const name of order) {
        const c0 = process.cpuUsage();
        const res = await load(url, name === 'callback' ? ours : core, o);
        const c = process.cpuUsage(c0);
        cpu[name].push((c.user + c.system) / res.total);
        if (res.non2xx || res.errors || res.timeouts) throw new Error(`${name}: ${res.non2xx} non-2xx, ${res.errors} errors, ${res.timeouts} timeouts`);
        if (name === 'callback') requests += res.total;
        rates[name].push(res.rps);
        line.push(`${name} ${num(res.rps)} req/s (${res.latencyMs.toFixed(1)} ms)`);
      }
      o.log(`callbacks: round ${r + 1}/${o.rounds}: ${line.join(', ')}`);
    }
    // Every answered callback becomes one event (emitted after the answer, once correlated).
    const deadline = Date.now() + 10_000;
    while (events < requests && Date.now() < deadline) await sleep(20);
  } finally {
    await http.stop();
    await helper.unload();
  }
  const ratios = rates.callback.map((x, r) => x / rates.core[r]);
  const m = { callback: median(rates.callback), core: rates.core.length ? median(rates.core) : NaN, ratio: rates.core.length ? median(ratios) : NaN };
  o.log(`callbacks: medians of ${o.rounds} rounds × ${o.duration} s, ${o.connections} connections: kaleyra-callback ${num(m.callback)} req/s, core http in + http response ${num(m.core)} req/s`);
  o.log(`callbacks: CPU of the Node-RED process per request (µs, medians): kaleyra-callback ${num(median(cpu.callback))}, core ${cpu.core.length ? num(median(cpu.core)) : '-'}`);
  o.log(`callbacks: kaleyra-callback / core = ${m.ratio.toFixed(2)} (median of the rounds' ratios; target ≥ 0.9); events emitted ${num(events)} for ${num(requests)} callbacks answered, ${uncorrelated} without their correlation`);
  return {
    rows: [
      {
        bench: 'callbacks: kaleyra-callback (token, delivery callbacks of tracked sends)',
        value: `${num(m.callback)} req/s`,
        compared: `${m.ratio.toFixed(2)}× core http in + http response (${num(m.core)} req/s)`,
        target: '≥ 0.9× core',
        met: m.ratio >= 0.9 && uncorrelated === 0 && events >= requests,
      },
    ],
  };
}

module.exports = { run };

if (require.main === module) main('callbacks', run);
