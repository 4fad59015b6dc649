'use strict';
// The memory state store (src/core/state-store.ts): TTL, the count bound (oldest written forgotten
// first), claim, claimAll, advance, lease, epoch, and a prefixed view. The Redis store passes the same
// contract in test/redis-store.test.js.
const assert = require('node:assert/strict');
const { MemoryStore, prefixed } = require('../dist/core/state-store');
const { contract } = require('./helpers/store-contract');
const { withClock: later } = require('./helpers/clock');

describe('state store', () => {
  describe('MemoryStore: the contract', () => contract(() => new MemoryStore()));

  describe('MemoryStore: bounds', () => {
    it('an entry expires with its TTL (get, claim and lease see it gone)', async () => {
      const s = new MemoryStore();
      await s.put('a', 1, 1000);
      await s.claim('c', 1000);
      await s.lease('l', 'owner', 1000);
      await later(1500, async () => {
        assert.equal(await s.get('a'), undefined);
        assert.equal(await s.claim('c', 1000), true);
        assert.equal(await s.lease('l', 'other', 1000), true);
      });
    });

    it('keeps at most maxEntries, forgetting the oldest written first (a write makes an entry new)', async () => {
      const s = new MemoryStore({ maxEntries: 3 });
      for (const k of ['a', 'b', 'c']) await s.put(k, k, 60_000);
      await s.put('a', 'a2', 60_000); // a is now the newest
      await s.put('d', 'd', 60_000);
      assert.equal(s.size, 3);
      assert.equal(await s.get('b'), undefined, 'b was the oldest');
      assert.deepEqual([await s.get('a'), await s.get('c'), await s.get('d')], ['a2', 'c', 'd']);
    });

    it('expired entries are dropped as writes go on, not only when read (memory stays bounded by the TTL too)', async () => {
      const s = new MemoryStore({ maxEntries: 100_000 });
      for (let i = 0; i < 1000; i++) await s.put(`old${i}`, i, 1000);
      await later(2000, async () => {
        for (let i = 0; i < 600; i++) await s.put(`new${i}`, i, 1000);
      });
      assert.equal(s.size, 600);
    });

    it('a schedule lives ttlMs after its last schedule(), then is gone', async () => {
      const s = new MemoryStore();
      const now = Date.now();
      await s.schedule('due', 'a', now + 500, 1000, 10);
      await later(600, async () => assert.deepEqual(await s.takeDue('due', Date.now(), 10), ['a']));
      await s.schedule('due', 'b', now + 500, 1000, 10);
      await later(1500, async () => assert.equal(await s.settle('due', 'b'), undefined, 'expired with its schedule'));
    });

    it('a schedule with many members settled or moved stays small and takes what is due, in order', async () => {
      const s = new MemoryStore();
      const now = Date.now();
      for (let i = 0; i < 5000; i++) {
        await s.schedule('due', `m${i}`, now - 5000 + i, 60_000, 100_000);
        if (i % 10) await s.settle('due', `m${i}`); // nine in ten settled in time
      }
      const taken = [];
      for (let batch; (batch = await s.takeDue('due', now, 7)).length > 0; ) taken.push(...batch);
      assert.deepEqual(taken, Array.from({ length: 500 }, (_, i) => `m${i * 10}`));
    });

    it('every MemoryStore has its own epoch (a restart of the process loses the contents)', async () => {
      assert.notEqual(await new MemoryStore().epoch(), await new MemoryStore().epoch());
    });
  });

  describe('prefixed: a view of one share of a store', () => {
    it('keeps its keys apart from other prefixes, shares the epoch, and closing it leaves the store open', async () => {
      const s = new MemoryStore();
      const a = prefixed(s, 'a:');
      const b = prefixed(s, 'b:');
      await a.put('k', 1, 60_000);
      assert.equal(await b.get('k'), undefined);
      assert.equal(await s.get('a:k'), 1);
      assert.deepEqual(await a.claimAll(['x'], 60_000), [true]);
      assert.deepEqual(await b.claimAll(['x'], 60_000), [true]);
      await a.schedule('due', 'm', Date.now() - 1, 60_000, 10);
      assert.deepEqual(await b.takeDue('due', Date.now(), 10), []);
      assert.deepEqual(await s.takeDue('a:due', Date.now(), 10), ['m']);
      assert.equal(await a.settle('due', 'm'), 'taken');
      assert.equal(await a.epoch(), await s.epoch());
      await a.close();
      assert.equal(await s.get('a:k'), 1);
      assert.equal(a.shared, false);
    });
  });
});

