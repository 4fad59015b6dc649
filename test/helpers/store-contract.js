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

  it('schedule and takeDue: the due members, earliest first, each taken once even by many at once; the rest wait', async () => {
    const s = await make();
    const now = Date.now();
    for (const [m, at] of [['c', now - 10], ['a', now - 30], ['later', now + 60_000], ['b', now - 20]]) await s.schedule('due', m, at, 60_000, 100);
    assert.deepEqual(await s.takeDue('due', now, 2), ['a', 'b']);
    const races = await Promise.all(Array.from({ length: 10 }, () => s.takeDue('due', now, 100)));
    assert.deepEqual(races.flat(), ['c'], 'taken by one caller only');
    assert.deepEqual(await s.takeDue('due', now, 100), []);
    assert.deepEqual(await s.takeDue('due', now + 60_000, 100), ['later']);
    assert.deepEqual(await s.takeDue('none', now, 100), [], 'a schedule never made is empty');
  });

  it('settle: "waiting" before the member was taken, "taken" after, undefined when absent; removed either way', async () => {
    const s = await make();
    const now = Date.now();
    await s.schedule('due', 'early', now - 1, 60_000, 100);
    await s.schedule('due', 'late', now + 60_000, 60_000, 100);
    assert.deepEqual(await s.takeDue('due', now, 100), ['early']);
    assert.equal(await s.settle('due', 'early'), 'taken');
    assert.equal(await s.settle('due', 'early'), undefined);
    assert.equal(await s.settle('due', 'late'), 'waiting');
    assert.deepEqual(await s.takeDue('due', now + 120_000, 100), [], 'a settled member is never taken');
    assert.equal(await s.settle('nothing', 'x'), undefined);
  });

  it('schedule again moves a member; at most max members are kept, the taken ones dropped first, then the earliest due', async () => {
    const s = await make();
    const now = Date.now();
    await s.schedule('due', 'moved', now - 5, 60_000, 100);
    await s.schedule('due', 'moved', now + 60_000, 60_000, 100);
    assert.deepEqual(await s.takeDue('due', now, 100), [], 'moved to later');
    await s.schedule('due', 'gone', now - 3, 60_000, 100);
    assert.deepEqual(await s.takeDue('due', now, 100), ['gone']); // taken, kept as taken
    await s.schedule('due', 'first', now - 2, 60_000, 3);
    await s.schedule('due', 'second', now - 1, 60_000, 3); // four members, max 3: the taken one goes
    assert.equal(await s.settle('due', 'gone'), undefined, 'the taken member was dropped first');
    await s.schedule('due', 'third', now, 60_000, 3); // then the earliest due
    assert.deepEqual(await s.takeDue('due', now, 100), ['second', 'third']);
    assert.equal(await s.settle('due', 'moved'), 'waiting');
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
