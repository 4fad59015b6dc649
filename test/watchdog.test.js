'use strict';
// The delivery watchdog in the core (src/core/watchdog.ts, through src/core/reporting.ts), without
// Node-RED: a watched message's recipients get deadlines when the service accepts it; a sweep at a time
// past a deadline emits one OVERDUE event per recipient without DELIVERED or READ, never twice; a DELIVERED
// in time settles the deadline; the DELIVERED that comes after an OVERDUE is late. The sweeps are given
// their time (no waiting on a clock). Over the memory store, and over a real redis-server shared by two
// reporters (two replicas), where each OVERDUE comes from exactly one of them.
const assert = require('node:assert/strict');
const { Reporter } = require('../dist/core/reporting');
const { DeliveryWatchdog } = require('../dist/core/watchdog');
const { MemoryStore, prefixed } = require('../dist/core/state-store');
const { RedisStore } = require('../dist/core/redis-store');
const { RedisServer } = require('./helpers/redis');
const { SlowStore } = require('./helpers/slow-store');

const A = '919812345678';
const B = '+91 98123 45679';
const MINUTES = 5;
const WATCH = { listener: 'cb1', after: MINUTES, afterMs: MINUTES * 60_000 };
const delivery = (status, mobile = A) => ({ event: 'delivery', status, mobile, timestamp: 1, time: '1970-01-01T00:00:01.000Z' });
const noStoreUse = (err) => assert.equal(err, undefined, 'the store failed');

/** Sends a message to `to` (number -> message id), watched unless `watch` is null, and resolves when its ids are recorded, with the times around it. */
async function send(reporter, ref, to, userRef, watch = WATCH) {
  const before = Date.now();
  const handle = await reporter.track(ref, 'message', userRef, undefined, noStoreUse, watch ?? undefined);
  await handle.sent(to);
  return { before, after: Date.now() };
}

/** A sweep at `now`: the events it emitted. */
async function sweep(reporter, now, listener = WATCH.listener) {
  const events = [];
  const n = await reporter.overdue(listener, (e) => events.push(e), now);
  assert.equal(n, events.length);
  return events;
}

function overdueChecks(makeStores) {
  it('each recipient without DELIVERED by sentAt + N gets one OVERDUE event: { event, state, id, ref, to, sentAt, after }', async () => {
    const [store] = await makeStores(1);
    const reporter = new Reporter(store);
    const { before, after } = await send(reporter, 'ref1', { [A]: 'wa-a', [B]: 'wa-b' }, { order: 42 });
    assert.deepEqual(await sweep(reporter, before + WATCH.afterMs - 1), [], 'nothing before the deadline');
    const events = await sweep(reporter, after + WATCH.afterMs);
    events.sort((x, y) => x.id.localeCompare(y.id));
    for (const e of events) {
      const sentAt = Date.parse(e.sentAt);
      assert.ok(sentAt >= before && sentAt <= after, `sentAt ${e.sentAt} is when the service accepted the send`);
      assert.equal(e.sentAt, new Date(sentAt).toISOString());
    }
    assert.deepEqual(events.map(({ sentAt, ...e }) => e), [
      { event: 'delivery', state: 'OVERDUE', id: 'wa-a', ref: { order: 42 }, to: A, after: MINUTES },
      { event: 'delivery', state: 'OVERDUE', id: 'wa-b', ref: { order: 42 }, to: B, after: MINUTES },
    ]);
    assert.deepEqual(await sweep(reporter, after + 2 * WATCH.afterMs), [], 'never twice');
  });

  it('a DELIVERED (or READ) in time settles the deadline; the DELIVERED after an OVERDUE is late, what follows it is not', async () => {
    const [store] = await makeStores(1);
    const reporter = new Reporter(store);
    const { after } = await send(reporter, 'ref2', { [A]: 'wa-a', [B]: 'wa-b' }, 'r2');
    // B: READ in time (no DELIVERED first): settled.
    assert.equal((await reporter.correlate(delivery('READ', B), 'ref2')).late, false);
    // A: only SENT in time, which settles nothing.
    assert.equal((await reporter.correlate(delivery('SENT'), 'ref2')).late, false);
    const events = await sweep(reporter, after + WATCH.afterMs);
    assert.deepEqual(events.map((e) => [e.id, e.state]), [['wa-a', 'OVERDUE']]);
    assert.deepEqual(await reporter.correlate(delivery('DELIVERED'), 'ref2'), { ...delivery('DELIVERED'), id: 'wa-a', ref: 'r2', state: 'DELIVERED', late: true });
    assert.deepEqual(await reporter.correlate(delivery('READ'), 'ref2'), { ...delivery('READ'), id: 'wa-a', ref: 'r2', state: 'READ', late: false });
    assert.deepEqual(await sweep(reporter, after + 2 * WATCH.afterMs), []);
  });

  it('not watched: a send without the setting, a call, a failed send, never fire', async () => {
    const [store] = await makeStores(1);
    const reporter = new Reporter(store);
    await send(reporter, 'plain', { [A]: 'wa-1' }, 'p', null);
    const call = await reporter.track('call1', 'call', 'c', 'cust', noStoreUse, WATCH);
    await call.sent({ call: 'call-1' });
    const failed = await reporter.track('failed1', 'message', 'f', undefined, noStoreUse, WATCH);
    await failed.failed();
    // A barrier: a watched send made after them fires, alone.
    const { after } = await send(reporter, 'watched', { [A]: 'wa-2' }, 'w');
    assert.deepEqual((await sweep(reporter, after + 10 * WATCH.afterMs)).map((e) => e.id), ['wa-2']);
    assert.equal((await reporter.correlate(delivery('DELIVERED'), 'plain')).late, false);
  });

  it('a deadline whose record is gone (expired) emits nothing', async () => {
    const [store] = await makeStores(1);
    const reporter = new Reporter(store);
    const { after } = await send(reporter, 'gone', { [A]: 'wa-g' }, 'g');
    await store.delete('r:gone');
    const { after: later } = await send(reporter, 'kept', { [A]: 'wa-k' }, 'k');
    assert.deepEqual((await sweep(reporter, Math.max(after, later) + WATCH.afterMs)).map((e) => e.id), ['wa-k']);
  });

  it('each callback node has its own schedule', async () => {
    const [store] = await makeStores(1);
    const reporter = new Reporter(store);
    const { after } = await send(reporter, 'one', { [A]: 'wa-1' }, 1, { listener: 'cbA', after: 1, afterMs: 60_000 });
    await send(reporter, 'two', { [A]: 'wa-2' }, 2, { listener: 'cbB', after: 1, afterMs: 60_000 });
    assert.deepEqual((await sweep(reporter, after + 120_000, 'cbA')).map((e) => e.id), ['wa-1']);
    assert.deepEqual((await sweep(reporter, after + 120_000, 'cbB')).map((e) => e.id), ['wa-2']);
  });
}

