'use strict';
// Runs `fn` with Date.now moved forward by `offsetMs`: TTLs and expiries seen from the future.
async function withClock(offsetMs, fn) {
  const real = Date.now;
  Date.now = () => real() + offsetMs;
  try {
    return await fn();
  } finally {
    Date.now = real;
  }
}

module.exports = { withClock };
