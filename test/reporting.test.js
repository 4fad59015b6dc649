'use strict';
// "Report to" in the core (src/core/reporting.ts), without Node-RED: a send's record, its ids once
// accepted, its event completed from the record; a failed send forgotten; a store that fails told to the
// caller, the send going on uncorrelated.
const assert = require('node:assert/strict');
const { Reporter } = require('../dist/core/reporting');
const { MemoryStore } = require('../dist/core/state-store');
const { SlowStore } = require('./helpers/slow-store');

const MOBILE = '919812345678';
const delivery = (status) => ({ event: 'delivery', status, mobile: MOBILE, timestamp: 1, time: '1970-01-01T00:00:01.000Z' });

/** A StoreUse that records what it was told. */
function uses() {
  const told = [];
  const used = (err, step) => told.push(err === undefined ? 'ok' : `${err.message}${step}`);
  return { told, used };
}

describe('Reporter: correlation of "Report to" sends in the core', () => {
  it('a message: tracked, its ids recorded once accepted, its events carry id, ref, the furthest state, late', async () => {
    const reporter = new Reporter(new MemoryStore());
    const { told, used } = uses();
    const handle = await reporter.track('r1', 'message', 'order-42', undefined, used);
    await handle.sent({ [MOBILE]: 'wa-1' });
    assert.deepEqual(told, ['ok']);
    assert.deepEqual(await reporter.correlate(delivery('DELIVERED'), 'r1'), { ...delivery('DELIVERED'), id: 'wa-1', ref: 'order-42', state: 'DELIVERED', late: false });
    assert.deepEqual(await reporter.correlate(delivery('SENT'), 'r1'), { ...delivery('SENT'), id: 'wa-1', ref: 'order-42', state: 'DELIVERED', late: true });
  });

  it('a call: its event carries the call id, ref and custom', async () => {
    const reporter = new Reporter(new MemoryStore());
    const handle = await reporter.track('r2', 'call', { a: 1 }, 'cust', uses().used);
    await handle.sent({ call: 'call-9' });
    const event = { event: 'call', caller: '9812345678', status: 'ANSWER' };
    assert.deepEqual(await reporter.correlate({ ...event }, 'r2'), { ...event, id: 'call-9', ref: { a: 1 }, custom: 'cust' });
  });

  it('a failed send is forgotten: its ref matches nothing; an unknown ref leaves the event as it is', async () => {
    const reporter = new Reporter(new MemoryStore());
    const handle = await reporter.track('r3', 'message', 'x', undefined, uses().used);
    await handle.failed();
    assert.deepEqual(await reporter.correlate(delivery('SENT'), 'r3'), delivery('SENT'));
    assert.deepEqual(await reporter.correlate(delivery('SENT'), 'never'), delivery('SENT'));
  });

  it('a store that fails before the send: told once, the send goes on (sent() records nothing, failed() does nothing)', async () => {
    const store = new MemoryStore();
    let writes = 0;
    store.put = () => (writes++, Promise.reject(new Error('store down')));
    store.claim = store.put;
    store.advance = store.put;
    const reporter = new Reporter(store);
    const { told, used } = uses();
    const handle = await reporter.track('r4', 'message', 'x', undefined, used);
    const tried = writes;
    await handle.sent({ [MOBILE]: 'wa-4' });
    await handle.failed();
    assert.deepEqual(told, ['store down before a send']);
    assert.equal(writes, tried, 'nothing more written after the record failed');
  });

  it('on a shared store the record is written while the request goes out: track() does not wait for it', async () => {
    const inner = new MemoryStore();
    const store = new SlowStore(inner);
    let release;
    const gate = new Promise((r) => (release = r));
    const put = store.put.bind(store);
    store.put = async (...args) => (await gate, put(...args));
    store.claim = store.put;
    const reporter = new Reporter(store);
    // With the write held, track() resolves within a few turns of the event loop (it does not wait for it).
    const turns = new Promise((r) => setImmediate(() => setImmediate(() => setImmediate(() => r('waited for the write')))));
    const handle = await Promise.race([reporter.track('r5', 'message', 'y', undefined, uses().used), turns]);
    assert.equal(typeof handle.sent, 'function', handle);
    release();
    await handle.sent({ [MOBILE]: 'wa-5' });
    assert.equal((await reporter.correlate(delivery('READ'), 'r5')).id, 'wa-5');
  });
});
