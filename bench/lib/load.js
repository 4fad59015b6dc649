'use strict';
// The load generator of bench/callbacks.js, run as its own process so it does not share Node-RED's
// core: autocannon (as a library) against one URL, cycling through the given paths. Gets its options
// as one IPC message; answers with one: requests per second (mean), latency, and anything not 2xx.
const autocannon = require('autocannon');

process.once('message', (o) => autocannon(
  { url: o.url, connections: o.connections, pipelining: 1, duration: o.duration, requests: o.paths.map((path) => ({ method: 'GET', path })) },
  (err, r) => {
    if (err) {
      console.error(err);
      process.exit(1);
    }
    process.send({ rps: r.requests.average, total: r.requests.total, latencyMs: r.latency.average, non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts }, () => process.exit(0));
  },
));
