'use strict';
// Correlation of callbacks with what was sent: end to end through the real runtime (a kaleyra-whatsapp
// or kaleyra-click2call node "reporting to" a kaleyra-callback node, the built-in simulator over real HTTP
// calling the callback URL the node built), and unit tests of the Correlator over a state store, alone
// and shared by two replicas.
const assert = require('node:assert/strict');
const request = require('supertest');
const { helper, setFlows, NODE_MODULES, catchNode } = require('./helpers/flow');
const { HttpNode, until } = require('./helpers/http-node');
const { Simulator, DEMO_KEY } = require('../dist/simulator');
const { Correlator, mobileKey, newRef } = require('../dist/core/correlation');
const { MemoryStore } = require('../dist/core/state-store');
const { SlowStore } = require('./helpers/slow-store');
const { withClock, fakeTimers, settle } = require('./helpers/clock');
const { CALLBACK_VARIABLES } = require('../dist/core/click-to-call');

/** A delivery correlation without its sentAt, which must be a time once the send's ids are known. */
function sansSentAt(r) {
  const { sentAt, ...rest } = r;
  if (r.id !== undefined) assert.ok(Number.isSafeInteger(sentAt) && sentAt > 0, `sentAt of ${r.id}: ${sentAt}`);
  return rest;
}

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

