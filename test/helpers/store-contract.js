'use strict';
// The contract every StateStore keeps (src/core/state-store.ts), run on the memory store
// (test/state-store.test.js) and on the Redis store (test/redis-store.test.js).
const assert = require('node:assert/strict');

/** Registers the contract's tests; `make` gives a fresh, empty store. */
function contract(make) {
  it('put and get a JSON value; a missing key is undefined; delete removes', async () => {
    const s = await make();
    assert.equal(await s.get('a'), undefined);
    await s.put('a', { n: 1, list: ['x'], nested: { ok: true } }, 60_000);
    assert.deepEqual(await s.get('a'), { n: 1, list: ['x'], nested: { ok: true } });
    await s.delete('a');
    assert.equal(await s.get('a'), undefined);
  });

  it('claim: only the first of several claims of one key wins, even at once', async () => {
    const s = await make();
    const wins = await Promise.all(Array.from({ length: 20 }, () => s.claim('k', 60_000)));
    assert.equal(wins.filter(Boolean).length, 1);
    assert.equal(await s.claim('k', 60_000), false);
    assert.equal(await s.claim('other', 60_000, 'v'), true);
    assert.equal(await s.get('other'), 'v');
  });

  it('claimAll: claims in order, a key given twice is claimed once, claimed keys stay claimed', async () => {
    const s = await make();
    assert.deepEqual(await s.claimAll(['a', 'b', 'a'], 60_000), [true, true, false]);
    assert.deepEqual(await s.claimAll(['b', 'c'], 60_000), [false, true]);
    assert.deepEqual(await s.claimAll([], 60_000), []);
  });

  it('advance keeps the highest rank (an equal rank replaces) and returns what is kept', async () => {
    const s = await make();
    assert.deepEqual(await s.advance('st', 3, 'DELIVERED', 60_000), { rank: 3, value: 'DELIVERED' });
    assert.deepEqual(await s.advance('st', 1, 'SENT', 60_000), { rank: 3, value: 'DELIVERED' });
    assert.deepEqual(await s.advance('st', 3, 'OTHER', 60_000), { rank: 3, value: 'OTHER' });
    assert.deepEqual(await s.advance('st', 4, 'READ', 60_000), { rank: 4, value: 'READ' });
    const results = await Promise.all([2, 5, 1, 4].map((r) => s.advance('race', r, `r${r}`, 60_000)));
    assert.deepEqual(await s.advance('race', 0, 'x', 60_000), { rank: 5, value: 'r5' });
    for (const r of results) assert.ok(r.rank >= 1);
  });

  it('lease: held by one owner until it ends; the owner renews it', async () => {
    const s = await make();
    assert.equal(await s.lease('l', 'a', 60_000), true);
    assert.equal(await s.lease('l', 'b', 60_000), false);
    assert.equal(await s.lease('l', 'a', 60_000), true, 'renewed');
  });

  it('epoch: the same while the contents last', async () => {
    const s = await make();
    const e = await s.epoch();
    assert.equal(typeof e, 'string');
    assert.ok(e.length >= 8);
    assert.equal(await s.epoch(), e);
  });
}

module.exports = { contract };
