'use strict';
// Mocha's spec reporter, plus one closing line in the plain form CI reads: "mocha: N passed, N failed, N skipped".
const { reporters, Runner } = require('mocha');

class SpecWithSummary extends reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(Runner.constants.EVENT_RUN_END, () => {
      const s = this.stats;
      process.stdout.write(`mocha: ${s.passes} passed, ${s.failures} failed, ${s.pending} skipped\n`);
    });
  }
}

module.exports = SpecWithSummary;
