'use strict';
// The close protocol of an action node (src/nodes/message-ledger.ts), alone, on a clock the test moves:
// a stopping node lets its messages finish while they keep ending, cancels the rest once none ended for
// 5 s or at 12 s in all, and reports how they ended.
const assert = require('node:assert/strict');
const { MessageLedger, CLOSE_GRACE_MS, CLOSE_LIMIT_MS } = require('../dist/nodes/message-ledger');
const { fakeTimers } = require('./helpers/clock');

/** A ledger holding `n` queued messages; `end(outcome)` ends the next one as the node does. */
function holding(n) {
  const ledger = new MessageLedger();
  for (let i = 0; i < n; i++) {
    ledger.started();
    ledger.queued();
  }
  const end = (outcome) => {
    ledger.ended(outcome, true);
    ledger.settled();
  };
  return { ledger, end };
}

describe('MessageLedger: the close protocol of an action node', () => {
  let clock;
  let t0;
  beforeEach(() => {
    clock = fakeTimers();
    t0 = clock.now;
  });
  afterEach(() => clock.restore());
  /** Time since the test began, on the fake clock. */
  const elapsed = () => clock.now - t0;

  it('a node holding nothing closes at once, with nothing to report', async () => {
    const { ledger } = holding(0);
    let summary;
    ledger.close((s) => (summary = s));
    assert.deepEqual(summary, { ended: new Map(), limitReached: false });
    assert.equal(ledger.signal.aborted, false);
  });

  it('messages that keep ending are let finish past the grace time; the close waits for the last', async () => {
    const { ledger, end } = holding(3);
    let summary;
    ledger.close((s) => (summary = s));
    for (let i = 0; i < 2; i++) {
      await clock.advance(CLOSE_GRACE_MS - 1000); // inside the grace time: progress restarts it
      end('sent');
    }
    assert.equal(summary, undefined, 'one message is still held');
    assert.equal(ledger.signal.aborted, false, 'nothing cancelled while messages keep ending');
    await clock.advance(CLOSE_LIMIT_MS - elapsed() - 1); // past two grace times in all, just inside the limit
    assert.ok(elapsed() > 2 * CLOSE_GRACE_MS);
    end('sent');
    assert.deepEqual(summary, { ended: new Map([['sent', 3]]), limitReached: false });
    assert.equal(ledger.signal.aborted, false);
  });

  it('once none ended for the grace time, what is held is cancelled (the signal aborts); the close reports each outcome', async () => {
    const { ledger, end } = holding(3);
    let summary;
    ledger.close((s) => (summary = s));
    end('sent');
    await clock.advance(CLOSE_GRACE_MS - 1);
    assert.equal(ledger.signal.aborted, false);
    await clock.advance(1);
    assert.equal(ledger.signal.aborted, true, 'cancelled after 5 s without progress');
    end('CLOSED');
    end('CLOSED');
    assert.deepEqual(summary, { ended: new Map([['sent', 1], ['CLOSED', 2]]), limitReached: false });
  });

  it('at the limit, what is held is cancelled even while messages keep ending; the summary says the limit was reached', async () => {
    const { ledger, end } = holding(100);
    let summary;
    ledger.close((s) => (summary = s));
    let ended = 0;
    while (!ledger.signal.aborted && ended < 100) {
      await clock.advance(1000); // one message a second: always inside the grace time
      end('sent');
      ended++;
    }
    assert.equal(elapsed(), CLOSE_LIMIT_MS, 'cancelled at the limit, not before');
    assert.equal(ended, CLOSE_LIMIT_MS / 1000);
    while (ledger.pending > 0) end('CLOSED');
    assert.deepEqual(summary, { ended: new Map([['sent', ended], ['CLOSED', 100 - ended]]), limitReached: true });
  });

  it('counts what is requesting apart from what is only pending; messages before the stop are not in the summary', async () => {
    const ledger = new MessageLedger();
    ledger.started();
    ledger.started();
    ledger.queued();
    assert.deepEqual([ledger.pending, ledger.requesting], [2, 1]);
    ledger.ended('INVALID_INPUT', false);
    ledger.settled();
    assert.deepEqual([ledger.pending, ledger.requesting], [1, 1]);
    let summary;
    ledger.close((s) => (summary = s));
    ledger.ended('sent', true);
    ledger.settled();
    assert.deepEqual(summary, { ended: new Map([['sent', 1]]), limitReached: false });
    assert.equal(ledger.closing, true);
  });
});
