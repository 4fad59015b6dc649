'use strict';
// Every flow of examples/ (demo.json included) in the real Node-RED runtime, as a user gets it from
// Import > Examples: it must start without errors and, by itself (its inject nodes fire once), produce the
// messages it is there to show, with nothing on its error debug. The built-in simulator's callbacks and
// the SMS injection reach the listener nodes over real HTTP: RED.httpNode is served on 127.0.0.1 and
// uiPort / KALEYRA_DEMO_URL point at it, as `npm start` does for the demo.
const assert = require('node:assert/strict');
const { helper } = require('./helpers/flow');
const { HttpNode, until } = require('./helpers/http-node');
const { exampleFiles, readExample, unknownTypes, errorDebugIds, loadExample, problems, LISTENER_TYPES } = require('./helpers/example-flows');

const OUR_TYPES = ['kaleyra-config', 'kaleyra-whatsapp', 'kaleyra-inbox', 'kaleyra-call-status', 'kaleyra-click2call', 'kaleyra-callback', 'kaleyra-vmn-in'];
const CALL_STATUSES = ['QUEUED', 'INPROGRESS', 'COMPLETED'];
const MESSAGE_ID = /^[A-Za-z0-9]+$/;
const CALL_ID = /^c2c_[A-Za-z0-9]{20}$/;

/** Waits until `list` holds at least n messages (a deadline as a safety net, never a timing check). */
async function atLeast(list, n, what, ms) {
  await until(() => list.length >= n, what, ms);
  return list;
}

/** The send output of a whatsapp node: one { id, mobile } per recipient, in the order given. */
function assertSent(msg, mobiles) {
  assert.ok(Array.isArray(msg.payload), 'msg.payload is the array of sent messages');
  assert.deepEqual(
    msg.payload.map((m) => m.mobile),
    mobiles,
  );
  for (const m of msg.payload) assert.match(m.id, MESSAGE_ID);
  assert.equal(typeof msg.kaleyra, 'object', 'the response envelope is kept in msg.kaleyra');
}

/**
 * Waits until the delivery events for message `id` reach `state`, and checks they are all correlated:
 * same id, the sender's ref, the recipient's number, and a state that never goes back.
 */
async function assertDelivered(events, { id, mobile, ref, state = 'READ' }) {
  const mine = () => events.map((m) => m.payload).filter((p) => p.event === 'delivery' && p.id === id);
  await until(() => mine().some((p) => p.state === state), `delivery state ${state} for ${mobile}`);
  const order = ['SENT', 'DELIVERED', 'READ'];
  let reached = -1;
  for (const p of mine()) {
    assert.equal(p.ref, ref);
    assert.equal(p.mobile, mobile);
    assert.equal(typeof p.timestamp, 'number');
    assert.ok(order.includes(p.status), `a delivery status: ${p.status}`);
    assert.ok(order.indexOf(p.state) >= reached, 'the correlated state never goes back');
    reached = order.indexOf(p.state);
  }
}

/** Waits for both events of call `id` (first-leg answer and end) and checks their correlation. */
async function assertCallEvents(events, { id, ref, custom, caller, receiver }) {
  const mine = () => events.map((m) => m.payload).filter((p) => p.event === 'call' && p.id === id);
  await until(() => mine().some((p) => typeof p.duration === 'number'), `the end event of call ${id}`);
  for (const p of mine()) {
    assert.equal(p.ref, ref);
    assert.equal(p.custom, custom);
    assert.equal(p.caller, caller);
    assert.equal(p.receiver, receiver);
    assert.equal(typeof p.starttime, 'number');
  }
}

