'use strict';
// The delivery watchdog across replicas (issue 21 item 3; ADR 0004): two real Node-RED processes run the
// same flows on one real redis-server, as test/scale-out.test.js does; each replica gives the service the
// other one's address, so every callback reaches the other replica. A watchdog minute is shortened through
// KALEYRA_WATCHDOG_MINUTE_MS (README, callback in). Checked: each OVERDUE is emitted once across both replicas,
// none for a recipient delivered in time, and a killed replica's deadlines fire on the other one. "Once" is
// proved from Redis itself (MONITOR): each deadline is taken by exactly one script call, and a taken one
// can never be taken again, so no second event can still be on its way; the events are what the
// replicas posted to a collector here.
const assert = require('node:assert/strict');
const { DEMO_KEY } = require('../dist/simulator');
const { mobileKey } = require('../dist/core/correlation');
const { twoReplicas } = require('./helpers/replicas');
const { waitFor } = require('./helpers/started-node-red');

const TOKEN = 'wdtoken123';
const MINUTE_MS = 1000; // a watchdog minute in this test
const AFTER = 6; // minutes: 6 s here, ample for a DELIVERED in time and for stopping a replica before it
const SCHEDULE = 'kaleyra:{acct}:corr:due:cb';

function flows() {
  return [
    { id: 't1', type: 'tab', label: 'watchdog' },
    { id: 'acct', type: 'kaleyra-config', name: 'account', messagingUrl: '${SIM_MESSAGING}', vmnUrl: '${SIM_VMN}', obdUrl: '${SIM_OBD}', voiceUrl: '${SIM_VOICE}', publicUrl: '${PUBLIC_URL}', timeout: 5, store: 'redis', redisUrl: '${REDIS_URL}' },
    // Sends: POST /send { to, ref } answers the ids.
    { id: 'send-in', type: 'http in', z: 't1', url: '/send', method: 'post', wires: [['send-msg']] },
    { id: 'send-msg', type: 'change', z: 't1', rules: [{ t: 'set', p: 'to', pt: 'msg', to: 'payload.to', tot: 'msg' }, { t: 'set', p: 'ref', pt: 'msg', to: 'payload.ref', tot: 'msg' }, { t: 'set', p: 'payload', pt: 'msg', to: 'watched', tot: 'str' }], wires: [['wa']] },
    { id: 'wa', type: 'kaleyra-whatsapp', z: 't1', account: 'acct', reportTo: 'cb', from: '918000000000', wires: [['send-out']] },
    { id: 'send-out', type: 'http response', z: 't1', statusCode: '', headers: {}, wires: [] },
    { id: 'cb', type: 'kaleyra-callback', z: 't1', account: 'acct', path: '/wd/cb', overdueAfter: AFTER, wires: [['ev-url']] },
    { id: 'ev-url', type: 'change', z: 't1', rules: [{ t: 'set', p: 'url', pt: 'msg', to: `$env('COLLECTOR') & '/event?replica=' & $env('REPLICA')`, tot: 'jsonata' }], wires: [['ev-post']] },
    { id: 'ev-post', type: 'http request', z: 't1', method: 'POST', ret: 'txt', url: '', paytoqs: 'ignore', wires: [[]] },
  ];
}

