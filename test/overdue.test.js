'use strict';
// The delivery watchdog of kaleyra-callback (issue 21 item 3) in the real runtime, on the memory store: a
// whatsapp node reports to a callback node with `overdueAfter` set; the built-in simulator over real HTTP
// delivers to one recipient and never to numbers ending in 0000. A watchdog minute is shortened for the
// test through KALEYRA_WATCHDOG_MINUTE_MS (README, callback in). What is waited for is an event; what must not
// come is proved from the account's store (the deadline settled, or never set), not by waiting.
const assert = require('node:assert/strict');
const request = require('supertest');
const { helper, setFlows, NODE_MODULES, catchNode, logText } = require('./helpers/flow');
const { HttpNode, until } = require('./helpers/http-node');
const { Simulator, DEMO_KEY } = require('../dist/simulator');
const { memoryStores } = require('../dist/nodes/registry');
const { mobileKey } = require('../dist/core/correlation');

const TOKEN = 'tok123';
const MINUTE_MS = 500; // a watchdog minute in this test
const AFTER = 8; // minutes: 4 s here, ample for a DELIVERED in time (the simulator's comes within 0.2 s)
const DELIVERED_TO = '919812345678';
const NEVER = '919812340000'; // the simulator reports only SENT to numbers ending in 0000
const MODULES = [catchNode, NODE_MODULES['kaleyra-config'], NODE_MODULES['kaleyra-whatsapp'], NODE_MODULES['kaleyra-callback']];

