'use strict';
// Inbox paging (npm run bench, or node bench/inbox.js [--records 100000] [--limit 1000]): the simulator,
// in a child process (bench/lib/inbox-sim.js), holds `records` SMS injected with injectSms; a
// kaleyra-inbox node with a poll interval, in the real Node-RED runtime, reads them all page by page
// (limit per page) in its first poll and sends each record as a msg to a helper node. Counted with the
// runtime's onSend hook. Reports records per second and the peak heap and RSS growth during the poll;
// then a second node polls again with a GC before each memory sample, for the live data alone.
const { fork } = require('node:child_process');
const path = require('node:path');

// The baseline needs a GC: run with --expose-gc.
if (require.main === module) require('./lib/common').exposeGc(__filename);

const helper = require('node-red-node-test-helper');
// Node-RED as the tests reach it: KALEYRA_NODE_RED_DIR runs a benchmark against another version.
const { nodeRedMain, fromNodeRed } = require('../test/helpers/node-red');
const { hooks } = fromNodeRed('@node-red/util');
const { mb, num, unspy, sleep, main } = require('./lib/common');

helper.init(nodeRedMain);
const configNode = require('../nodes/kaleyra-config.js');
const inboxNode = require('../nodes/kaleyra-inbox.js');

const HOOK = 'kaleyraInboxBench';

function startSimulator(records) {
  const child = fork(path.join(__dirname, 'lib/inbox-sim.js'), [String(records)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve) => child.once('message', (m) => resolve({ ...m, stop: () => new Promise((r) => (child.once('exit', r), child.send('stop'))) })));
}

function flow(urls, o, id) {
  return [
    { id: 't1', type: 'tab', label: 'bench' },
    { id: 'acct', type: 'kaleyra-config', name: 'bench', ...urls, simulator: false, timeout: 60, concurrency: 4, retries: 0 },
    // The poll interval is long: the bench measures the first poll, which reads every record.
    { id, type: 'kaleyra-inbox', z: 't1', account: 'acct', pollInterval: 3600, limit: String(o.limit), limitType: 'num', wires: [['out']] },
    { id: 'out', type: 'helper', z: 't1' },
  ];
}

/** Deploys a kaleyra-inbox node `id`, whose first poll reads every record; measures it. */
async function poll(sim, o, id, collect) {
  let emitted = 0;
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  hooks.add(`onSend.${HOOK}`, (events) => {
    for (const e of events) {
      if (e.source?.id !== id) continue;
      if (++emitted === o.records) done();
    }
  });
  global.gc();
  await sleep(50);
  global.gc();
  const base = process.memoryUsage();
  const peak = { heapUsed: 0, rss: 0 };
  const sampler = setInterval(
    () => {
      if (collect) global.gc();
      const m = process.memoryUsage();
      peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed - base.heapUsed);
      peak.rss = Math.max(peak.rss, m.rss - base.rss);
    },
    collect ? 50 : 5,
  );
  try {
    const started = process.hrtime.bigint();
    // Deploying the flow starts the node, and its first poll at once.
    await helper.setFlows(flow(sim.urls, o, id), 'full', { acct: { apiKey: 'simulatorkey' } }).catch((err) => {
      // The helper may miss 'flows:started' and time out after 300 ms; the count below tells.
      if (!/timeout waiting event/.test(err.message)) throw err;
    });
    let timer;
    await Promise.race([finished, new Promise((resolve) => (timer = setTimeout(resolve, o.timeLimitMs)))]);
    clearTimeout(timer);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (emitted !== o.records) throw new Error(`only ${emitted} of ${o.records} records were emitted in ${o.timeLimitMs} ms`);
    await sleep(200); // nothing more may come
    if (emitted !== o.records) throw new Error(`${emitted} records were emitted for ${o.records}`);
    global.gc();
    return { seconds, peak, kept: process.memoryUsage().heapUsed - base.heapUsed };
  } finally {
    clearInterval(sampler);
    hooks.remove(`*.${HOOK}`);
  }
}

async function run(opts = {}) {
  const o = { records: 100_000, limit: 1000, timeLimitMs: 600_000, log: console.log, ...opts };
  const t0 = Date.now();
  const sim = await startSimulator(o.records);
  o.log(`inbox: the simulator holds ${num(sim.injected)} records (injected in ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  await helper.load([configNode, inboxNode], [{ id: 't1', type: 'tab', label: 'bench' }], {});
  unspy(helper, []);

  let polls;
  try {
    // Twice, each time a new node (a new id: nothing carried over) reading every record: as is, then with
    // a GC before each memory sample, which shows what the poll holds without the GC's lag.
    polls = [await poll(sim, o, 'inbox', false), await poll(sim, o, 'inbox-live', true)];
  } finally {
    await helper.unload();
    await sim.stop();
  }
  const [{ seconds, peak, kept }, live] = polls;
  const rate = o.records / seconds;
  o.log(`inbox: ${num(o.records)} records in ${seconds.toFixed(1)} s (${Math.ceil(o.records / o.limit)} pages of ${o.limit}): ${num(rate)} records/s, each one msg`);
  o.log(`inbox: peak growth during the poll: heap ${mb(peak.heapUsed)}, RSS ${mb(peak.rss)}; with a GC before each sample (live data only): heap ${mb(live.peak.heapUsed)}; kept after it (GC'd): heap ${mb(kept)}`);
  return {
    rows: [
      {
        bench: `inbox: poll through ${num(o.records)} records (pages of ${o.limit}), one msg each`,
        value: `${num(rate)} records/s`,
        compared: `peak heap +${mb(peak.heapUsed)} (live +${mb(live.peak.heapUsed)}), RSS +${mb(peak.rss)}; kept after the poll: heap +${mb(kept)}`,
        target: 'bounded memory (report)',
        met: true,
      },
    ],
  };
}

module.exports = { run };

if (require.main === module) main('inbox', run);
