'use strict';
// The account monitor alone (src/core/monitor.ts), on a clock the test moves: counts, bounds, the hour
// per minute, the funnel and its percentiles, and which sections a delta holds.
const assert = require('node:assert/strict');
const { AccountMonitor, maskNumbers, RECENT_FAILURES, DELIVERED_SAMPLE, MAX_KEYS } = require('../dist/core/monitor');

const INFO = { id: 'acct1', name: 'main', mode: 'simulator', store: 'memory', settings: { timeout: 30 } };

function make(start = Date.UTC(2026, 10, 26, 10, 0, 30)) {
  const clock = { t: start };
  const gauges = { queued: 0, inFlight: 0, rateLimited: false, storeUp: true };
  const m = new AccountMonitor(INFO, { now: () => clock.t, redact: (t) => t.split('SECRETKEY123').join('***') });
  m.gauges = () => ({ ...gauges });
  return { m, clock, gauges };
}

describe('account monitor (core)', () => {
  it('counts requests by interface and outcome, and their durations in the histogram', () => {
    const { m } = make();
    m.request('whatsapp', 120, 'ok');
    m.request('whatsapp', 80, 'ok');
    m.request('whatsapp', 3000, 'TIMEOUT');
    m.request('vmn', 40, 'ok');
    assert.deepEqual(Object.fromEntries(m.requests.whatsapp), { ok: 2, TIMEOUT: 1 });
    assert.deepEqual(Object.fromEntries(m.requests.vmn), { ok: 1 });
    assert.equal(m.requests.click2call.size, 0);
    const d = m.durations.whatsapp;
    assert.equal(d.count, 3);
    assert.ok(Math.abs(d.sum - 3.2) < 1e-9);
    // cumulative: ≤0.1 s holds the 80 ms one, ≤0.25 s both fast ones, ≤5 s all three
    assert.equal(d.counts[d.bounds.indexOf(0.1)], 1);
    assert.equal(d.counts[d.bounds.indexOf(0.25)], 2);
    assert.equal(d.counts[d.bounds.indexOf(5)], 3);
  });

  it('keeps the last 20 failures with node and time, counts all by code, and masks numbers and the key in their text', () => {
    const { m, clock } = make();
    for (let i = 0; i < 25; i++) {
      clock.t += 1000;
      m.messageFailed(i % 2 ? 'E423' : 'NETWORK', 'n1', 'sender', `to +91 98765 4${String(i).padStart(4, '0')} with api_key=SECRETKEY123 failed`, true);
    }
    m.messageFailed('A404', 'n2', '', 'inbox read failed', false);
    const v = m.view();
    assert.deepEqual(v.failures.byCode, { NETWORK: 13, E423: 12, A404: 1 });
    assert.equal(v.failures.recent.length, RECENT_FAILURES);
    assert.equal(v.failures.recent.at(-1).code, 'A404');
    assert.equal(v.failures.recent.at(-2).at, clock.t);
    assert.deepEqual({ ...v.failures.recent.at(-2), at: 0 }, { code: 'NETWORK', node: 'n1', nodeName: 'sender', at: 0, message: 'to ***0024 with api_key=*** failed' });
    assert.equal(v.funnel.failed, 25, 'only the sends count in the funnel');
    assert.deepEqual(Object.fromEntries(m.sendFailures), { NETWORK: 13, E423: 12 });
    assert.ok(!JSON.stringify(v).includes('98765'));
  });

  it('masks phone numbers written in any usual way, leaving short numbers alone', () => {
    assert.equal(maskNumbers('mobile 919876543210, +1 (555) 010-2345 and 00447911123456; 3 retries, E423, 2026'), 'mobile ***3210, ***2345 and ***3456; 3 retries, E423, 2026');
  });

  it('masks the shortest number the phone rule takes (6 digits), not a 5-digit one', () => {
    const { PHONE_RULE, phone } = require('../dist/core/validate');
    assert.equal(phone('to', '+123456'), '+123456', 'a phone number to the runtime');
    assert.equal(PHONE_RULE.minDigits, 6);
    assert.equal(maskNumbers('to +123456 and 12 34 56 failed; 12345 left'), 'to ***3456 and ***3456 failed; 12345 left');
  });

  it('a code or state that is not one (free text, a number) or one too many is counted as OTHER', () => {
    const { m } = make();
    m.delivery('919876543210', false, false);
    m.delivery('hello world', false, false);
    for (let i = 0; i < MAX_KEYS + 5; i++) m.request('vmn', 1, `E${i}`);
    assert.equal(m.deliveryEvents.get('OTHER'), 2);
    assert.equal(m.requests.vmn.size, MAX_KEYS + 1);
    assert.equal(m.requests.vmn.get('OTHER'), 5);
  });

  it('the funnel: recipients sent, correlated in-order DELIVERED and READ, and the median and p95 time to DELIVERED over the last 1000', () => {
    const { m, clock } = make();
    m.messageSent(2);
    m.messageSent(1);
    const sentAt = clock.t;
    // 1..1100 s: the first 100 fall out of the sample
    for (let i = 1; i <= 1100; i++) {
      clock.t = sentAt + i * 1000;
      m.delivery('DELIVERED', true, false, sentAt);
    }
    m.delivery('DELIVERED', false, false); // not ours: counted by state, not in the funnel
    m.delivery('DELIVERED', true, true, sentAt); // late: behind READ
    m.delivery('READ', true, false, sentAt);
    m.delivery('SENT', true, false, sentAt);
    const f = m.view().funnel;
    assert.deepEqual({ ...f, deliveredMs: undefined }, { sent: 3, delivered: 1100, read: 1, failed: 0, overdue: 0, deliveredMs: undefined });
    assert.equal(DELIVERED_SAMPLE, 1000);
    // sample: 101..1100 s; nearest rank: p50 = the 500th = 600 s, p95 = the 950th = 1050 s
    assert.deepEqual(f.deliveredMs, { p50: 600_000, p95: 1_050_000 });
    assert.deepEqual(Object.fromEntries(m.deliveryEvents), { DELIVERED: 1102, READ: 1, SENT: 1 });
    assert.equal(m.toDelivered.count, 1100);
    assert.equal(make().m.view().funnel.deliveredMs, null);
  });

  it('an OVERDUE of the delivery watchdog: in the funnel, and counted with the delivery events by state', () => {
    const { m } = make();
    m.messageSent(2);
    m.overdueEmitted();
    assert.equal(m.view().funnel.overdue, 1);
    assert.deepEqual(Object.fromEntries(m.deliveryEvents), { OVERDUE: 1 });
    m.overdueEmitted();
    assert.equal(m.view().funnel.overdue, 2);
    assert.deepEqual(Object.fromEntries(m.deliveryEvents), { OVERDUE: 2 });
  });

  it('the last hour per minute: 60 buckets on the clock, the oldest first, older minutes dropped', () => {
    const { m, clock } = make();
    const minute0 = Math.floor(clock.t / 60_000) * 60_000;
    m.request('whatsapp', 10, 'ok');
    m.messageSent(1);
    clock.t += 60_000;
    m.request('whatsapp', 10, 'ok');
    m.request('whatsapp', 10, 'ok');
    m.messageFailed('E423', 'n', '', 'x', true);
    let v = m.view().minutes;
    assert.equal(v.start, minute0 + 60_000 - 59 * 60_000);
    assert.equal(v.requests.whatsapp.length, 60);
    assert.deepEqual(v.requests.whatsapp.slice(-2), [1, 2]);
    assert.deepEqual(v.sends.sent.slice(-2), [1, 0]);
    assert.deepEqual(v.sends.failed.slice(-2), [0, 1]);
    assert.equal(v.requests.vmn.reduce((a, b) => a + b), 0);
    // 59 minutes on: the first minute is the oldest bucket; one more and it is gone
    clock.t += 58 * 60_000;
    v = m.view().minutes;
    assert.equal(v.start, minute0);
    assert.deepEqual([v.requests.whatsapp[0], v.requests.whatsapp[1]], [1, 2]);
    clock.t += 60_000;
    v = m.view().minutes;
    assert.deepEqual([v.requests.whatsapp[0], v.requests.whatsapp.reduce((a, b) => a + b)], [2, 2]);
    clock.t += 3 * 3600_000;
    m.request('vmn', 1, 'ok');
    v = m.view().minutes;
    assert.equal(v.requests.whatsapp.reduce((a, b) => a + b), 0);
    assert.deepEqual(v.requests.vmn.slice(-1), [1]);
  });

  it('polls and listeners per node; a node that leaves takes its row, not the totals', () => {
    const { m, clock } = make();
    const p = m.poll('in1', 'inbox');
    p.set('standby');
    p.set('polling', 3);
    p.set('polling', 2);
    const l = m.listener('cb1', 'callbacks', 'callback');
    l.accepted();
    l.accepted();
    l.matched(true);
    l.matched(false);
    l.refused('token');
    l.refused('tooLarge');
    l.refused('token');
    const v = m.view();
    assert.deepEqual(v.polls, [{ node: 'in1', nodeName: 'inbox', role: 'polling', lastPoll: clock.t, emitted: 5 }]);
    assert.deepEqual(v.listeners, [{ node: 'cb1', nodeName: 'callbacks', kind: 'callback', received: 2, correlated: 1, uncorrelated: 1, refused: { token: 2, tooLarge: 1, other: 0 } }]);
    m.forget('cb1');
    m.forget('in1');
    assert.deepEqual([m.view().polls, m.view().listeners], [[], []]);
    assert.equal(m.listenerTotals.callback.refused.token, 2);
  });

  it('state from the gauges; time rate limited adds up on the clock', () => {
    const { m, clock, gauges } = make();
    assert.equal(m.view().state, 'ok');
    gauges.rateLimited = true;
    m.flowChanged(true);
    clock.t += 1500;
    m.flowChanged(true);
    clock.t += 500;
    m.flowChanged(false);
    clock.t += 10_000;
    assert.equal(m.rateLimitedSeconds(), 2);
    assert.equal(m.view().state, 'rateLimited');
    gauges.storeUp = false;
    assert.equal(m.view().state, 'storeDown');
    gauges.problem = 'apiKey';
    assert.deepEqual([m.view().state, m.view().problem], ['unusable', 'apiKey']);
  });

  it('deltas: the first is the whole view, then only the changed sections; nothing when nothing changed; onChange once until then', () => {
    const { m, clock, gauges } = make();
    let told = 0;
    m.onChange = () => told++;
    const first = m.delta();
    assert.deepEqual(Object.keys(first).sort(), ['at', 'failures', 'funnel', 'id', 'inFlight', 'listeners', 'minutes', 'mode', 'name', 'polls', 'queued', 'settings', 'state', 'store'].sort());
    assert.equal(m.delta(), undefined, 'nothing changed');
    m.messageSent(1);
    m.messageSent(1);
    assert.equal(told, 1, 'told once until the next delta');
    clock.t += 1000;
    let d = m.delta();
    assert.deepEqual(Object.keys(d).sort(), ['at', 'funnel', 'id', 'minutes']);
    assert.equal(d.at, clock.t);
    assert.equal(d.funnel.sent, 2);
    m.listener('cb', '', 'callback').refused('other');
    assert.equal(told, 2);
    gauges.queued = 5;
    m.flowChanged(false);
    d = m.delta();
    assert.deepEqual(Object.keys(d).sort(), ['at', 'id', 'listeners', 'queued']);
    gauges.problem = 'publicUrl';
    assert.deepEqual(m.delta(), { id: 'acct1', at: clock.t, state: 'unusable', problem: 'publicUrl' });
    delete gauges.problem;
    assert.deepEqual(m.delta(), { id: 'acct1', at: clock.t, state: 'ok', problem: null });
    // the hour moves on while it holds counts: the minutes go again
    assert.equal(m.minutesMoved(), false);
    clock.t += 60_000;
    assert.equal(m.minutesMoved(), true);
    assert.deepEqual(Object.keys(m.delta()).sort(), ['at', 'id', 'minutes']);
  });

  it('keeps no phone number: a view after sends, failures and events with numbers holds none', () => {
    const { m } = make();
    m.messageFailed('E423', 'n', 'x', 'recipient 919876543210 is not on WhatsApp', true);
    m.delivery('DELIVERED', true, false, 0);
    assert.ok(!/9876543210/.test(JSON.stringify(m.view())));
  });
});
