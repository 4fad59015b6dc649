'use strict';
// Issue 21: the Prometheus metrics (GET /kaleyra/metrics), the account view's snapshot (GET
// /kaleyra/accounts) and its deltas (RED.comms.publish), after a known flow run through the real runtime
// and the built-in simulator; their pacing on a clock the test moves; both routes behind admin auth.
const assert = require('node:assert/strict');
const { helper, NODE_MODULES, catchNode } = require('./helpers/flow');
const { HttpNode, until } = require('./helpers/http-node');
const { parseExposition, valueOf, labelValues } = require('./helpers/prometheus');
const { fakeTimers } = require('./helpers/clock');
const { Simulator, DEMO_KEY } = require('../dist/simulator');
const { AccountMonitor } = require('../dist/core/monitor');
const feed = require('../dist/nodes/monitor-feed');
const { registry } = require('../dist/nodes/metrics');

const TOKEN = 'cbtoken9876';
const ACCOUNT = 'metrics account';
const N = 4; // sends that go out
const M = 3; // sends refused locally: a template without its name (E603)
const numbers = Array.from({ length: N }, (_, i) => `9198123400${String(11 + i)}`);
const FROM = '918000000000';

describe('metrics and the account view (issue 21)', function () {
  const httpNode = new HttpNode();
  let sim;
  let urls;
  const got = { out: [], events: [], caught: [] };
  const published = [];
  let scrape;
  let snap;

  before(async () => {
    sim = new Simulator({ deliveryDelaysMs: [100, 30, 30] });
    urls = await sim.start();
    await httpNode.start();
    const flow = [
      { id: 'f1', type: 'tab', label: 'metrics' },
      { id: 'cfg', type: 'kaleyra-config', name: ACCOUNT, ...urls, publicUrl: httpNode.url, timeout: 5 },
      { id: 'wa', type: 'kaleyra-whatsapp', z: 'f1', name: 'sender', account: 'cfg', reportTo: 'cb', wires: [['out']] },
      { id: 'out', type: 'helper', z: 'f1' },
      { id: 'cb', type: 'kaleyra-callback', z: 'f1', name: 'events in', account: 'cfg', path: '/m/events', wires: [['events']] },
      { id: 'events', type: 'helper', z: 'f1' },
      { id: 'c1', type: 'catch', z: 'f1', scope: null, uncaught: false, wires: [['caught']] },
      { id: 'caught', type: 'helper', z: 'f1' },
    ];
    // What the runtime publishes, from before the flows start (the account's first delta goes out at once).
    const listen = (RED) => {
      httpNode.capture(RED);
      RED.events.on('comms', (m) => m.topic === 'kaleyra/accounts' && published.push({ at: Date.now(), data: m.data, retain: m.retain }));
    };
    await helper.load(
      [catchNode, NODE_MODULES['kaleyra-config'], NODE_MODULES['kaleyra-whatsapp'], NODE_MODULES['kaleyra-callback'], listen],
      flow,
      { cfg: { apiKey: DEMO_KEY }, cb: { token: TOKEN } },
    );
    for (const id of Object.keys(got)) helper.getNode(id).on('input', (m) => got[id].push(m));

    for (const [i, to] of numbers.entries()) helper.getNode('wa').receive({ payload: `hello ${i}`, to, from: FROM, ref: `order-${i}` });
    for (let i = 0; i < M; i++) helper.getNode('wa').receive({ payload: { type: 'template', template: { language: 'en' } }, to: numbers[0], from: FROM, ref: `bad-${i}` });
    await until(() => got.out.length === N && got.caught.length === M, 'the sends to end');
    await until(() => got.events.length === 3 * N, 'SENT, DELIVERED and READ of each send', 30_000);
    // a stranger's callback (no token): refused
    assert.equal((await httpNode.fetch('/m/events?status=DELIVERED&mobile=919999999999')).status, 403);
    // the deltas catch up: one holds the run's final funnel (at most a second after the last event)
    await until(() => published.some((p) => p.data.funnel?.read === N && p.data.funnel?.failed === M), 'a delta with the final funnel', 10_000);
    const res = await httpNode.fetch('/kaleyra/metrics');
    assert.equal(res.status, 200);
    scrape = res.text;
    snap = JSON.parse((await httpNode.fetch('/kaleyra/accounts')).text);
  });
  after(async () => {
    await helper.unload();
    await sim.stop();
    await httpNode.stop();
  });

  it('the metrics parse as the exposition format and hold exactly the counts of the run', () => {
    const m = parseExposition(scrape);
    const a = { account: ACCOUNT };
    assert.equal(valueOf(m, 'kaleyra_requests_total', { ...a, interface: 'whatsapp', outcome: 'ok' }), N);
    assert.equal(m.kaleyra_requests_total.samples.length, 1, 'only the sends that passed their checks made a request');
    assert.equal(valueOf(m, 'kaleyra_request_duration_seconds', { ...a, interface: 'whatsapp' }, 'kaleyra_request_duration_seconds_count'), N);
    assert.equal(valueOf(m, 'kaleyra_sends_total', { ...a, outcome: 'sent' }), N);
    assert.equal(valueOf(m, 'kaleyra_sends_total', { ...a, outcome: 'failed' }), M);
    assert.equal(valueOf(m, 'kaleyra_send_failures_total', { ...a, code: 'E603' }), M);
    assert.equal(m.kaleyra_send_failures_total.samples.length, 1);
    for (const state of ['SENT', 'DELIVERED', 'READ']) assert.equal(valueOf(m, 'kaleyra_delivery_events_total', { ...a, state }), N, state);
    assert.equal(valueOf(m, 'kaleyra_time_to_delivered_seconds', a, 'kaleyra_time_to_delivered_seconds_count'), N);
    assert.equal(valueOf(m, 'kaleyra_listener_requests_total', { ...a, kind: 'callback', result: 'accepted' }), 3 * N);
    assert.equal(valueOf(m, 'kaleyra_listener_requests_total', { ...a, kind: 'callback', result: 'refused_token' }), 1);
    assert.equal(valueOf(m, 'kaleyra_listener_events_total', { ...a, result: 'correlated' }), 3 * N);
    assert.equal(valueOf(m, 'kaleyra_listener_events_total', { ...a, result: 'uncorrelated' }), 0);
    assert.deepEqual(
      ['kaleyra_queue_depth', 'kaleyra_in_flight', 'kaleyra_state_store_up', 'kaleyra_account_usable', 'kaleyra_rate_limited_seconds_total'].map((g) => valueOf(m, g, a)),
      [0, 0, 1, 1, 0],
    );
    assert.equal(m.kaleyra_requests_total.type, 'counter');
    assert.equal(m.kaleyra_time_to_delivered_seconds.type, 'histogram');
    assert.ok(!/^process_|^nodejs_/m.test(scrape), 'no default process metrics');
  });

  it("no label value holds a phone number, message id, ref, callback ref, token or the key of the run", () => {
    const values = labelValues(parseExposition(scrape));
    const ids = got.out.flatMap((m) => m.payload.map((p) => p.id));
    const krefs = sim.messages.map((m) => new URL(m.body.callback).searchParams.get('kref'));
    const secrets = [...numbers, ...numbers.map((n) => n.slice(-10)), FROM, ...ids, ...got.out.map((m) => m.ref), ...krefs, TOKEN, DEMO_KEY];
    assert.equal(ids.length, N);
    assert.equal(krefs.length, N);
    for (const v of values) for (const s of secrets) assert.ok(!v.includes(s), `label value ${JSON.stringify(v)} holds ${s}`);
    for (const s of secrets) assert.ok(!scrape.includes(s), `the scrape holds ${s}`);
  });

  it('the snapshot holds the funnel and the failures of the run, versions, settings without secrets', () => {
    assert.equal(snap.package.name, '@flowcomms/node-red-kaleyra');
    // (the test helper's RED has no version(); the process test below checks it in a whole Node-RED)
    if (snap.nodeRed !== undefined) assert.match(snap.nodeRed, /^\d+\.\d+/);
    assert.equal(snap.node, process.version);
    assert.equal(snap.accounts.length, 1);
    const v = snap.accounts[0];
    assert.deepEqual([v.id, v.name, v.mode, v.store, v.state, v.queued, v.inFlight], ['cfg', ACCOUNT, 'live', 'memory', 'ok', 0, 0]);
    assert.deepEqual({ ...v.funnel, deliveredMs: typeof v.funnel.deliveredMs.p95 }, { sent: N, delivered: N, read: N, failed: M, overdue: 0, deliveredMs: 'number' });
    assert.ok(v.funnel.deliveredMs.p50 <= v.funnel.deliveredMs.p95);
    assert.deepEqual(v.failures.byCode, { E603: M });
    assert.equal(v.failures.recent.length, M);
    for (const f of v.failures.recent) {
      assert.deepEqual([f.code, f.node, f.nodeName, typeof f.at], ['E603', 'wa', 'sender', 'number']);
      assert.match(f.message, /template/);
    }
    assert.equal(v.minutes.requests.whatsapp.length, 60);
    assert.equal(v.minutes.requests.whatsapp.reduce((x, y) => x + y), N);
    assert.equal(v.minutes.sends.failed.reduce((x, y) => x + y), M);
    assert.deepEqual(v.listeners, [{ node: 'cb', nodeName: 'events in', kind: 'callback', received: 3 * N, correlated: 3 * N, uncorrelated: 0, refused: { token: 1, tooLarge: 0, other: 0 } }]);
    assert.deepEqual(Object.keys(v.settings).sort(), ['concurrency', 'messagingUrl', 'obdUrl', 'publicUrl', 'queueSize', 'rateLimit', 'retries', 'timeout', 'vmnUrl', 'voiceUrl']);
    const text = JSON.stringify(snap);
    for (const s of [DEMO_KEY, TOKEN, ...numbers.map((n) => n.slice(-10))]) assert.ok(!text.includes(s), `the snapshot holds ${s}`);
  });

  it('deltas went out on kaleyra/accounts, not retained, at most one a second, the first the whole view, the last agreeing with the snapshot', async () => {
    // One more failure after the run's last delta went out: a change that must come in a delta of its own
    // (the run alone may fit in the first second, and so in one delta, on a fast machine or after an
    // account of the same id sent one just before).
    helper.getNode('wa').receive({ payload: { type: 'template', template: { language: 'en' } }, to: numbers[0], from: FROM, ref: 'bad-last' });
    await until(() => published.some((p) => p.data.id === 'cfg' && p.data.funnel?.failed === M + 1), 'a delta with the last failure', 10_000);
    const mine = published.filter((p) => p.data.id === 'cfg');
    assert.ok(mine.length >= 2, `${mine.length} deltas`);
    assert.equal(mine[0].data.name, ACCOUNT, 'the first is the whole view');
    assert.ok('settings' in mine[0].data && 'funnel' in mine[0].data);
    for (const p of mine) assert.equal(p.retain, false);
    // the rule, not a timing: consecutive deltas of one account are at least the interval apart
    for (let i = 1; i < mine.length; i++) assert.ok(mine[i].at - mine[i - 1].at >= feed.FEED_INTERVAL_MS - 1, `deltas ${i - 1} and ${i}: ${mine[i].at - mine[i - 1].at} ms apart`);
    for (const p of mine.slice(1)) assert.ok(!('settings' in p.data), 'later deltas hold only what changed');
    const funnels = mine.filter((p) => p.data.funnel).map((p) => p.data.funnel);
    assert.ok(funnels.some((f) => f.sent === N && f.read === N && f.failed === M), 'a delta agreeing with the snapshot');
    assert.ok(funnels.at(-1).sent === N && funnels.at(-1).failed === M + 1);
  });

  it('pacing on a clock the test moves: at most one delta a second per account, none when nothing changed; removal, and a redeploy without one', async () => {
    const clock = fakeTimers();
    const out = [];
    const RED = { comms: { publish: (topic, data, retain) => out.push({ at: Date.now(), topic, data, retain }) } };
    try {
      const a = new AccountMonitor({ id: 'pa', name: 'a', mode: 'live', store: 'memory', settings: {} });
      const b = new AccountMonitor({ id: 'pb', name: 'b', mode: 'live', store: 'memory', settings: {} });
      feed.attachMonitor(RED, a);
      feed.attachMonitor(RED, b);
      await clock.advance(0);
      assert.deepEqual(out.map((p) => [p.data.id, 'settings' in p.data]), [['pa', true], ['pb', true]]);
      // 10 s of events every 10 ms on a, every 500 ms on b
      for (let t = 1; t <= 1000; t++) {
        a.messageSent(1);
        if (t % 50 === 0) b.request('vmn', 5, 'ok');
        await clock.advance(10);
      }
      await clock.advance(2000);
      const of = (id) => out.filter((p) => p.data.id === id);
      for (const id of ['pa', 'pb']) {
        const list = of(id);
        assert.ok(list.length >= 10 && list.length <= 12, `${id}: ${list.length} deltas over 12 s`);
        for (let i = 1; i < list.length; i++) assert.ok(list[i].at - list[i - 1].at >= feed.FEED_INTERVAL_MS);
      }
      assert.equal(of('pa').at(-1).data.funnel.sent, 1000, 'the last delta holds the last count');
      const before = out.length;
      await clock.advance(5000);
      assert.equal(out.length, before, 'nothing changed: nothing sent');
      // a redeploy: the old one closes and a new one with the same id comes before the removal is due
      feed.detachMonitor(a);
      const a2 = new AccountMonitor({ id: 'pa', name: 'a again', mode: 'live', store: 'memory', settings: {} });
      feed.attachMonitor(RED, a2);
      feed.detachMonitor(b);
      await clock.advance(1000);
      assert.deepEqual(out.slice(before).map((p) => p.data.removed ?? p.data.name), ['a again', true]);
      assert.deepEqual(feed.monitors().map((m) => m.info.id).filter((id) => id.startsWith('p')), ['pa']);
      feed.detachMonitor(a2);
      await clock.advance(1000);
      assert.deepEqual(out.at(-1).data, { id: 'pa', removed: true });
      assert.ok(out.every((p) => p.topic === 'kaleyra/accounts' && p.retain === false));
      assert.equal(clock.pending, 0, 'no timer left once no account is deployed');
    } finally {
      clock.restore();
    }
  });

  it("the package's own registry: no default metrics in it", async () => {
    const names = registry.getMetricsAsArray().map((m) => m.name);
    assert.ok(names.every((n) => n.startsWith('kaleyra_')), names.join());
    assert.ok(names.length >= 15);
  });

  describe('with admin auth on (a whole Node-RED)', () => {
    const { NodeRedProcess } = require('./helpers/node-red-process');
    const { fromNodeRed } = require('./helpers/node-red');
    const bcrypt = fromNodeRed('bcryptjs');
    const PASSWORD = 'admin-password-2';
    let nr;
    before(async () => {
      nr = new NodeRedProcess({
        name: 'metrics-auth',
        flows: [{ id: 'acct', type: 'kaleyra-config', name: 'auth account', simulator: true }],
        settings: { adminAuth: { type: 'credentials', users: [{ username: 'admin', password: bcrypt.hashSync(PASSWORD, 8), permissions: 'read' }] } },
      });
      await nr.start();
    });
    after(async () => {
      await nr?.stop();
      nr?.cleanup();
    });

    it('both routes answer 401 without a token and with a wrong one; a read-only admin gets them', async () => {
      for (const path of ['/kaleyra/metrics', '/kaleyra/accounts']) {
        assert.equal((await nr.fetch(path)).status, 401, path);
        assert.equal((await nr.fetch(path, { headers: { authorization: 'Bearer not-a-token' } })).status, 401, path);
      }
      const login = await nr.fetch('/auth/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_id: 'node-red-admin', grant_type: 'password', scope: 'read', username: 'admin', password: PASSWORD }) });
      const auth = { authorization: `Bearer ${(await login.json()).access_token}` };
      const metrics = await nr.fetch('/kaleyra/metrics', { headers: auth });
      assert.equal(metrics.status, 200);
      assert.equal(metrics.headers.get('content-type'), registry.contentType);
      const m = parseExposition(await metrics.text());
      assert.deepEqual([valueOf(m, 'kaleyra_account_usable', { account: 'auth account' }), valueOf(m, 'kaleyra_state_store_up', { account: 'auth account' })], [1, 1]);
      const accounts = await nr.fetch('/kaleyra/accounts', { headers: auth });
      assert.equal(accounts.status, 200);
      const body = await accounts.json();
      assert.match(body.nodeRed, /^\d+\.\d+\.\d+/);
      assert.deepEqual(body.accounts.map((a) => [a.id, a.name, a.mode]), [['acct', 'auth account', 'simulator']]);
    });
  });
});

describe("node.metric(): Node-RED's own metrics log (issue 21)", () => {
  // Node.prototype.metric() asks the runtime's log whether metrics are logged (settings.logging.<logger>.metrics);
  // here the log says yes, and what the nodes log at the METRIC level is read from it.
  const { log } = require('./helpers/node-red').fromNodeRed('@node-red/util');
  let sim;
  let enabled;
  before(async () => {
    sim = new Simulator();
    const urls = await sim.start();
    enabled = log.metric;
    log.metric = () => true;
    await helper.load(
      [catchNode, NODE_MODULES['kaleyra-config'], NODE_MODULES['kaleyra-whatsapp']],
      [
        { id: 'f1', type: 'tab' },
        { id: 'cfg', type: 'kaleyra-config', ...urls, timeout: 5 },
        { id: 'wa', type: 'kaleyra-whatsapp', z: 'f1', account: 'cfg', wires: [['out']] },
        { id: 'out', type: 'helper', z: 'f1' },
        { id: 'c1', type: 'catch', z: 'f1', scope: null, uncaught: false, wires: [['caught']] },
        { id: 'caught', type: 'helper', z: 'f1' },
      ],
      { cfg: { apiKey: DEMO_KEY } },
    );
  });
  after(async () => {
    log.metric = enabled;
    await helper.unload();
    await sim.stop();
  });

  it('each msg logs kaleyra.sent or kaleyra.failed.<code>, and kaleyra.duration, with its _msgid', async () => {
    const done = { out: 0, caught: 0 };
    helper.getNode('out').on('input', () => done.out++);
    helper.getNode('caught').on('input', () => done.caught++);
    helper.getNode('wa').receive({ _msgid: 'm-ok', payload: 'hello', to: '919812345678', from: FROM });
    helper.getNode('wa').receive({ _msgid: 'm-bad', payload: { type: 'template', template: {} }, to: '919812345678', from: FROM });
    await until(() => done.out === 1 && done.caught === 1, 'both msgs to end');
    // Node-RED names a node's metric event node.<type>.<event>.
    const PREFIX = 'node.kaleyra-whatsapp.';
    const metrics = helper.log().args.map(([entry]) => entry).filter((e) => e && e.level === log.METRIC && e.event.startsWith(`${PREFIX}kaleyra.`));
    const of = (msgid) => metrics.filter((e) => e.msgid === msgid).map((e) => e.event.slice(PREFIX.length)).sort();
    assert.deepEqual(of('m-ok'), ['kaleyra.duration', 'kaleyra.sent']);
    assert.deepEqual(of('m-bad'), ['kaleyra.duration', 'kaleyra.failed.E603']);
    for (const e of metrics) assert.equal(e.nodeid, 'wa');
    const duration = metrics.find((e) => e.msgid === 'm-ok' && e.event === `${PREFIX}kaleyra.duration`);
    assert.ok(Number.isFinite(duration.value) && duration.value >= 0, JSON.stringify(duration));
  });
});