describe('delivery watchdog: two Node-RED replicas on one Redis', function () {
  this.timeout(240_000);
  const h = twoReplicas({ name: 'watchdog', flows, credentials: { acct: { apiKey: DEMO_KEY }, cb: { token: TOKEN } }, env: { KALEYRA_WATCHDOG_MINUTE_MS: String(MINUTE_MS) } });
  const { replicas } = h;

  const events = () => h.posted('/event');
  const overdue = () => events().filter((e) => e.state === 'OVERDUE');
  async function send(replica, to, ref) {
    const res = await replicas[replica].fetch('/send', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ to, ref }), signal: AbortSignal.timeout(60_000) });
    assert.equal(res.status, 200, await res.clone().text());
    return Object.fromEntries((await res.json()).map((m) => [m.mobile, m.id]));
  }
  /** Redis's MONITOR from now on; keys() the account's keys. */
  async function monitor() {
    const watch = await h.monitor();
    return { ...watch, keys: () => watch.keys('kaleyra:{acct}:*') };
  }
  /** The deadlines taken (a script's ZADD <schedule> 0 <member>), by member. */
  const takes = (watch) => watch.commands().filter((c) => c.from === 'lua' && c.command === 'ZADD' && c.args[0] === SCHEDULE && c.args[1] === '0').map((c) => c.args[2]);

  it('each OVERDUE is emitted by exactly one replica; none for a recipient delivered in time', async () => {
    const watch = await monitor();
    try {
      const sends = [];
      for (let i = 0; i < 6; i++) {
        const never = `919812${String(i).padStart(2, '0')}0000`;
        const delivered = `919876${String(i).padStart(2, '0')}4321`;
        const ids = await send(i % 2 ? 'A' : 'B', [never, delivered], `order-${i}`);
        sends.push({ ref: `order-${i}`, never, delivered, ids });
      }
      await waitFor(() => sends.every((s) => overdue().some((e) => e.id === s.ids[s.never])), 'an OVERDUE for every recipient never delivered', 60_000);
      // Each deadline taken by one script call, whichever replica made it; a taken deadline is never taken
      // again, so what the collector holds now is all there will be.
      const taken = takes(watch);
      for (const s of sends) {
        assert.equal(taken.filter((m) => m.endsWith(`:${mobileKey(s.never)}`)).length, 1, `${s.ref}: the deadline of ${s.never} taken once`);
        assert.equal(taken.filter((m) => m.endsWith(`:${mobileKey(s.delivered)}`)).length, 0, `${s.ref}: the delivered recipient's deadline never taken`);
        const mine = overdue().filter((e) => e.ref === s.ref);
        assert.deepEqual(mine.map((e) => [e.id, e.to, e.after]), [[s.ids[s.never], s.never, AFTER]], `${s.ref}: one OVERDUE, for the recipient never delivered`);
        const delivered = events().find((e) => e.id === s.ids[s.delivered] && e.status === 'DELIVERED');
        assert.equal(delivered?.late, false, `${s.ref}: DELIVERED in time`);
      }
      assert.equal(taken.length, sends.length, 'no other deadline taken');
      // The schedule is one key of the account's correlation share, as ADR 0004 lists it (test/scale-out.test.js).
      const keys = (await watch.keys()).map((k) => k.slice('kaleyra:{acct}:'.length));
      assert.ok(keys.includes('corr:due:cb'), 'the callback node\'s schedule');
      assert.deepEqual(keys.filter((k) => !/^(corr:r:[\w-]+|corr:s:[\w-]+:[^:]+|corr:due:[\w.-]+|epoch)$/.test(k)), [], 'keys not laid out as ADR 0004 says');
      const by = overdue().reduce((n, e) => ((n[e.replica] = (n[e.replica] ?? 0) + 1), n), {});
      console.log(`      (OVERDUE events by replica: ${JSON.stringify(by)})`);
    } finally {
      await watch.stop();
    }
  });

  it('a restart of Node-RED (both replicas): the deadlines kept in Redis fire after it', async () => {
    const never = '919812980000';
    const ids = await send('B', [never], 'restarted');
    // The send's ids (and deadline) are recorded once its SENT event names it (ADR 0001: the event waits for them).
    await waitFor(() => events().some((e) => e.id === ids[never] && e.status === 'SENT'), 'the SENT event of the send');
    await Promise.all(Object.values(replicas).map((r) => r.stop()));
    assert.deepEqual(overdue().filter((e) => e.ref === 'restarted'), [], 'precondition: stopped before the deadline');
    await Promise.all(Object.values(replicas).map((r) => r.start()));
    await waitFor(() => overdue().some((e) => e.ref === 'restarted'), 'the OVERDUE after the restart', 60_000);
    assert.deepEqual(overdue().filter((e) => e.ref === 'restarted').map((e) => [e.id, e.to]), [[ids[never], never]]);
  });

  it("a killed replica's deadlines fire on the other one", async () => {
    const never = '919812990000';
    const ids = await send('A', [never], 'killed');
    await waitFor(() => events().some((e) => e.id === ids[never] && e.status === 'SENT'), 'the SENT event of the send');
    replicas.A.kill();
    await replicas.A.exited;
    const killedAt = Date.now();
    try {
      await waitFor(() => overdue().some((e) => e.ref === 'killed'), 'the OVERDUE of the killed replica\'s send', 60_000);
      const [event] = overdue().filter((e) => e.ref === 'killed');
      assert.ok(Date.parse(event.sentAt) + AFTER * MINUTE_MS > killedAt, 'precondition: the replica died before the deadline');
      assert.deepEqual([event.replica, event.id, event.to], ['B', ids[never], never]);
    } finally {
      await replicas.A.start();
    }
  });
});
