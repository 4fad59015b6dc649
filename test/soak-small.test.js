'use strict';
// The soak's property, small enough for every test run (npm run soak is the full size, bench/soak.js):
// sends and call-status reads through the real runtime, the simulator with faults on (10% 5xx, 5% resets,
// 5% stalls past the 1 s timeout) and a full redeploy in the middle; every msg ends in exactly one output
// or one Catch error, and the simulator never accepts a send twice nor sees one resent against ADR 0002.
const assert = require('node:assert/strict');
const { runSoak, describe: describeSoak } = require('../bench/soak-run');

describe('soak (small): faults and a redeploy', function () {
  this.timeout(300_000); // a soak: minutes on a busy machine

  it('answers every msg exactly once: 0 lost, 0 duplicated, retries as the policy allows', async () => {
    const r = await runSoak({ messages: 300, statuses: 60, redeployAfter: 150, progressEvery: 0, timeLimitMs: 45_000, log: () => undefined });
    const text = describeSoak(r).join('\n');
    assert.equal(r.timedOut, false, text);
    assert.equal(r.redeploy.done, true, text);
    assert.ok(r.redeploy.outstanding > 0, `the redeploy should find msgs outstanding\n${text}`);
    assert.equal(r.answered, 360, text);
    assert.equal(r.lost, 0, text);
    assert.equal(r.duplicated, 0, text);
    assert.equal(r.dupAnswers, 0, text);
    assert.equal(r.doneNotOnce, 0, text);
    assert.equal(r.wireMismatch, 0, text);
    assert.equal(r.wrongGeneration, 0, text);
    assert.equal(r.policyViolations, 0, text);
    assert.equal(r.outputNotAccepted, 0, text);
    assert.equal(r.idMismatch, 0, text);
    assert.equal(r.readsOverBudget, 0, text);
    assert.equal(r.readsRetriedAfterAnswer, 0, text);
    // The faults really happened: some of each kind of error, and some reads were retried.
    for (const code of ['HTTP_STATUS', 'NETWORK', 'TIMEOUT']) assert.ok(r.outcomes[code] > 0, `no ${code} error\n${text}`);
    // The account closes after its nodes, which finish what they hold within the grace time: the redeploy
    // fails nothing that could be sent (with stalls cut at the 1 s timeout, everything could).
    assert.equal(r.outcomes.CLOSED ?? 0, 0, text);
    assert.ok(r.readsRetried > 0, text);
    assert.ok(r.ok, text);
    assert.match(text.split('\n').pop(), /^soak: 360 messages, 360 answered, 0 lost, 0 duplicated$/);
  });
});
