'use strict';
// The simulator of bench/inbox.js, in its own process (its 100,000 records are not the measured
// process's memory): injects `count` SMS with injectSms (vmnTriggerUrl unset: nothing is forwarded),
// one a second ending a minute ago, then serves them; reports its URLs and, on request, its request count.
const { Simulator } = require('../../dist/simulator');

const count = Number(process.argv[2]);
const sim = new Simulator({ maxRecords: count, logRequests: false });
const first = Math.floor(Date.now() / 1000) - count - 60;
for (let i = 0; i < count; i++) {
  sim.injectSms({ from: `9198${String(10_000_000 + (i % 5000)).slice(-8)}`, message: `INFO inbox bench message ${i}`, number: '9220092200', ts: first + i });
}
sim.start().then((urls) => process.send({ urls, injected: sim.inbox.length }));
process.on('message', (m) => {
  if (m === 'stop') sim.stop().then(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