/** A call status lookup's output for call `id`: the simulator's record, its status passed through. */
function assertStatusRecord(msg, { id, mobile }) {
  assert.ok(Array.isArray(msg.payload) && msg.payload.length === 1, 'one record for the id');
  const [record] = msg.payload;
  assert.equal(record.id, id);
  assert.equal(record.mobile, mobile);
  assert.ok(CALL_STATUSES.includes(record.status), `a status of the simulator's call: ${record.status}`);
  assert.match(record.senttime, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
}

/** A vmn in output: { from, message, ts } (plus the ISO time), the sender as topic. */
function assertSms(msg, { from, message }) {
  assert.equal(msg.payload.from, from);
  assert.equal(msg.payload.message, message);
  assert.equal(typeof msg.payload.ts, 'number');
  assert.equal(msg.topic, from);
}

const isRecord = (r, { sender, message }) => r && r.sender === sender && r.message === message;

/** What each example must produce, beyond starting cleanly. */
const EXPECTATIONS = {
  async 'demo.json'({ out }) {
    const sent = await atLeast(out('demo-debug-sent'), 2, 'both sends');
    const text = sent.find((m) => m.ref === 'welcome-1');
    const template = sent.find((m) => m.ref === 'order-42');
    assertSent(text, ['919812345678']);
    assertSent(template, ['919812345679', '919812340000']);
    const events = out('demo-debug-events');
    await assertDelivered(events, { id: text.payload[0].id, mobile: '919812345678', ref: 'welcome-1' });
    await assertDelivered(events, { id: template.payload[0].id, mobile: '919812345679', ref: 'order-42' });
    // Numbers ending in 0000 get SENT only in the simulator.
    await assertDelivered(events, { id: template.payload[1].id, mobile: '919812340000', ref: 'order-42', state: 'SENT' });

    const [call] = await atLeast(out('demo-debug-call'), 1, 'the call id');
    assert.match(call.payload.id, CALL_ID);
    const [status] = await atLeast(out('demo-debug-status'), 1, 'the call status');
    assertStatusRecord(status, { id: call.payload.id, mobile: '9812345678' });
    await assertCallEvents(events, { id: call.payload.id, ref: 'call-1', custom: 'demo42', caller: '9812345678', receiver: '9812345679' });

    const sms = { from: '919876543210', message: 'HELLO please call me back' };
    const [incoming] = await atLeast(out('demo-debug-sms'), 1, 'the incoming SMS');
    assertSms(incoming, sms);
    // The inbox node polls every 5 s.
    await until(() => out('demo-debug-inbox').some((m) => isRecord(m.payload, { sender: sms.from, message: sms.message })), 'the SMS in the polled inbox', 60_000);
  },

  async 'kaleyra-whatsapp.json'({ out }) {
    const sent = await atLeast(out('ex-wa-debug-ids'), 2, 'both sends');
    assertSent(
      sent.find((m) => typeof m.payload === 'object' && m.payload.length === 1),
      ['919812345678'],
    );
    assertSent(
      sent.find((m) => m.payload.length === 2),
      ['919812345679', '919812345680'],
    );
  },

  async 'kaleyra-inbox.json'({ out }) {
    const sms = { sender: '919876500001', message: 'INFO opening hours please' };
    const reads = await atLeast(out('ex-inbox-debug-records'), 1, 'the first read');
    // The read may run before the SMS is in the simulator's inbox: read again until it is, as a user would.
    for (let n = 2; !reads.at(-1).payload.some((r) => isRecord(r, sms)) && n <= 20; n++) {
      await new Promise((r) => setTimeout(r, 250));
      helper.getNode('ex-inbox-inject-read').receive({});
      await atLeast(reads, n, 'another read');
    }
    const records = reads.at(-1).payload;
    assert.ok(records.some((r) => isRecord(r, sms)), 'the read finds the SMS');
    for (const r of records) assert.equal(r.keyword.toUpperCase(), 'INFO', 'the keyword filter from msg.payload applies');
    const polled = out('ex-inbox-debug-new');
    await until(() => polled.some((m) => isRecord(m.payload, sms)), 'the SMS from polling');
    const hit = polled.find((m) => isRecord(m.payload, sms));
    assert.equal(hit.topic, 'kaleyra/inbox');
    assert.equal(polled.filter((m) => isRecord(m.payload, sms)).length, 1, 'polling sends a record once');
  },

  async 'kaleyra-call-status.json'({ out }) {
    const [call] = await atLeast(out('ex-status-debug-call'), 1, 'the call id');
    assert.match(call.payload.id, CALL_ID);
    const [status] = await atLeast(out('ex-status-debug-status'), 1, 'the call status');
    assertStatusRecord(status, { id: call.payload.id, mobile: '9812345678' });
  },

  async 'kaleyra-click2call.json'({ out }) {
    const [call] = await atLeast(out('ex-c2c-debug-id'), 1, 'the call id');
    assert.match(call.payload.id, CALL_ID);
    assert.equal(call.ref, 'support-call');
    await assertCallEvents(out('ex-c2c-debug-events'), { id: call.payload.id, ref: 'support-call', custom: 'ticket17', caller: '9812345678', receiver: '9812345679' });
  },

  async 'kaleyra-callback.json'({ out }) {
    const [sent] = await atLeast(out('ex-cb-debug-ids'), 1, 'the send');
    assertSent(sent, ['919812345678']);
    const events = out('ex-cb-debug-events');
    await assertDelivered(events, { id: sent.payload[0].id, mobile: '919812345678', ref: 'order-42' });
    const statuses = events.map((m) => m.payload.status);
    for (const s of ['SENT', 'DELIVERED', 'READ']) assert.ok(statuses.includes(s), `a ${s} event`);
    assert.ok(events.every((m) => m.topic === 'delivery'));
  },

  async 'kaleyra-vmn-in.json'({ out }) {
    const [sms] = await atLeast(out('ex-vmn-debug-sms'), 1, 'the incoming SMS');
    assertSms(sms, { from: '919876543210', message: 'STATUS 42' });
  },
};

describe('examples/ in the real runtime', function () {
  const httpNode = new HttpNode();
  const savedDemoUrl = process.env.KALEYRA_DEMO_URL;
  const files = exampleFiles();

  before(async () => {
    const url = await httpNode.start();
    // The simulator calls back on uiPort; the flows' SMS injection goes to KALEYRA_DEMO_URL.
    helper.settings({ uiPort: httpNode.port });
    process.env.KALEYRA_DEMO_URL = url;
  });
  after(async () => {
    await httpNode.stop();
    helper.settings({});
    if (savedDemoUrl === undefined) delete process.env.KALEYRA_DEMO_URL;
    else process.env.KALEYRA_DEMO_URL = savedDemoUrl;
  });

  describe('the files', () => {
    it('there is one example per node type, and the demo', () => {
      for (const type of OUR_TYPES.filter((t) => t !== 'kaleyra-config')) assert.ok(files.includes(`${type}.json`), `examples/${type}.json`);
      assert.ok(files.includes('demo.json'));
      const used = new Set(files.flatMap((f) => readExample(f).map((n) => n.type)));
      for (const type of OUR_TYPES) assert.ok(used.has(type), `${type} appears in an example`);
    });

    it('node ids are unique within and across the files (several can be imported side by side)', () => {
      const seen = new Map();
      for (const file of files) {
        for (const n of readExample(file)) {
          assert.ok(!seen.has(n.id), `${file}: id ${n.id} is also in ${seen.get(n.id)}`);
          seen.set(n.id, file);
        }
      }
    });

    it('listener paths differ between the files', () => {
      const seen = new Map();
      for (const file of files) {
        for (const n of readExample(file).filter((n) => LISTENER_TYPES.includes(n.type))) {
          assert.ok(!seen.has(n.path), `${file}: path ${n.path} is also used in ${seen.get(n.path)}`);
          seen.set(n.path, file);
        }
      }
    });

    for (const file of files) {
      it(`${file}: a runnable, self-explaining flow of core nodes and ours`, () => {
        const flow = readExample(file);
        assert.ok(Array.isArray(flow), 'an array of nodes');
        assert.deepEqual(unknownTypes(flow), [], 'only core nodes and ours');
        assert.ok(!flow.some((n) => n.credentials), 'no credentials in an example');
        const tabs = flow.filter((n) => n.type === 'tab').map((n) => n.id);
        assert.equal(tabs.length, 1, 'one tab');
        const ids = new Set(flow.map((n) => n.id));
        for (const n of flow) {
          if (n.type === 'tab' || n.type === 'kaleyra-config') continue;
          assert.equal(n.z, tabs[0], `${n.id} is on the tab`);
          assert.ok(Array.isArray(n.wires) && n.wires.every(Array.isArray), `${n.id}: wires are arrays of arrays`);
          for (const id of n.wires.flat()) assert.ok(ids.has(id), `${n.id} is wired to ${id}, which exists`);
        }
        const configs = flow.filter((n) => n.type === 'kaleyra-config');
        assert.equal(configs.length, 1, 'its own kaleyra-config node');
        assert.equal(configs[0].simulator, true, 'the config node uses the built-in simulator');
        for (const n of flow.filter((n) => n.account !== undefined)) assert.equal(n.account, configs[0].id, `${n.id} uses the config node`);
        assert.ok(flow.some((n) => n.type === 'comment' && n.name && n.info), 'a comment node explains it');
        const injects = flow.filter((n) => n.type === 'inject');
        assert.ok(injects.length > 0, 'inject nodes');
        for (const n of injects) {
          assert.equal(n.once, true, `${n.id} fires once at start`);
          assert.ok(Number(n.onceDelay) > 0 && Number(n.onceDelay) <= 5, `${n.id}: a small onceDelay`);
        }
        if (file === 'demo.json') {
          // The editor shows only what arrives while it is open: the demo repeats, so a first look finds messages.
          for (const n of injects) assert.equal(n.repeat, '60', `${n.id} repeats every 60 s`);
          assert.match(flow.find((n) => n.type === 'comment').name, /then every 60 s/);
        }
        assert.ok(errorDebugIds(flow).length > 0, 'a catch node wired to a debug node');
        assert.ok(flow.some((n) => n.type === 'debug' && !errorDebugIds(flow).includes(n.id)), 'debug nodes for the results');
      });
    }
  });

  describe('each flow runs by itself', () => {
    let loaded = false;
    afterEach(async () => {
      if (loaded) await helper.unload();
      loaded = false;
    });

    for (const file of files) {
      it(`${file}: starts without errors and sends its messages`, async () => {
        const example = await loadExample(file, [httpNode.capture]);
        loaded = true;
        const { flow, original, credentials, out } = example;
        for (const n of flow) if (n.type !== 'tab') assert.ok(helper.getNode(n.id), `node ${n.id} (${n.type}) is running`);

        const errorIds = errorDebugIds(original);
        const caught = () => errorIds.flatMap((id) => out(id).map((m) => `${m.error?.source?.id}: ${m.error?.code} ${m.error?.message}`));
        try {
          const expect = EXPECTATIONS[file];
          if (expect) await expect(example);
          // Whatever else an example shows, each of its result debug nodes receives something.
          for (const n of original.filter((n) => n.type === 'debug' && !errorIds.includes(n.id))) {
            await atLeast(out(n.id), 1, `a message on debug "${n.name}"`);
          }
        } catch (err) {
          // Say what the flow's catch node saw, which is usually why an expected message never came.
          if (caught().length) err.message += `\n  errors caught in the flow:\n  ${caught().join('\n  ')}`;
          throw err;
        }

        // Its listeners only accept requests carrying their token.
        for (const n of flow.filter((n) => LISTENER_TYPES.includes(n.type))) {
          assert.ok(credentials[n.id].token);
          const res = await httpNode.fetch(n.path);
          assert.equal(res.status, 403, `${n.path} without the token`);
        }

        assert.deepEqual(caught(), [], 'nothing on the error debug');
        assert.deepEqual(problems(flow), [], 'no error and no warning in the log');
      });
    }
  });
});
