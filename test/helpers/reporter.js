'use strict';
// Mocha's spec reporter, plus closing lines in the plain form CI reads: one "mocha: failed: <title>" per
// failed test (test/matrix.js repeats them under its results, where a CI log's tail shows them), then
// "mocha: N passed, N failed, N skipped".
const { reporters, Runner } = require('mocha');

class SpecWithSummary extends reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(Runner.constants.EVENT_RUN_END, () => {
      const s = this.stats;
      for (const test of this.failures) {
        process.stdout.write(`mocha: failed: ${test.fullTitle()}: ${String(test.err?.message ?? test.err).split('\n')[0].slice(0, 200)}\n`);
      }
      process.stdout.write(`mocha: ${s.passes} passed, ${s.failures} failed, ${s.pending} skipped\n`);
    });
  }
}

module.exports = SpecWithSummary;
