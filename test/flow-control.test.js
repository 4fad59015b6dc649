'use strict';
// Flow control (src/core/flow-control.ts) and the retry policy (src/core/retry.ts, ADR 0002), as units:
// the concurrency bound, the rate limit, the bounded queue (QUEUE_FULL), cancelling queued work (CLOSED),
// drain, change notifications; which failures are retried for reads and for sends, backoff and Retry-After.
const assert = require('node:assert/strict');
const { FlowControl } = require('../dist/core/flow-control');
const { withRetry, retryable } = require('../dist/core/retry');
const { TransportError, InputError, ServiceError } = require('../dist/core/errors');

const tick = () => new Promise((r) => setImmediate(r));
function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('flow control', () => {
  it('runs at most `concurrency` at once; the rest wait in order', async () => {
    const f = new FlowControl({ concurrency: 2, queueSize: 10 });
    const gates = Array.from({ length: 5 }, deferred);
    const started = [];
    const runs = gates.map((g, i) => f.run(() => (started.push(i), g.promise)));
    await tick();
    assert.deepEqual(started, [0, 1]);
    assert.deepEqual([f.inFlight, f.queued], [2, 3]);
    gates[1].resolve('b');
    await tick();
    assert.deepEqual(started, [0, 1, 2]);
    for (const g of gates) g.resolve('x');
    const results = await Promise.all(runs);
    assert.deepEqual(results, ['x', 'b', 'x', 'x', 'x']);
    assert.deepEqual([f.inFlight, f.queued], [0, 0]);
  });

  it('a full queue fails at once with QUEUE_FULL (nothing dropped silently), marked as not sent', async () => {
    const f = new FlowControl({ concurrency: 1, queueSize: 2 });
    const gate = deferred();
    const first = f.run(() => gate.promise);
    const queued = [f.run(async () => 1), f.run(async () => 2)];
    await assert.rejects(
      f.run(async () => 3),
      (err) => err instanceof TransportError && err.code === 'QUEUE_FULL' && err.notSent === true && /2 queued, 1 in flight/.test(err.message),
    );
    gate.resolve(0);
    assert.deepEqual(await Promise.all([first, ...queued]), [0, 1, 2]);
  });

  it('the rate limit spaces starts: 20 per second start over about a second, none early', async () => {
    const f = new FlowControl({ concurrency: 50, rate: 20, queueSize: 100 });
    const t0 = Date.now();
    const starts = [];
    await Promise.all(Array.from({ length: 21 }, () => f.run(async () => starts.push(Date.now() - t0))));
    // Start k may not come before k / rate seconds (a small allowance for timer granularity).
    starts.sort((a, b) => a - b).forEach((at, k) => assert.ok(at >= k * 50 - 5, `start ${k} at ${at} ms`));
    assert.ok(starts.at(-1) >= 990, `the 21st start at ${starts.at(-1)} ms`);
  });

  it('an aborted signal fails its queued work with CLOSED; others go on', async () => {
    const f = new FlowControl({ concurrency: 1, queueSize: 10 });
    const gate = deferred();
    const busy = f.run(() => gate.promise);
    const stop = new AbortController();
    const mine = [f.run(async () => 'a', stop.signal), f.run(async () => 'b', stop.signal)];
    const other = f.run(async () => 'c');
    stop.abort();
    for (const p of mine) await assert.rejects(p, (err) => err.code === 'CLOSED' && err.notSent);
    gate.resolve('busy');
    assert.deepEqual(await Promise.all([busy, other]), ['busy', 'c']);
    await assert.rejects(f.run(async () => 'late', stop.signal), (err) => err.code === 'CLOSED');
  });

  it('drain fails everything queued with the given error; work in flight finishes', async () => {
    const f = new FlowControl({ concurrency: 1, queueSize: 10 });
    const gate = deferred();
    const busy = f.run(() => gate.promise);
    const queued = f.run(async () => 'never');
    f.drain(new TransportError('CLOSED', 'closed'));
    await assert.rejects(queued, /closed/);
    gate.resolve('done');
    assert.equal(await busy, 'done');
  });

  it('onChange is told of every change of in-flight and queued counts, until unsubscribed', async () => {
    const f = new FlowControl({ concurrency: 1, queueSize: 10 });
    const seen = [];
    const off = f.onChange(() => seen.push([f.inFlight, f.queued]));
    const gate = deferred();
    const a = f.run(() => gate.promise);
    const b = f.run(async () => 1);
    gate.resolve(0);
    await Promise.all([a, b]);
    off();
    const count = seen.length;
    await f.run(async () => 2);
    assert.equal(seen.length, count, 'nothing after unsubscribing');
    assert.deepEqual(seen[0], [1, 0]);
    assert.ok(seen.some(([, q]) => q === 1), 'the queued request was seen');
    assert.deepEqual(seen.at(-1), [0, 0]);
  });
});