/** A copy of `list` in a fixed random order: Fisher–Yates driven by a seeded generator (mulberry32). */
function shuffled(list, seed) {
  let a = seed >>> 0;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

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
    /** Calls a send's callback URL back as the service does: with a status, a mobile and a timestamp. */
    const callBack = (url, status, mobile) => {
      const u = new URL(url);
      for (const [k, v] of Object.entries({ status, mobile, timestamp: '1700000000' })) u.searchParams.set(k, v);
      return request(httpNode.app).get(u.pathname + u.search).expect(200);
    };

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
      const url = lastCallbackUrl();
      const drive = (status, mobile = ONLY_SENT) => callBack(url, status, mobile);
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

    it('a send that fails forgets its ref: a callback with it comes uncorrelated', async () => {
      t = await load();
      sim.setFaults('messaging', { errorRate: 1, seed: 3 }); // every send answered HTTP 500 or 503
      helper.getNode('wa').receive({ payload: 'hi', to: '919812345678', from: '918000000000', ref: 'bad' });
      await until(() => t.caught.length >= 1, 'the Catch message');
      sim.setFaults('messaging', { errorRate: 0 });
      await callBack(JSON.parse(sim.requests.at(-1).fields.body).callback, 'SENT', '919812345678');
      await until(() => t.events.length >= 1, 'the event');
      assert.deepEqual([t.events[0].payload.id, t.events[0].payload.ref], [undefined, undefined]);
    });

    it('a redeploy of the callback node keeps the correlation of messages sent before it', async () => {
      t = await load();
      const sent = await run('wa', { payload: 'hi', to: ONLY_SENT, from: '918000000000', ref: 'order-44' }, 'waout');
      await until(() => t.events.length >= 1, 'the SENT event');
      const url = lastCallbackUrl();
      // Full deploy: every node stops (Node-RED then deletes their memory context) and starts again.
      await setFlows(flow(), 'full', { cfg: { apiKey: DEMO_KEY }, cb: { token: TOKEN } });
      t = collect();
      await callBack(url, 'DELIVERED', ONLY_SENT);
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

  describe('Correlator over a state store', () => {
    /** The memory store, asynchronous and copying values in and out as a shared one (Redis) does. */
    const store = () => new SlowStore(new MemoryStore());

    it('mobileKey: +, 00, the country code, spaces and dashes all name the same recipient', () => {
      for (const m of ['919812345678', '+919812345678', '00919812345678', '9812345678', '+91 98123-45678', '0919812345678']) {
        assert.equal(mobileKey(m), '9812345678', m);
      }
      assert.equal(mobileKey('12345'), '12345');
      assert.notEqual(mobileKey('919812345678'), mobileKey('919812345679'));
    });

    it('matches ids and states across the ways a number is written', async () => {
      const c = new Correlator(store());
      const ref = newRef();
      await c.track(ref, 'message', 'r1');
      await c.identified(ref, { '919812345678': 'id-1' });
      const a = await c.delivery(ref, '+919812345678', 'SENT');
      const b = await c.delivery(ref, '009198 1234 5678', 'DELIVERED');
      const d = await c.delivery(ref, '9812345678', 'SENT');
      assert.deepEqual(sansSentAt(a), { id: 'id-1', userRef: 'r1', state: 'SENT', late: false, known: true });
      assert.deepEqual(sansSentAt(b), { id: 'id-1', userRef: 'r1', state: 'DELIVERED', late: false, known: true });
      assert.deepEqual(sansSentAt(d), { id: 'id-1', userRef: 'r1', state: 'DELIVERED', late: true, known: true });
    });

    it('concurrent updates of one ref, at several replicas at once, lose nothing: every id and every furthest state is kept', async () => {
      // One Correlator applies the callbacks of one ref one at a time (in arrival order), so within one
      // process the store's advance never runs twice at once for a key. Replicas do run it at once: the
      // callbacks go to four Correlators on one store, and only an atomic advance keeps the furthest state.
      const shared = store();
      const replicas = Array.from({ length: 4 }, () => new Correlator(shared));
      const ref = newRef();
      await replicas[0].track(ref, 'message', 'bulk');
      const mobiles = Array.from({ length: 60 }, (_, i) => `9198${String(10000000 + i)}`);
      await replicas[0].identified(ref, Object.fromEntries(mobiles.map((m, i) => [m, `id-${i}`])));
      const updates = mobiles.flatMap((mobile) => ['SENT', 'DELIVERED', 'READ', 'FAILED'].map((status) => ({ mobile, status })));
      // A fixed shuffle, all started at once: the order differs from one recipient to the next.
      const order = shuffled(updates, 42);
      const positions = (m) => order.filter((u) => u.mobile === m).map((u) => u.status).join(' ');
      const orders = new Set(mobiles.map(positions));
      assert.ok(orders.size >= 10, `the shuffle mixes each recipient's states differently (${orders.size} orders)`);
      assert.ok(mobiles.some((m) => /READ.*SENT/.test(positions(m))) && mobiles.some((m) => /SENT.*READ/.test(positions(m))), 'READ comes before SENT for some, after it for others');
      const results = await Promise.all(order.map(({ mobile, status }, i) => replicas[i % replicas.length].delivery(ref, mobile, status)));
      assert.equal(results.length, updates.length);
      // Afterwards every recipient answers READ with its id, at every replica.
      for (const c of replicas) {
        for (const [i, m] of mobiles.entries()) {
          assert.deepEqual(sansSentAt(await c.delivery(ref, m, 'SENT')), { id: `id-${i}`, userRef: 'bulk', state: 'READ', late: true, known: true }, m);
        }
      }
    });

    it('two replicas (two Correlators on one store): the state moves forward whichever receives the callback', async () => {
      const shared = store();
      const a = new Correlator(shared);
      const b = new Correlator(shared);
      const ref = newRef();
      await a.track(ref, 'message', 'r');
      await a.identified(ref, { '919812345678': 'id-x' });
      const results = await Promise.all(['READ', 'SENT', 'DELIVERED', 'SENT'].map((s, i) => (i % 2 ? a : b).delivery(ref, '919812345678', s)));
      assert.deepEqual(sansSentAt(results[0]), { id: 'id-x', userRef: 'r', state: 'READ', late: false, known: true });
      for (const r of results) assert.ok(r.state === 'READ' || !r.late, `a state never goes back: ${JSON.stringify(r)}`);
      for (const c of [a, b]) assert.deepEqual(sansSentAt(await c.delivery(ref, '+919812345678', 'DELIVERED')), { id: 'id-x', userRef: 'r', state: 'READ', late: true, known: true });
    });

    it('two Correlators over the same store (a restart) see what the first recorded', async () => {
      const shared = store();
      const ref = newRef();
      const first = new Correlator(shared);
      await first.track(ref, 'call', 'call-ref', 'ticket-9');
      await first.identified(ref, { call: 'c2c_abc' });
      const second = new Correlator(shared);
      assert.deepEqual(await second.call(ref), { id: 'c2c_abc', userRef: 'call-ref', custom: 'ticket-9', known: true });
      assert.deepEqual(await second.call('unknown'), { known: false });
    });

    it('unknown, forgotten and expired refs are not correlated', async () => {
      const shared = store();
      const c = new Correlator(shared, { ttlMs: 1000, answerWaitMs: 10 }); // no answer comes here: callbacks wait 10 ms for it
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
      assert.equal(await shared.get(`r:${other}`), undefined);
    });

    it('a callback that overtakes its send\'s answer waits for it, and then names the message or call', async () => {
      const c = new Correlator(store());
      const ref = newRef();
      await c.track(ref, 'message', 'early');
      let settled = false;
      const sent = c.delivery(ref, '+919812345678', 'SENT').finally(() => (settled = true));
      const delivered = c.delivery(ref, '919812345678', 'DELIVERED');
      // Every step it could take without the answer (store reads a few event-loop turns each) is taken.
      await settle();
      assert.equal(settled, false, 'the callback waits for the answer');
      await c.identified(ref, { '919812345678': 'id-early' });
      assert.deepEqual(sansSentAt(await sent), { id: 'id-early', userRef: 'early', state: 'SENT', late: false, known: true });
      assert.deepEqual(sansSentAt(await delivered), { id: 'id-early', userRef: 'early', state: 'DELIVERED', late: false, known: true }, 'in their order');

      const call = newRef();
      await c.track(call, 'call', 'ring', 'ticket7');
      const event = c.call(call);
      await c.identified(call, { call: 'c2c_early' });
      assert.deepEqual(await event, { id: 'c2c_early', userRef: 'ring', custom: 'ticket7', known: true });
    });

    // The waits below are measured on a clock the test moves (test/helpers/clock.js): how long a callback is
    // held is a count of simulated milliseconds, not what a busy machine makes of a real timer.
    describe('on a clock the test moves', () => {
      let clock;
      beforeEach(() => (clock = fakeTimers()));
      afterEach(() => clock.restore());
      const pending = Symbol('pending');
      /** A box holding what `promise` has settled to so far, or `pending`. */
      const track = (promise) => {
        const box = { value: pending };
        promise.then((v) => (box.value = v), (e) => (box.value = e));
        return box;
      };
      /**
       * A send (tracked by `sender`) never answered: a callback 50 ms after it started, at `receiver`, is
       * held until answerWaitMs after the start, then let go without an id. Resolves the send's ref.
       */
      async function heldForTheAnswer(sender, receiver, answerWaitMs, userRef) {
        const ref = newRef();
        await sender.track(ref, 'message', userRef);
        await clock.advance(50); // the callback comes 50 ms after the send started
        const r = track(receiver.delivery(ref, '919812345678', 'SENT'));
        await clock.advance(answerWaitMs - 51);
        assert.equal(r.value, pending, 'held while answerWaitMs has not passed since the send started');
        await clock.advance(1);
        assert.deepEqual(sansSentAt(r.value), { id: undefined, userRef, state: 'SENT', late: false, known: true }, 'let go answerWaitMs after the send started');
        return ref;
      }

      it('a callback of a send that then failed is not correlated; a send never answered holds callbacks answerWaitMs from the send, and only once', async () => {
        const c = new Correlator(store(), { answerWaitMs: 200 });
        const failed = newRef();
        await c.track(failed, 'message');
        const event = track(c.delivery(failed, '919812345678', 'SENT'));
        await c.forget(failed);
        await clock.advance(1000); // a shared store's record may be written late: the callback looks again, for a moment
        assert.equal(event.value.known, false);

        const silent = await heldForTheAnswer(c, c, 200, 'lost');
        const later = track(c.delivery(silent, '919812345678', 'DELIVERED'));
        await clock.advance(0);
        assert.notEqual(later.value, pending, 'a later callback does not wait again');
        assert.equal(later.value.state, 'DELIVERED');
      });

      it("a callback at another replica than its send waits for the send's answer there too, at most answerWaitMs", async () => {
        const shared = store();
        const sender = new Correlator(shared, { answerWaitMs: 400 });
        const receiver = new Correlator(shared, { answerWaitMs: 400 });
        const ref = newRef();
        await sender.track(ref, 'message', 'remote');
        const early = track(receiver.delivery(ref, '919812345678', 'SENT'));
        await clock.advance(60);
        assert.equal(early.value, pending, 'the callback waits for the answer at the other replica');
        await sender.identified(ref, { '919812345678': 'id-remote' });
        await clock.advance(340);
        assert.deepEqual(sansSentAt(early.value), { id: 'id-remote', userRef: 'remote', state: 'SENT', late: false, known: true });

        await heldForTheAnswer(sender, receiver, 400, 'never');
      });

      it('on a shared store the record is written while the request goes out: a callback at another replica that comes first looks again, for a moment', async () => {
        const shared = store();
        const sender = new Correlator(shared);
        const receiver = new Correlator(shared);
        const ref = newRef();
        const early = track(receiver.delivery(ref, '919812345678', 'SENT')); // before the record exists
        await clock.settle();
        assert.equal(early.value, pending, 'it looks again rather than give up at once');
        await sender.track(ref, 'message', 'written-late');
        await sender.identified(ref, { '919812345678': 'id-late' });
        await clock.advance(1000);
        assert.deepEqual(sansSentAt(early.value), { id: 'id-late', userRef: 'written-late', state: 'SENT', late: false, known: true });
        // A ref no one records is given up after that moment (under a second), uncorrelated.
        const unknown = track(receiver.delivery(newRef(), '919812345678', 'SENT'));
        await clock.settle();
        assert.equal(unknown.value, pending, 'it looks again');
        await clock.advance(1000);
        assert.notEqual(unknown.value, pending, 'given up within a second');
        assert.equal(unknown.value.known, false);
      });
    });

    it('an unknown status sits between SENT and DELIVERED', async () => {
      const c = new Correlator(store());
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

    it('newRef: URL-safe, no - or _, unique', () => {
      const refs = new Set(Array.from({ length: 1000 }, newRef));
      assert.equal(refs.size, 1000);
      for (const r of refs) assert.match(r, /^[A-Za-z0-9]{12}$/);
    });
  });
});