describe('kaleyra-callback: the delivery watchdog (memory store)', function () {
  this.timeout(120_000);
  const httpNode = new HttpNode();
  let sim;
  let urls;
  let got;
  let saved;

  before(async () => {
    saved = process.env.KALEYRA_WATCHDOG_MINUTE_MS;
    process.env.KALEYRA_WATCHDOG_MINUTE_MS = String(MINUTE_MS);
    sim = new Simulator({ deliveryDelaysMs: [150, 30, 30] });
    urls = await sim.start();
    await httpNode.start();
  });
  after(async () => {
    if (saved === undefined) delete process.env.KALEYRA_WATCHDOG_MINUTE_MS;
    else process.env.KALEYRA_WATCHDOG_MINUTE_MS = saved;
    await sim.stop();
    await httpNode.stop();
  });
  afterEach(async () => {
    await helper.unload();
    sim.clear();
  });

  /** Two callback nodes of one account: cb with the watchdog (unless `watched` is false), cb-off without. */
  function flow({ watched = true, withCallback = true } = {}) {
    return [
      { id: 'f1', type: 'tab', label: 'watchdog' },
      { id: 'cfg', type: 'kaleyra-config', name: 'sim', ...urls, publicUrl: httpNode.url, timeout: 5 },
      { id: 'wa', type: 'kaleyra-whatsapp', z: 'f1', account: 'cfg', reportTo: 'cb', from: '918000000000', wires: [['waout']] },
      { id: 'wa-off', type: 'kaleyra-whatsapp', z: 'f1', account: 'cfg', reportTo: 'cb-off', from: '918000000000', wires: [['waout']] },
      { id: 'waout', type: 'helper', z: 'f1' },
      ...(withCallback ? [{ id: 'cb', type: 'kaleyra-callback', z: 'f1', account: 'cfg', path: '/wd/cb', overdueAfter: watched ? AFTER : '', wires: [['events']] }] : []),
      { id: 'cb-off', type: 'kaleyra-callback', z: 'f1', account: 'cfg', path: '/wd/off', overdueAfter: 0, wires: [['events-off']] },
      { id: 'events', type: 'helper', z: 'f1' },
      { id: 'events-off', type: 'helper', z: 'f1' },
      { id: 'c1', type: 'catch', z: 'f1', scope: null, uncaught: false, wires: [['caught']] },
      { id: 'caught', type: 'helper', z: 'f1' },
    ];
  }
  const credentials = { cfg: { apiKey: DEMO_KEY }, cb: { token: TOKEN }, 'cb-off': { token: TOKEN } };

  function collect() {
    got = { waout: [], events: [], 'events-off': [], caught: [] };
    for (const id of Object.keys(got)) helper.getNode(id).on('input', (m) => got[id].push(m));
  }

  async function load(options) {
    await helper.load([...MODULES, httpNode.capture], flow(options), credentials);
    collect();
  }

  /** Sends through whatsapp node `id`; resolves to the { mobile: id } of its answer and the ref of its callback URL. */
  async function send(id, to, ref) {
    const before = got.waout.length;
    helper.getNode(id).receive({ payload: 'hello', to, ref });
    await until(() => got.waout.length > before || got.caught.length > 0, `the answer of ${id}`);
    assert.deepEqual(got.caught.map((m) => m.error), []);
    const ids = Object.fromEntries(got.waout.at(-1).payload.map((m) => [m.mobile, m.id]));
    const kref = new URL(sim.messages.at(-1).body.callback).searchParams.get('kref');
    return { ids, kref };
  }

  const overdue = (list = got.events) => list.map((m) => m.payload).filter((e) => e.state === 'OVERDUE');
  /** The deadline of one recipient in the account's schedule: taken, waiting, or undefined (none, or settled). */
  const deadline = (listener, kref, mobile) => memoryStores('cfg').correlation.settle(`due:${listener}`, `${kref}:${mobileKey(mobile)}`);

  it('one OVERDUE for the recipient never delivered, none for the one delivered in time; a DELIVERED after it is late', async () => {
    await load();
    const { ids, kref } = await send('wa', [DELIVERED_TO, NEVER], { order: 7 });
    await until(() => overdue().length > 0, 'the OVERDUE event');
    const [event] = overdue();
    const { sentAt, ...rest } = event;
    assert.deepEqual(rest, { event: 'delivery', state: 'OVERDUE', id: ids[NEVER], ref: { order: 7 }, to: NEVER, after: AFTER });
    assert.equal(new Date(Date.parse(sentAt)).toISOString(), sentAt, 'sentAt is an ISO 8601 time');
    const msg = got.events.find((m) => m.payload.state === 'OVERDUE');
    assert.equal(msg.topic, 'delivery', 'msg.topic is the event, as for the other events');
    // The delivered recipient's DELIVERED came in time and was not late; its deadline is gone (settled),
    // so no OVERDUE can come for it.
    const delivered = got.events.map((m) => m.payload).find((e) => e.mobile === DELIVERED_TO && e.status === 'DELIVERED');
    assert.equal(delivered?.late, false, 'DELIVERED in time');
    assert.equal(await deadline('cb', kref, DELIVERED_TO), undefined, 'the delivered recipient has no deadline left');
    assert.deepEqual(overdue().map((e) => e.id), [ids[NEVER]], 'only the recipient not delivered');

    // The service delivers at last: the event is emitted as usual, late; the READ after it is not.
    const callBack = (status) => {
      const u = new URL(sim.messages.at(-1).body.callback);
      for (const [k, v] of Object.entries({ status, mobile: NEVER, timestamp: '1700000000' })) u.searchParams.set(k, v);
      return request(httpNode.app).get(u.pathname + u.search).expect(200);
    };
    const before = got.events.length;
    await callBack('DELIVERED');
    await until(() => got.events.length > before, 'the late DELIVERED');
    assert.deepEqual(
      (({ id, ref, status, state, late }) => ({ id, ref, status, state, late }))(got.events.at(-1).payload),
      { id: ids[NEVER], ref: { order: 7 }, status: 'DELIVERED', state: 'DELIVERED', late: true },
    );
    await callBack('READ');
    await until(() => got.events.length > before + 1, 'the READ');
    assert.equal(got.events.at(-1).payload.late, false);
    assert.equal(overdue().length, 1, 'one OVERDUE in all');
  });

  it('a node with the setting off (0 or empty) never sets a deadline, and emits no OVERDUE', async () => {
    await load({ watched: false });
    const off = [await send('wa', [NEVER], 'off-1'), await send('wa-off', [NEVER], 'off-2')];
    await sim.callbacksIdle();
    for (const [i, listener] of ['cb', 'cb-off'].entries()) assert.equal(await deadline(listener, off[i].kref, NEVER), undefined, `no deadline for ${listener}`);
    assert.deepEqual([...overdue(), ...overdue(got['events-off'])], []);
  });

  it('survives a redeploy: a deadline set before it fires once after it, on the new node', async () => {
    await load();
    const { ids, kref } = await send('wa', [NEVER], 'redeploy');
    // Redeploy at once, without the callback node: nothing sweeps while it is away.
    await setFlows(flow({ withCallback: false }), 'full', credentials);
    assert.deepEqual(overdue(), [], 'no OVERDUE before the redeploy (the deadline is 4 s away)');
    assert.equal(await memoryStores('cfg').correlation.get(`r:${kref}`).then((r) => r.watch.after), AFTER, 'the record is kept across the redeploy');
    // The callback node is back (a second full deploy): the deadline still in the account's store fires.
    await setFlows(flow(), 'full', credentials);
    collect();
    await until(() => overdue().length > 0, 'the OVERDUE after the redeploy');
    assert.deepEqual(overdue().map((e) => [e.id, e.ref]), [[ids[NEVER], 'redeploy']]);
    assert.equal(await deadline('cb', kref, NEVER), 'taken', 'taken once, by the new node');
  });

  it('a bad setting is warned and leaves the watchdog off', async () => {
    const bad = flow().map((n) => (n.id === 'cb' ? { ...n, overdueAfter: '1.5' } : n));
    await helper.load([...MODULES, httpNode.capture], bad, credentials);
    collect();
    const { kref } = await send('wa', [NEVER], 'bad');
    assert.match(logText(), /overdueAfter must be a whole number of minutes from 0 to 10080, not \\"1\.5\\": the delivery watchdog is off/);
    assert.equal(await deadline('cb', kref, NEVER), undefined);
  });
});