describe('retry policy (ADR 0002)', () => {
  const err = (code, extra) => new TransportError(code, code, extra);

  it('reads retry transient failures: TIMEOUT, NETWORK, 5xx and 429; not 4xx, bad answers, service errors, bad input', () => {
    for (const e of [err('TIMEOUT'), err('NETWORK'), err('HTTP_STATUS', { statusCode: 500 }), err('HTTP_STATUS', { statusCode: 503 }), err('HTTP_STATUS', { statusCode: 429 })]) {
      assert.equal(retryable(e, 'read'), true, e.message);
    }
    for (const e of [err('HTTP_STATUS', { statusCode: 404 }), err('BAD_RESPONSE'), err('QUEUE_FULL', { notSent: true }), err('CLOSED', { notSent: true }), new ServiceError('A404', 'x', {}), new InputError('to', 'x')]) {
      assert.equal(retryable(e, 'read'), false, e.message);
    }
  });

  it('sends retry only what provably never reached the service, or a 429/503 that said when to come back', () => {
    assert.equal(retryable(err('NETWORK', { notSent: true }), 'send'), true);
    assert.equal(retryable(err('TIMEOUT', { notSent: true }), 'send'), true);
    assert.equal(retryable(err('HTTP_STATUS', { statusCode: 503, retryAfter: 1 }), 'send'), true);
    assert.equal(retryable(err('HTTP_STATUS', { statusCode: 429, retryAfter: 0 }), 'send'), true);
    for (const e of [err('NETWORK'), err('TIMEOUT'), err('HTTP_STATUS', { statusCode: 503 }), err('HTTP_STATUS', { statusCode: 500, retryAfter: 1 }), err('BAD_RESPONSE')]) {
      assert.equal(retryable(e, 'send'), false, e.message);
    }
  });

  it('withRetry: the given number of retries, then the last error; honours Retry-After; never waits past maxDelay', async () => {
    let attempts = 0;
    await assert.rejects(
      withRetry('read', async () => {
        attempts++;
        throw err('NETWORK');
      }, { retries: 3, baseDelay: 1 }),
      /NETWORK/,
    );
    assert.equal(attempts, 4);

    attempts = 0;
    const t0 = Date.now();
    const result = await withRetry('send', async () => {
      if (attempts++ === 0) throw err('HTTP_STATUS', { statusCode: 503, retryAfter: 0.2 });
      return 'ok';
    });
    assert.equal(result, 'ok');
    assert.ok(Date.now() - t0 >= 190, 'waited for Retry-After');

    attempts = 0;
    await assert.rejects(withRetry('read', async () => {
      attempts++;
      throw err('HTTP_STATUS', { statusCode: 503, retryAfter: 60 });
    }, { maxDelay: 1000 }), /HTTP_STATUS/);
    assert.equal(attempts, 1, 'a Retry-After beyond maxDelay is not waited for');
  });

  it('a signal that aborts during the backoff ends the wait with CLOSED', async () => {
    const stop = new AbortController();
    const p = withRetry('read', async () => {
      throw err('TIMEOUT');
    }, { retries: 5, baseDelay: 5000 }, stop.signal);
    setTimeout(() => stop.abort(), 20);
    await assert.rejects(p, (e) => e.code === 'CLOSED');
  });
});
