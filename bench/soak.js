'use strict';
// npm run soak (after `npx tsc -p .`): 10,000 WhatsApp sends and 2,000 call-status reads through the real
// Node-RED runtime against the simulator with faults on (10% HTTP 5xx, 5% connection resets, 5% stalls
// past the 1 s timeout), with a full redeploy after about 5,000 answers. Ends with the line
// `soak: <N> messages, <N> answered, <lost> lost, <dup> duplicated`; exit code 0 only when nothing was lost
// or duplicated and every other check of bench/soak-run.js held.
// Options: --messages N --statuses N --redeploy-after N --seed N --time-limit SECONDS.
const { runSoak, describe } = require('./soak-run');

function args(argv) {
  const out = {};
  const names = { '--messages': 'messages', '--statuses': 'statuses', '--redeploy-after': 'redeployAfter', '--seed': 'seed', '--time-limit': 'timeLimitMs' };
  for (let k = 0; k < argv.length; k += 2) {
    const name = names[argv[k]];
    const value = Number(argv[k + 1]);
    if (!name || !Number.isFinite(value) || value < 0) throw new Error(`usage: node bench/soak.js [${Object.keys(names).join(' N] [')} N]`);
    out[name] = name === 'timeLimitMs' ? value * 1000 : value;
  }
  if (out.messages !== undefined && out.redeployAfter === undefined) out.redeployAfter = Math.floor((out.messages + (out.statuses ?? 2000)) / 2.4);
  return out;
}

/** What still holds the event loop (besides stdio): handles by kind, and timers and other resources. */
function openHandles() {
  const kinds = {};
  for (const h of process._getActiveHandles()) {
    if (h === process.stdout || h === process.stderr || h === process.stdin) continue;
    const name = h?.constructor?.name ?? typeof h;
    kinds[name] = (kinds[name] ?? 0) + 1;
  }
  const handles = Object.entries(kinds).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
  const resources = {};
  for (const r of process.getActiveResourcesInfo()) resources[r] = (resources[r] ?? 0) + 1;
  // stdio shows up as TTYWrap or PipeWrap or FSReqCallback depending on where the output goes.
  for (const stdio of ['TTYWrap', 'PipeWrap']) delete resources[stdio];
  return `${handles}; resources: ${Object.entries(resources).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`;
}

async function main() {
  const opts = args(process.argv.slice(2));
  const o = { messages: 10_000, statuses: 2_000, ...opts };
  console.log(`soak: ${o.messages} sends + ${o.statuses} call-status reads, faults 10% 5xx / 5% resets / 5% stalls (3 s, timeout 1 s), concurrency 16, retries 2`);
  const report = await runSoak(opts);
  // Give closed sockets and timers a moment to go, then say what is still open.
  await new Promise((r) => setTimeout(r, 200));
  console.log(`soak: open handles after the run: ${openHandles()}; requests: ${process._getActiveRequests().length}`);
  for (const line of describe(report)) console.log(line);
  process.exitCode = report.ok ? 0 : 1;
  // The script stops by itself: if anything still holds the event loop, say so and leave anyway.
  setTimeout(() => {
    console.log(`soak: still open 5 s after the end: ${openHandles()}; exiting`);
    process.exit(process.exitCode);
  }, 5_000).unref();
}

main().catch((err) => {
  console.error('soak: failed:', err);
  process.exit(2);
});
