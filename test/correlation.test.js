'use strict';
// Correlation of callbacks with what was sent: end to end through the real runtime (a kaleyra-whatsapp
// or kaleyra-click2call node "reporting to" a kaleyra-callback node, the built-in simulator over real HTTP
// calling the callback URL the node built), unit tests of the Correlator over an in-memory Store, and
// the correlation state surviving a restart in a localfilesystem context store.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const request = require('supertest');
const { helper, NODE_MODULES, catchNode } = require('./helpers/flow');
const { HttpNode, until } = require('./helpers/http-node');
const { Simulator, DEMO_KEY } = require('../dist/simulator');
const { Correlator, mobileKey, newRef } = require('../dist/core/correlation');
const { CALLBACK_VARIABLES } = require('../dist/core/click-to-call');

const TOKEN = 'tok123';
const CB_PATH = '/kaleyra/events';
const MODULES = [
  catchNode,
  NODE_MODULES['kaleyra-config'],
  NODE_MODULES['kaleyra-whatsapp'],
  NODE_MODULES['kaleyra-click2call'],
  NODE_MODULES['kaleyra-callback'],
];
const ONLY_SENT = '919812340000'; // the simulator sends SENT only to this number

describe('correlation of callbacks with sends', function () {
  describe('end to end through the runtime and the simulator', () => {
    const httpNode = new HttpNode();
    let sim;
    let urls;
    let t;

    before(async () => {
      // The SENT callback comes a little later than the simulator's default, so that the service's ids
      // (recorded when the send's response arrives) are in place before the first callback.
      sim = new Simulator({
        deliveryDelaysMs: [150, 30, 30],
        clickToCallTimingsMs: [150, 300],
        stopAtSent: (mobile) => mobile === ONLY_SENT,
      });
      urls = await sim.start();
      await httpNode.start();
    });
    after(async () => {
      await sim.stop();
      await httpNode.stop();
    });
    afterEach(async () => {
      await helper.unload();
      sim.clear();
    });

    function flow() {
      return [
        { id: 'f1', type: 'tab', label: 'correlation' },
        { id: 'cfg', type: 'kaleyra-config', name: 'sim', ...urls, publicUrl: httpNode.url, timeout: 5 },
        { id: 'wa', type: 'kaleyra-whatsapp', z: 'f1', account: 'cfg', reportTo: 'cb', wires: [['waout']] },
        { id: 'waout', type: 'helper', z: 'f1' },
        { id: 'c2c', type: 'kaleyra-click2call', z: 'f1', account: 'cfg', reportTo: 'cb', wires: [['c2cout']] },
        { id: 'c2cout', type: 'helper', z: 'f1' },
        { id: 'cb', type: 'kaleyra-callback', z: 'f1', path: CB_PATH, wires: [['events']] },
        { id: 'events', type: 'helper', z: 'f1' },
        { id: 'c1', type: 'catch', z: 'f1', scope: null, uncaught: false, wires: [['caught']] },
        { id: 'caught', type: 'helper', z: 'f1' },
      ];
    }

    /** Loads the flow and collects every helper node's messages. */
    async function load() {
      await helper.load([...MODULES, httpNode.capture], flow(), { cfg: { apiKey: DEMO_KEY }, cb: { token: TOKEN } });
      return collect();
    }
    function collect() {
      const got = { waout: [], c2cout: [], events: [], caught: [] };
      for (const id of Object.keys(got)) helper.getNode(id).on('input', (m) => got[id].push(m));
      return got;
    }

    /** Sends msg into node `id` and resolves to its output (rejects with the Catch message's error). */
    async function run(id, msg, outId) {
      const got = t;
      const before = { out: got[outId].length, caught: got.caught.length };
      helper.getNode(id).receive(msg);
      await until(() => got[outId].length > before.out || got.caught.length > before.caught, `an output of ${id}`);
      if (got.caught.length > before.caught) throw new Error(`${id} failed: ${JSON.stringify(got.caught.at(-1).error)}`);
      return got[outId].at(-1);
    }

    /** The callback URL the simulator received with the last message. */
    const lastCallbackUrl = () => sim.messages.at(-1).body.callback;

    it('delivery events name the message: id per recipient, the sender ref, state SENT -> DELIVERED -> READ', async () => {
      t = await load();
      const sent = await run('wa', { payload: 'hi', to: ['919812345678', '919812345679'], from: '918000000000', ref: 'order-42' }, 'waout');
      const idOf = Object.fromEntries(sent.payload.map((m) => [m.mobile, m.id]));
      assert.equal(Object.keys(idOf).length, 2);

      // The URL the node built: public URL + httpNodeRoot + path + token + correlation ref.
      const cbUrl = new URL(lastCallbackUrl());
      assert.equal(cbUrl.origin + cbUrl.pathname, httpNode.url + CB_PATH);
      assert.equal(cbUrl.searchParams.get('token'), TOKEN);
      assert.match(cbUrl.searchParams.get('kref'), /^[A-Za-z0-9]{12}$/);

      await until(() => t.events.length >= 6, 'six delivery events');
      const events = t.events.map((m) => m.payload);
      console.log('      correlated delivery events, in the order emitted:');
      for (const e of events) {
        console.log(`        ${JSON.stringify({ status: e.status, mobile: e.mobile, id: e.id, ref: e.ref, state: e.state, late: e.late })}`);
      }
      for (const [mobile, id] of Object.entries(idOf)) {
        const mine = events.filter((e) => e.mobile === mobile);
        assert.deepEqual(
          mine.map((e) => [e.status, e.state, e.late]),
          [
            ['SENT', 'SENT', false],
            ['DELIVERED', 'DELIVERED', false],
            ['READ', 'READ', false],
          ],
        );
        for (const e of mine) {
          assert.equal(e.event, 'delivery');
          assert.equal(e.id, id, `the service's message id for ${mobile}`);
          assert.equal(e.ref, 'order-42');
          assert.equal(typeof e.timestamp, 'number');
          assert.ok(!('kref' in e) && !('token' in e));
        }
      }
      // Every callback the simulator made was answered 200.
      assert.deepEqual([...new Set(sim.callbacks.map((c) => c.statusCode))], [200]);
      assert.equal(t.caught.length, 0);
    });

    it('out of order: READ then SENT for one recipient; the late SENT says state READ, late true', async () => {
      t = await load();
      const sent = await run('wa', { payload: 'hi', to: ONLY_SENT, from: '918000000000', ref: 'order-43' }, 'waout');
      const id = sent.payload[0].id;
      await until(() => t.events.length >= 1, 'the simulator SENT event');
      assert.deepEqual(
        [t.events[0].payload.status, t.events[0].payload.state, t.events[0].payload.late, t.events[0].payload.id],
        ['SENT', 'SENT', false, id],
      );
      const url = new URL(lastCallbackUrl());
      const drive = (status, mobile = ONLY_SENT) => {
        const u = new URL(url);
        for (const [k, v] of Object.entries({ status, mobile, timestamp: '1700000000' })) u.searchParams.set(k, v);
        return request(httpNode.app).get(u.pathname + u.search).expect(200);
      };
      await drive('READ');
      await until(() => t.events.length >= 2, 'the READ event');
      await drive('SENT', `+${ONLY_SENT}`); // the same recipient written with a +
      await until(() => t.events.length >= 3, 'the late SENT event');
      await drive('DELIVERED');
      await until(() => t.events.length >= 4, 'the late DELIVERED event');
      const [, read, lateSent, lateDelivered] = t.events.map((m) => m.payload);
      assert.deepEqual([read.status, read.state, read.late, read.id, read.ref], ['READ', 'READ', false, id, 'order-43']);
      assert.deepEqual([lateSent.status, lateSent.state, lateSent.late, lateSent.id, lateSent.ref], ['SENT', 'READ', true, id, 'order-43']);
      assert.deepEqual([lateDelivered.status, lateDelivered.state, lateDelivered.late], ['DELIVERED', 'READ', true]);
    });

    it('an unknown kref: the event is emitted uncorrelated (no id, ref, state or late)', async () => {
      t = await load();
      const u = new URL(`${httpNode.url}${CB_PATH}`);
      for (const [k, v] of Object.entries({ token: TOKEN, kref: newRef(), status: 'DELIVERED', mobile: '919812345678', timestamp: '1700000000' })) {
        u.searchParams.set(k, v);
      }
      const res = await httpNode.fetch(u.pathname + u.search);
      assert.equal(res.status, 200);
      await until(() => t.events.length >= 1, 'the event');
      const e = t.events[0].payload;
      assert.deepEqual(e, { event: 'delivery', status: 'DELIVERED', mobile: '919812345678', timestamp: 1700000000, time: '2023-11-14T22:13:20.000Z' });
    });

    it('a send that fails forgets its ref (nothing new left in the callback node context)', async () => {
      t = await load();
      const refs = () =>
        new Promise((resolve, reject) => helper.getNode('cb').context().keys((err, k) => (err ? reject(err) : resolve(k.filter((x) => x.startsWith('kaleyra_ref_')).sort()))));
      await helper.getNode('cb').correlator.prune(); // its store answers once records carried over from earlier tests are back
      const before = await refs();
      helper.getNode('wa').receive({ payload: 'hi', to: 'not-a-number', from: '918000000000', ref: 'bad' });
      await until(() => t.caught.length >= 1, 'the Catch message');
      assert.deepEqual(await refs(), before);
      assert.equal(sim.messages.length, 0);
    });

    it('a redeploy of the callback node keeps the correlation of messages sent before it', async () => {
      t = await load();
      const sent = await run('wa', { payload: 'hi', to: ONLY_SENT, from: '918000000000', ref: 'order-44' }, 'waout');
      await until(() => t.events.length >= 1, 'the SENT event');
      const url = new URL(lastCallbackUrl());
      // Full deploy: every node stops (Node-RED then deletes their memory context) and starts again.
      await helper.setFlows(flow(), 'full', { cfg: { apiKey: DEMO_KEY }, cb: { token: TOKEN } });
      t = collect();
      url.searchParams.set('status', 'DELIVERED');
      url.searchParams.set('mobile', ONLY_SENT);
      url.searchParams.set('timestamp', '1700000000');
      await request(httpNode.app).get(url.pathname + url.search).expect(200);
      await until(() => t.events.length >= 1, 'the DELIVERED event');
      const e = t.events[0].payload;
      assert.deepEqual([e.id, e.ref, e.state, e.late], [sent.payload[0].id, 'order-44', 'DELIVERED', false]);
    });

    it('click-to-call: the node builds a URL with every {variable}, token and kref; events carry the call id, ref and custom', async () => {
      t = await load();
      const out = await run('c2c', { payload: { caller: '9812345678', receiver: '9812345679', custom: 'ticket7' }, ref: 'call-ref-1' }, 'c2cout');
      const callId = out.payload.id;
      assert.match(callId, /^c2c_/);
      const received = sim.requests.filter((r) => r.endpoint === 'voice').at(-1);
      const callback = received.fields.callback ?? received.query.callback;
      assert.ok(callback, 'the request carried a callback');
      for (const name of CALLBACK_VARIABLES) assert.ok(callback.includes(`${name}={${name}}`), `{${name}} in ${callback}`);
      const cb = new URL(callback);
      assert.equal(cb.origin + cb.pathname, httpNode.url + CB_PATH);
      assert.equal(cb.searchParams.get('token'), TOKEN);
      assert.match(cb.searchParams.get('kref'), /^[A-Za-z0-9]{12}$/);

      // First-leg answer, then the end of the call.
      await until(() => t.events.length >= 2, 'two call events');
      const [answered, ended] = t.events.map((m) => m.payload);
      console.log('      correlated call events:');
      for (const e of [answered, ended]) {
        console.log(`        ${JSON.stringify({ status: e.status, status1: e.status1, status2: e.status2, duration: e.duration, id: e.id, ref: e.ref, custom: e.custom })}`);
      }
      for (const e of [answered, ended]) {
        assert.equal(e.event, 'call');
        assert.equal(e.id, callId);
        assert.equal(e.ref, 'call-ref-1');
        assert.equal(e.custom, 'ticket7');
        assert.equal(e.caller, '9812345678');
        assert.equal(e.receiver, '9812345679');
        assert.equal(typeof e.starttime, 'number');
        assert.ok(!('kref' in e) && !('token' in e));
      }
      assert.equal(answered.endtime, null);
      assert.equal(answered.billsec, null);
      assert.equal(typeof ended.endtime, 'number');
      assert.equal(typeof ended.duration, 'number');
      assert.equal(typeof ended.billsec, 'number');
      assert.ok(ended.endTime);
    });
  });

  describe('the state survives a restart (localfilesystem context store)', () => {
    const httpNode = new HttpNode();
    let sim;
    let urls;
    let dir;

    before(async () => {
      sim = new Simulator({ deliveryDelaysMs: [150, 30, 30], stopAtSent: () => true });
      urls = await sim.start();
      await httpNode.start();
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kaleyra-ctx-'));
    });
    after(async () => {
      helper.settings({});
      await sim.stop();
      await httpNode.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const flow = () => [
      { id: 'f1', type: 'tab', label: 'restart' },
      { id: 'cfg', type: 'kaleyra-config', name: 'sim', ...urls, publicUrl: httpNode.url, timeout: 5 },
      { id: 'wa', type: 'kaleyra-whatsapp', z: 'f1', account: 'cfg', reportTo: 'cb', wires: [['waout']] },
      { id: 'waout', type: 'helper', z: 'f1' },
      { id: 'cb', type: 'kaleyra-callback', z: 'f1', path: CB_PATH, wires: [['events']] },
      { id: 'events', type: 'helper', z: 'f1' },
    ];

    /**
     * Starts the flows with the localfilesystem store. The test helper takes the contextStorage setting
     * but never opens configured stores (the runtime's start does, before the flows), so the runtime's
     * own context.load() is called here, right after; the nodes look their store up on each use.
     */
    async function start() {
      helper.settings({ contextStorage: { default: { module: 'localfilesystem', config: { dir, flushInterval: 30 } } } });
      await helper.load([...MODULES, httpNode.capture], flow(), { cfg: { apiKey: DEMO_KEY }, cb: { token: TOKEN } });
      await helper._context.load();
      const got = { waout: [], events: [] };
      for (const id of Object.keys(got)) helper.getNode(id).on('input', (m) => got[id].push(m));
      return got;
    }
    /**
     * Stops as the runtime's stop() does: flows stopped, then the context stores flushed and closed.
     * helper.unload() also "cleans" every store of all nodes' context (as a deploy removing every node
     * would, which deletes the files), so it only runs once the store has been swapped for a fresh memory one.
     */
    async function stop() {
      await helper._redNodes.stopFlows();
      await helper._context.close();
      helper._context.init(helper.settings());
      await helper.unload();
    }

    it('a callback after a restart is correlated from the file store, and its state does not go back', async () => {
      let got = await start();
      helper.getNode('wa').receive({ payload: 'hi', to: '919812345678', from: '918000000000', ref: { order: 42 } });
      await until(() => got.waout.length >= 1, 'the send');
      const id = got.waout[0].payload[0].id;
      await until(() => got.events.length >= 1, 'the SENT event');
      assert.deepEqual([got.events[0].payload.id, got.events[0].payload.state], [id, 'SENT']);
      const url = new URL(sim.messages.at(-1).body.callback);
      await stop();

      // The record is on disk. It is moved on to READ there, so the answers below can only come from
      // the file (the process still holds the SENT state it carries over redeploys).
      const file = path.join(dir, 'context', 'f1', 'cb.json');
      const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
      const key = `kaleyra_ref_${url.searchParams.get('kref')}`;
      assert.deepEqual(saved[key].ids, { 9812345678: id });
      assert.deepEqual(saved[key].states, { 9812345678: 'SENT' });
      saved[key].states['9812345678'] = 'READ';
      fs.writeFileSync(file, JSON.stringify(saved));

      got = await start();
      const drive = async (status) => {
        url.searchParams.set('status', status);
        url.searchParams.set('mobile', '919812345678');
        url.searchParams.set('timestamp', '1700000000');
        const res = await httpNode.fetch(url.pathname + url.search);
        assert.equal(res.status, 200);
      };
      await drive('DELIVERED');
      await until(() => got.events.length >= 1, 'the DELIVERED event');
      const [delivered] = got.events.map((m) => m.payload);
      assert.deepEqual([delivered.id, delivered.ref, delivered.state, delivered.late], [id, { order: 42 }, 'READ', true]);
      await stop();
    });
  });

  describe('Correlator over an in-memory Store', () => {
    /** An asynchronous store that copies values in and out, as a persistent one does. */
    class MemoryStore {
      constructor() {
        this.map = new Map();
        this.ops = 0;
      }
      async pause() {
        // Vary the interleaving: a few turns of the event loop per operation.
        for (let i = 0; i < ++this.ops % 3; i++) await new Promise((r) => setImmediate(r));
      }
      async get(key) {
        await this.pause();
        return this.map.has(key) ? structuredClone(this.map.get(key)) : undefined;
      }
      async set(key, value) {
        await this.pause();
        if (value === undefined) this.map.delete(key);
        else this.map.set(key, structuredClone(value));
      }
      async keys() {
        await this.pause();
        return [...this.map.keys()];
      }
    }

    const withClock = async (offsetMs, fn) => {
      const real = Date.now;
      Date.now = () => real() + offsetMs;
      try {
        return await fn();
      } finally {
        Date.now = real;
      }
    };

    it('mobileKey: +, 00, the country code, spaces and dashes all name the same recipient', () => {
      for (const m of ['919812345678', '+919812345678', '00919812345678', '9812345678', '+91 98123-45678', '0919812345678']) {
        assert.equal(mobileKey(m), '9812345678', m);
      }
      assert.equal(mobileKey('12345'), '12345');
      assert.notEqual(mobileKey('919812345678'), mobileKey('919812345679'));
    });

    it('matches ids and states across the ways a number is written', async () => {
      const c = new Correlator(new MemoryStore());
      const ref = newRef();
      await c.track(ref, 'message', 'r1');
      await c.identified(ref, { '919812345678': 'id-1' });
      const a = await c.delivery(ref, '+919812345678', 'SENT');
      const b = await c.delivery(ref, '009198 1234 5678', 'DELIVERED');
      const d = await c.delivery(ref, '9812345678', 'SENT');
      assert.deepEqual(a, { id: 'id-1', userRef: 'r1', state: 'SENT', late: false, known: true });
      assert.deepEqual(b, { id: 'id-1', userRef: 'r1', state: 'DELIVERED', late: false, known: true });
      assert.deepEqual(d, { id: 'id-1', userRef: 'r1', state: 'DELIVERED', late: true, known: true });
    });

    it('concurrent updates of one ref lose nothing: every id and every furthest state is kept', async () => {
      const store = new MemoryStore();
      const c = new Correlator(store);
      const ref = newRef();
      await c.track(ref, 'message', 'bulk');
      const mobiles = Array.from({ length: 60 }, (_, i) => `9198${String(10000000 + i)}`);
      const ops = [];
      for (const [i, m] of mobiles.entries()) {
        ops.push(() => c.identified(ref, { [m]: `id-${i}` }));
        for (const s of ['SENT', 'DELIVERED', 'READ', 'FAILED']) ops.push(() => c.delivery(ref, m, s));
      }
      // A fixed shuffle, all started at once.
      const order = ops.map((op, i) => [(i * 7919) % ops.length, op]).sort((x, y) => x[0] - y[0]);
      const results = await Promise.all(order.map(([, op]) => op()));
      assert.equal(results.length, ops.length);
      const rec = store.map.get(`kaleyra_ref_${ref}`);
      for (const [i, m] of mobiles.entries()) {
        assert.equal(rec.ids[mobileKey(m)], `id-${i}`, `id of ${m}`);
        assert.equal(rec.states[mobileKey(m)], 'READ', `state of ${m}`);
      }
      // And afterwards every recipient answers READ with its id.
      for (const [i, m] of mobiles.entries()) {
        assert.deepEqual(await c.delivery(ref, m, 'SENT'), { id: `id-${i}`, userRef: 'bulk', state: 'READ', late: true, known: true });
      }
    });

    it('two Correlators over the same store (a restart) see what the first recorded', async () => {
      const store = new MemoryStore();
      const ref = newRef();
      const first = new Correlator(store);
      await first.track(ref, 'call', 'call-ref', 'ticket-9');
      await first.identified(ref, { call: 'c2c_abc' });
      const second = new Correlator(store);
      assert.deepEqual(await second.call(ref), { id: 'c2c_abc', userRef: 'call-ref', custom: 'ticket-9', known: true });
      assert.deepEqual(await second.call('unknown'), { known: false });
    });

    it('unknown, forgotten and expired refs are not correlated', async () => {
      const store = new MemoryStore();
      const c = new Correlator(store, 1000, 10); // no answer comes here: callbacks wait 10 ms for it
      const ref = newRef();
      assert.deepEqual(await c.delivery(ref, '919812345678', 'READ'), { state: 'READ', late: false, known: false });
      await c.track(ref, 'message');
      assert.equal((await c.delivery(ref, '919812345678', 'SENT')).known, true);
      await withClock(2000, async () => {
        assert.deepEqual(await c.delivery(ref, '919812345678', 'DELIVERED'), { state: 'DELIVERED', late: false, known: false });
        assert.deepEqual(await c.call(ref), { known: false });
        await c.identified(ref, { '919812345678': 'late-id' }); // no effect on an expired record
      });
      const other = newRef();
      await c.track(other, 'message', 'x');
      await c.forget(other);
      assert.equal((await c.delivery(other, '919812345678', 'SENT')).known, false);
      assert.equal(store.map.has(`kaleyra_ref_${other}`), false);
    });

    it('a callback that overtakes its send\'s answer waits for it, and then names the message or call', async () => {
      const c = new Correlator(new MemoryStore());
      const ref = newRef();
      await c.track(ref, 'message', 'early');
      let settled = false;
      const sent = c.delivery(ref, '+919812345678', 'SENT').finally(() => (settled = true));
      const delivered = c.delivery(ref, '919812345678', 'DELIVERED');
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(settled, false, 'the callback waits for the answer');
      await c.identified(ref, { '919812345678': 'id-early' });
      assert.deepEqual(await sent, { id: 'id-early', userRef: 'early', state: 'SENT', late: false, known: true });
      assert.deepEqual(await delivered, { id: 'id-early', userRef: 'early', state: 'DELIVERED', late: false, known: true }, 'in their order');

      const call = newRef();
      await c.track(call, 'call', 'ring', 'ticket7');
      const event = c.call(call);
      await c.identified(call, { call: 'c2c_early' });
      assert.deepEqual(await event, { id: 'c2c_early', userRef: 'ring', custom: 'ticket7', known: true });
    });

    it('a callback of a send that then failed is not correlated; a send never answered holds callbacks only answerWaitMs', async () => {
      const c = new Correlator(new MemoryStore(), undefined, 200);
      const failed = newRef();
      await c.track(failed, 'message');
      const event = c.delivery(failed, '919812345678', 'SENT');
      await c.forget(failed);
      assert.equal((await event).known, false);

      const silent = newRef();
      await c.track(silent, 'message', 'lost');
      const t0 = Date.now();
      const first = await c.delivery(silent, '919812345678', 'SENT');
      const waited = Date.now() - t0;
      assert.ok(waited >= 190, `waited ${waited} ms`);
      assert.deepEqual(first, { id: undefined, userRef: 'lost', state: 'SENT', late: false, known: true });
      const t1 = Date.now();
      await c.delivery(silent, '919812345678', 'DELIVERED');
      assert.ok(Date.now() - t1 < 150, 'a later callback does not wait again');

      // A send that never ended and no callback came for: prune lets go of it (the map stays bounded).
      const stuck = newRef();
      await c.track(stuck, 'message');
      await withClock(1000, () => c.prune());
      const t2 = Date.now();
      await c.delivery(stuck, '919812345678', 'SENT');
      assert.ok(Date.now() - t2 < 150, 'no wait after prune');
    });

    it('an unknown status sits between SENT and DELIVERED', async () => {
      const c = new Correlator(new MemoryStore());
      const ref = newRef();
      await c.track(ref, 'message');
      await c.identified(ref, {});
      const seq = [];
      for (const s of ['SENT', 'FAILED', 'SENT', 'DELIVERED', 'FAILED', 'READ']) {
        const r = await c.delivery(ref, '919812345678', s);
        seq.push(`${s}:${r.state}:${r.late}`);
      }
      assert.deepEqual(seq, ['SENT:SENT:false', 'FAILED:FAILED:false', 'SENT:FAILED:true', 'DELIVERED:DELIVERED:false', 'FAILED:DELIVERED:true', 'READ:READ:false']);
    });

    it('prune removes expired records only, and leaves other keys alone', async () => {
      const store = new MemoryStore();
      const c = new Correlator(store, 1000);
      await store.set('unrelated', 1);
      const old = newRef();
      await c.track(old, 'message');
      await withClock(5000, async () => {
        const fresh = newRef();
        await c.track(fresh, 'message');
        await c.prune();
        assert.deepEqual([...store.map.keys()].sort(), [`kaleyra_ref_${fresh}`, 'unrelated'].sort());
      });
    });

    it('prunes by itself every 200 tracked sends, so the store stays bounded', async () => {
      const store = new MemoryStore();
      const c = new Correlator(store, 1000);
      for (let i = 0; i < 150; i++) await c.track(`old${i}`, 'message');
      await withClock(5000, async () => {
        for (let i = 0; i < 50; i++) await c.track(`new${i}`, 'message');
      });
      const keys = [...store.map.keys()];
      assert.equal(keys.filter((k) => k.startsWith('kaleyra_ref_old')).length, 0, 'expired records pruned');
      assert.equal(keys.filter((k) => k.startsWith('kaleyra_ref_new')).length, 50);
    });

    it('newRef: URL-safe, no - or _, unique', () => {
      const refs = new Set(Array.from({ length: 1000 }, newRef));
      assert.equal(refs.size, 1000);
      for (const r of refs) assert.match(r, /^[A-Za-z0-9]{12}$/);
    });
  });
});