describe('delivery watchdog (core)', () => {
  describe('over the memory store', () => overdueChecks(async (n) => Array.from({ length: n }, () => new MemoryStore())));
  describe('over a store that answers late and copies values (as Redis does)', () => overdueChecks(async (n) => Array.from({ length: n }, () => new SlowStore(new MemoryStore()))));

  it('keeps at most maxDeadlines per callback node, dropping the earliest', async () => {
    const store = new MemoryStore();
    const watchdog = new DeliveryWatchdog(store, { maxDeadlines: 2 });
    const sentAt = Date.now();
    for (const ref of ['r1', 'r2', 'r3']) {
      await store.put(`r:${ref}`, { kind: 'message', ids: { 9812345678: `id-${ref}` }, sentAt, watch: { listener: 'cb', after: 1, to: { 9812345678: A } } }, 60_000);
      await watchdog.schedule(ref, await store.get(`r:${ref}`), 60_000 + Number(ref[1]));
    }
    const events = [];
    await watchdog.sweep('cb', (e) => events.push(e), sentAt + 120_000);
    assert.deepEqual(events.map((e) => e.id), ['id-r2', 'id-r3']);
  });

  describe('over a real redis-server, shared by two replicas', function () {
    this.timeout(60_000);
    const redis = new RedisServer({ aof: false });
    const open = [];
    let n = 0;
    before(() => redis.start());
    after(async () => {
      for (const s of open) await s.close();
      await redis.stop();
    });
    const makeStores = async (count) => {
      const prefix = `wd${n++}:`;
      return Array.from({ length: count }, () => {
        const s = new RedisStore({ url: redis.url, prefix });
        open.push(s);
        return prefixed(s, 'corr:');
      });
    };

    describe('one replica', () => overdueChecks(makeStores));

    it('two replicas sweeping at once: each OVERDUE is emitted by exactly one; a send delivered in time by neither', async () => {
      const [storeA, storeB] = await makeStores(2);
      const replicas = [new Reporter(storeA), new Reporter(storeB)];
      const sends = 150;
      let last = 0;
      for (let i = 0; i < sends; i++) {
        const to = { [`9198100${String(i).padStart(5, '0')}`]: `wa-${i}`, [`9198200${String(i).padStart(5, '0')}`]: `wb-${i}` };
        ({ after: last } = await send(replicas[i % 2], `ref${i}`, to, i));
      }
      // Every fifth send is delivered in time (at the other replica), for both recipients.
      for (let i = 0; i < sends; i += 5) {
        for (const mobile of [`9198100${String(i).padStart(5, '0')}`, `9198200${String(i).padStart(5, '0')}`]) {
          assert.equal((await replicas[(i + 1) % 2].correlate(delivery('DELIVERED', mobile), `ref${i}`)).late, false);
        }
      }
      const got = [[], []];
      await Promise.all(replicas.flatMap((r, k) => Array.from({ length: 4 }, () => r.overdue(WATCH.listener, (e) => got[k].push(e.id), last + WATCH.afterMs))));
      const all = [...got[0], ...got[1]].sort();
      const expected = [];
      for (let i = 0; i < sends; i++) if (i % 5) expected.push(`wa-${i}`, `wb-${i}`);
      assert.deepEqual(all, expected.sort(), 'each overdue recipient once, across both replicas');
      console.log(`      (replica A emitted ${got[0].length}, B ${got[1].length})`);
      const keys = await redis.command('KEYS', '*due*');
      assert.match(keys, /corr:due:cb1/, 'the schedule is a key under the correlation share');
    });
  });
});
