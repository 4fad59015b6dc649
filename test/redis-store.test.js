'use strict';
// The Redis state store (src/core/redis-store.ts) against a real redis-server on loopback: the same
// contract as the memory store, keys scoped by prefix, the shared rate limiter, the epoch changing when
// Redis comes back empty and not when it comes back with its data (AOF), failing fast while Redis is down
// and reconnecting by itself, a bad URL refused, the password never shown, no connection left on close.
const assert = require('node:assert/strict');
const { RedisServer } = require('./helpers/redis');
const { waitFor } = require('./helpers/started-node-red');
const { RedisStore, checkRedisUrl } = require('../dist/core/redis-store');
const { contract } = require('./helpers/store-contract');

describe('Redis state store', function () {
  const redis = new RedisServer({ aof: true });
  const open = [];
  const store = (prefix = `t${open.length}:`, extra = {}) => {
    const s = new RedisStore({ url: redis.url, prefix, ...extra });
    open.push(s);
    return s;
  };
  before(() => redis.start());
  after(async () => {
    for (const s of open) await s.close();
    await redis.stop();
  });

  describe('the contract of every store', () => contract(() => store()));

  it('is shared: two stores with the same prefix (two replicas) see one state; another prefix sees nothing of it', async () => {
    const a = store('acct1:');
    const b = store('acct1:');
    const other = store('acct2:');
    assert.equal(a.shared, true);
    await a.put('r', { ids: { x: 'y' } }, 60_000);
    assert.deepEqual(await b.get('r'), { ids: { x: 'y' } });
    assert.equal(await other.get('r'), undefined);
    const claims = await Promise.all([a, b, a, b].map((s) => s.claim('once', 60_000)));
    assert.equal(claims.filter(Boolean).length, 1);
    assert.equal(await a.epoch(), await b.epoch());
    assert.equal(await redis.command('EXISTS', 'acct1:r'), ':1\r\n', 'keys are the prefix + the key');
  });

  it('the TTL is Redis\'s own: an entry is gone when it expires', async () => {
    const s = store();
    await s.put('short', 1, 100);
    await s.claim('c', 100);
    await new Promise((r) => setTimeout(r, 250));
    assert.equal(await s.get('short'), undefined);
    assert.equal(await s.claim('c', 100), true);
  });

  it('the rate limiter admits at most N starts in any second across stores (replicas), by Redis\'s clock', async () => {
    const limiters = [store('rate:'), store('rate:')].map((s) => s.limiter('rate', 5));
    const admitted = [];
    const t0 = Date.now();
    const worker = async (limiter) => {
      while (admitted.length < 15) {
        const wait = await limiter.reserve();
        if (wait === 0) admitted.push(Date.now() - t0);
        else await new Promise((r) => setTimeout(r, Math.min(wait, 100)));
      }
    };
    await Promise.all([...limiters, ...limiters].map(worker));
    admitted.sort((a, b) => a - b);
    // Any 950 ms window (a little less than a second, for the time between Redis and this process) holds at most 5.
    for (const start of admitted) assert.ok(admitted.filter((t) => t >= start && t < start + 950).length <= 5, JSON.stringify(admitted));
    assert.ok(admitted[14] >= 1900, `15 starts at 5/s take 2 s (${admitted[14]} ms)`);
  });

  it('a fractional rate: ceil(rate) starts per window of ceil(rate) / rate seconds', async () => {
    const limiter = store('frac:').limiter('rate', 0.5);
    assert.equal(await limiter.reserve(), 0);
    const wait = await limiter.reserve();
    assert.ok(wait > 1500 && wait <= 2000, `a second start waits about 2 s (${wait} ms)`);
  });

  it('a Redis that restarts with its data (AOF) keeps the epoch and the entries; one that comes back empty has a new epoch', async () => {
    const s = store('restart:');
    await s.put('kept', 'yes', 600_000);
    const before = await s.epoch();
    await redis.kill();
    try {
      // Whether the client has seen the socket close yet ("cannot be reached") or not (the command fails
      // with the socket): the operation fails, and does not wait for Redis to come back.
      const t0 = Date.now();
      await assert.rejects(s.get('kept'));
      assert.ok(Date.now() - t0 < 2500, `failed after ${Date.now() - t0} ms`);
    } finally {
      await redis.start();
    }
    await waitFor(() => s.get('kept').then((v) => v === 'yes', () => false), 'the store to reconnect by itself', 60_000);
    assert.equal(await s.epoch(), before);

    await redis.kill();
    redis.wipe();
    await redis.start();
    await waitFor(() => s.get('kept').then((v) => v === undefined, () => false), 'the reconnection to the empty Redis', 60_000);
    assert.notEqual(await s.epoch(), before, 'a new epoch: the data was lost');
  });

  it('tells when Redis goes away and when it is back, once each', async () => {
    const states = [];
    const s = store('state:', { onState: (up, reason) => states.push([up, reason]) });
    await waitFor(() => states.length === 1, 'the first connection');
    assert.deepEqual(states, [[true, undefined]]);
    await redis.kill();
    try {
      await waitFor(() => states.length === 2, 'the outage');
    } finally {
      await redis.start();
    }
    await waitFor(() => states.length === 3, 'the reconnection', 60_000);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(states.map(([up]) => up), [true, false, true], 'one line per change, not one per failed attempt');
    assert.equal(typeof states[1][1], 'string');
    await s.close();
  });

  it('correlation on Redis across replicas: a callback that overtakes its send at another replica waits for the answer, and states move forward', async () => {
    const { Correlator, newRef } = require('../dist/core/correlation');
    const sender = new Correlator(store('corr-x:'), { answerWaitMs: 5000 });
    const receiver = new Correlator(store('corr-x:'), { answerWaitMs: 5000 });
    const ref = newRef();
    await sender.track(ref, 'message', { order: 7 });
    const early = receiver.delivery(ref, '+919812345678', 'DELIVERED');
    await new Promise((r) => setTimeout(r, 100));
    const before = Date.now();
    await sender.identified(ref, { '919812345678': 'wamid.1' });
    const { sentAt, ...got } = await early;
    assert.deepEqual(got, { id: 'wamid.1', userRef: { order: 7 }, state: 'DELIVERED', late: false, known: true });
    assert.ok(sentAt >= before && sentAt <= Date.now(), `sentAt ${sentAt}: when the service accepted the send`);
    assert.deepEqual(await sender.delivery(ref, '919812345678', 'SENT'), { id: 'wamid.1', userRef: { order: 7 }, state: 'DELIVERED', late: true, known: true, sentAt });
  });

  it('closing leaves no connection behind', async () => {
    const before = await redis.clients();
    const s = new RedisStore({ url: redis.url, prefix: 'close:' });
    await s.get('x');
    assert.equal(await redis.clients(), before + 1);
    await s.close();
    await waitFor(async () => (await redis.clients()) === before, 'the connection to close');
  });

  it('a bad redisUrl is a ConfigError naming redisUrl, and never shows a password', () => {
    for (const bad of ['http://127.0.0.1:6379', '127.0.0.1:6379', 'redis://', 'redis://h:1/abc', 'redis://:s3cret@host:6379/x']) {
      assert.throws(
        () => checkRedisUrl(bad),
        (err) => err.code === 'CONFIG' && err.setting === 'redisUrl' && /^redisUrl: /.test(err.message) && !err.message.includes('s3cret'),
        bad,
      );
    }
    for (const good of ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379/2', 'rediss://user:pw@redis.example.com:6380/0', 'redis://localhost']) checkRedisUrl(good);
  });
});
