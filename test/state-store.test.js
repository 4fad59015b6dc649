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
      assert.equal(await a.epoch(), await s.epoch());
      await a.close();
      assert.equal(await s.get('a:k'), 1);
      assert.equal(a.shared, false);
    });
  });
});

