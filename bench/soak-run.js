'use strict';

// The soak (npm run soak, and test/soak-small.test.js with small numbers): the real Node-RED runtime
// (node-red-node-test-helper) with a kaleyra-whatsapp and a kaleyra-call-status node on one account,
// against our own Simulator with faults on (5xx, connection resets, stalls past the timeout), a full
// redeploy in the middle, and an account of every input msg:
//   - node level: the node called done() exactly once (runtime hook onComplete);
//   - runtime level: exactly one output sent (hook onSend from the node) or one error that reached the
//     Catch node (hook onReceive on the Catch node); this is "answered";
//   - wire level: what the collector helper nodes got. Equal to the runtime level, except for messages
//     that old nodes finished after Node-RED had stopped their flow: a stopped flow routes nothing any
//     more (its wires and the Catch node's wires are gone), so those are counted and shown apart.
//   - the simulator's log: per marker ('soak <i>' text, or the call id), requests received and sends
//     accepted; a send accepted twice is a duplicate; a send requested twice must be allowed by the
//     retry policy (docs/adr/0002-retry-policy.md).
// Every loop is bounded by a count and by `timeLimitMs`; network only to 127.0.0.1.
const helper = require('node-red-node-test-helper');
const { nodeRedMain, fromNodeRed } = require('../test/helpers/node-red');
const { hooks } = fromNodeRed('@node-red/util');
const { request } = require('undici');

helper.init(nodeRedMain);

const catchNode = fromNodeRed('@node-red/nodes/core/common/25-catch.js');
const configNode = require('../nodes/kaleyra-config.js');
const whatsappNode = require('../nodes/kaleyra-whatsapp.js');
const callStatusNode = require('../nodes/kaleyra-call-status.js');
const { Simulator } = require('../dist/simulator');

const HOOK = 'kaleyraSoak';
const TAB = 'soak-tab';

const DEFAULTS = {
  messages: 10_000,
  statuses: 2_000,
  /** Redeploy once this many msgs are answered (0: no redeploy). */
  redeployAfter: 5_000,
  /** Msgs fed but not answered yet, at most (the rest wait in the feeder); default min(1000, N / 6). */
  maxOutstanding: undefined,
  concurrency: 16,
  queueSize: 20_000,
  timeoutSeconds: 1,
  retries: 2,
  errorRate: 0.1,
  resetRate: 0.05,
  stallRate: 0.05,
  stallMs: 3_000,
  seed: 20261,
  /** The whole run, feeding and waiting included. */
  timeLimitMs: 240_000,
  /** After the last answer: how long to keep listening for a second answer to any msg. */
  settleMs: 500,
  /** Progress line every this many answers (0: none). */
  progressEvery: 2_000,
  log: (line) => console.log(line),
};

function soakFlow(urls, o) {
  return [
    { id: TAB, type: 'tab', label: 'soak' },
    {
      id: 'soak-acct',
      type: 'kaleyra-config',
      name: 'soak account',
      ...urls,
      simulator: false,
      timeout: o.timeoutSeconds,
      concurrency: o.concurrency,
      rateLimit: 0,
      queueSize: o.queueSize,
      retries: o.retries,
    },
    { id: 'soak-wa', type: 'kaleyra-whatsapp', z: TAB, name: 'wa', account: 'soak-acct', wires: [['soak-wa-out']] },
    { id: 'soak-wa-out', type: 'helper', z: TAB },
    { id: 'soak-cs', type: 'kaleyra-call-status', z: TAB, name: 'cs', account: 'soak-acct', wires: [['soak-cs-out']] },
    { id: 'soak-cs-out', type: 'helper', z: TAB },
    { id: 'soak-catch', type: 'catch', z: TAB, scope: null, uncaught: false, wires: [['soak-caught']] },
    { id: 'soak-caught', type: 'helper', z: TAB },
  ];
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `promise`'s value, or `fallback` after `ms`; the timer is cleared either way (it must not hold the process). */
function within(promise, ms, fallback) {
  let timer;
  return Promise.race([promise, new Promise((r) => (timer = setTimeout(r, ms, fallback)))]).finally(() => clearTimeout(timer));
}

/** Does the simulator's HTTP 503 carry a Retry-After? (Decides whether the policy allows resending a send.) */
async function probeRetryAfter(sim, urls) {
  sim.setFaults('voice', { errorRate: 1 });
  try {
    for (let n = 0; n < 40; n++) {
      const res = await request(`${urls.voiceUrl}/v1/?method=dial.click2call`, { method: 'GET' });
      await res.body.dump();
      if (res.statusCode === 503) return res.headers['retry-after'] !== undefined;
    }
    return false;
  } finally {
    sim.setFaults('voice', {});
  }
}

function bump(map, key, by = 1) {
  map[key] = (map[key] ?? 0) + by;
}

/**
 * Runs the soak and resolves to its report. `opts` overrides DEFAULTS. Never rejects for lost or
 * duplicated msgs: the report says so (`ok` false); it rejects only when the harness itself fails.
 */
async function runSoak(opts = {}) {
  const o = { ...DEFAULTS, ...opts };
  const log = o.log;
  const started = Date.now();
  const deadline = started + o.timeLimitMs;
  const N = o.messages + o.statuses;
  const maxOutstanding = o.maxOutstanding ?? Math.max(1, Math.min(1000, Math.ceil(N / 6)));

  const sim = new Simulator({ seed: o.seed });
  const urls = await sim.start();
  const simRetryAfter = await probeRetryAfter(sim, urls);
  sim.clear();

  // The plan: msg i is a call-status read when the running share of reads steps up, else a send.
  const kind = new Array(N);
  const callId = new Array(N);
  for (let i = 0, reads = 0; i < N; i++) {
    const due = Math.floor(((i + 1) * o.statuses) / N);
    if (due > reads) {
      reads++;
      kind[i] = 'cs';
      callId[i] = sim.addCall({ mobile: `9198${String(10_000_000 + i).slice(-8)}`, status: 'COMPLETED' }).id;
    } else kind[i] = 'wa';
  }
  const indexOfCall = new Map(callId.map((id, i) => [id, i]).filter(([id]) => id !== undefined));

  const fault = { errorRate: o.errorRate, resetRate: o.resetRate, stallRate: o.stallRate, stallMs: o.stallMs };
  sim.setFaults('messaging', { ...fault, seed: o.seed });
  sim.setFaults('obd', { ...fault, seed: o.seed + 100 });

  // Per msg i.
  const done = new Uint16Array(N); // done() calls
  const answers = new Uint16Array(N); // outputs sent + errors that reached the Catch node
  const wired = new Uint16Array(N); // what the collectors got (outputs + caught errors)
  const fedGen = new Int8Array(N).fill(-1);
  const doneGen = new Int8Array(N).fill(-1);
  const outcome = new Array(N); // 'output' or the error code
  const outputIds = new Array(N); // ids in an output's payload (sends)
  const errorText = new Array(N);
  const fedAt = new Float64Array(N); // times, to explain an odd outcome
  const doneAt = new Float64Array(N);
  // Answered into a flow that Node-RED was stopping: answered after 'flows:stopping', or answered before
  // it with the delivery to the collector still pending (the runtime delivers on setImmediate).
  const intoStopped = new Uint8Array(N);

  const gens = new Map(); // node instance -> generation
  let flowStopping = false;
  let gen = 0;
  let answered = 0;
  let fed = 0;
  const anomalies = [];
  const anomaly = (text) => {
    if (anomalies.length < 50) anomalies.push(text);
  };
  // Outcomes the policy allows but worth a look (a send that timed out after the service took it).
  const notes = [];
  const note = (text) => {
    if (notes.length < 50) notes.push(text);
  };
  let notify;
  const changed = () => notify?.();
  const waitChange = (ms) =>
    new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      notify = () => {
        clearTimeout(t);
        notify = undefined;
        resolve();
      };
    });

  const indexOf = (msg) => (msg && Number.isInteger(msg.soakIndex) && msg.soakIndex >= 0 && msg.soakIndex < N ? msg.soakIndex : -1);
  const isOurs = (id) => id === 'soak-wa' || id === 'soak-cs';

  function answer(i, what) {
    answers[i]++;
    if (flowStopping) intoStopped[i] = 1;
    if (answers[i] === 1) {
      answered++;
      if (o.progressEvery && answered % o.progressEvery === 0) {
        log(`soak: ${answered}/${N} answered, ${((Date.now() - started) / 1000).toFixed(1)} s`);
      }
      changed();
    } else anomaly(`msg ${i} answered ${answers[i]} times (last: ${what})`);
  }

  hooks.add(`onSend.${HOOK}`, (events) => {
    for (const e of events) {
      if (!isOurs(e.source?.id)) continue;
      const i = indexOf(e.msg);
      if (i < 0) continue;
      outputIds[i] = Array.isArray(e.msg.payload) ? e.msg.payload.map((r) => r && r.id) : undefined;
      answer(i, 'output');
    }
  });
  hooks.add(`onReceive.${HOOK}`, (e) => {
    if (e.destination?.id !== 'soak-catch') return;
    const i = indexOf(e.msg);
    if (i >= 0 && isOurs(e.msg.error?.source?.id)) answer(i, `error ${e.msg.error.code}`);
  });
  hooks.add(`onComplete.${HOOK}`, (e) => {
    if (!isOurs(e.node?.id)) return;
    const i = indexOf(e.msg);
    if (i < 0) return;
    done[i]++;
    const g = gens.get(e.node.node) ?? -1;
    doneGen[i] = g;
    outcome[i] = e.error ? String(e.error.code ?? 'NO_CODE') : 'output';
    if (e.error) errorText[i] = String(e.error.message);
    doneAt[i] = Date.now();
    if (done[i] > 1) anomaly(`msg ${i}: done() called ${done[i]} times`);
  });

  const modules = [catchNode, configNode, whatsappNode, callStatusNode];
  const flow = soakFlow(urls, o);
  const credentials = { 'soak-acct': { apiKey: 'simulatorkey' } };
  let nodes;

  function attach() {
    gen++;
    const wa = helper.getNode('soak-wa');
    const cs = helper.getNode('soak-cs');
    if (!wa || !cs) throw new Error('the soak flow did not start');
    gens.set(wa, gen);
    gens.set(cs, gen);
    const collect = (m) => {
      const i = indexOf(m);
      if (i >= 0) wired[i]++;
    };
    for (const id of ['soak-wa-out', 'soak-cs-out', 'soak-caught']) helper.getNode(id).on('input', collect);
    nodes = { wa, cs };
  }

  const redeploy = { done: false };
  const report = { N, messages: o.messages, statuses: o.statuses, simRetryAfter };
  try {
    await helper.load(modules, flow, credentials);
    attach();

    async function doRedeploy() {
      const old = nodes;
      const client = await helper.getNode('soak-acct').client();
      redeploy.at = Date.now() - started;
      redeploy.answeredBefore = answered;
      redeploy.outstanding = fed - answered;
      redeploy.inFlight = client.flow.inFlight;
      redeploy.queued = client.flow.queued;
      const t0 = Date.now();
      helper._events.once('flows:stopping', () => {
        flowStopping = true;
        for (let i = 0; i < N; i++) if (answers[i] > 0 && wired[i] === 0) intoStopped[i] = 1;
      });
      const stopped = new Promise((resolve) => helper._events.once('flows:stopped', () => resolve(Date.now() - t0)));
      const restarted = new Promise((resolve) => helper._events.once('flows:started', () => resolve(Date.now() - t0)));
      try {
        await helper.setFlows(flow, 'full', credentials);
      } catch (err) {
        // The helper listens for 'flows:started' only after setFlows returned, and gives up after 300 ms
        // when it missed it: the nodes below tell whether the flow really started.
        if (!/timeout waiting event/.test(err.message)) throw err;
      }
      redeploy.closeMs = await within(stopped, 20_000, -1);
      redeploy.restartMs = await within(restarted, 20_000, -1);
      if (helper.getNode('soak-wa') === old.wa) throw new Error('the redeploy did not replace the nodes');
      attach();
      flowStopping = false;
      redeploy.done = true;
      log(
        `soak: redeployed (full) at ${(redeploy.at / 1000).toFixed(1)} s with ${redeploy.outstanding} msgs outstanding ` +
          `(${redeploy.inFlight} requests in flight, ${redeploy.queued} queued); old nodes closed in ${redeploy.closeMs} ms, new flow up after ${redeploy.restartMs} ms`,
      );
    }

    // Feed: bounded outstanding, paused during the redeploy, bounded in time.
    while (fed < N && Date.now() < deadline) {
      if (o.redeployAfter > 0 && !redeploy.done && answered >= o.redeployAfter) {
        await doRedeploy();
        continue;
      }
      if (fed - answered >= maxOutstanding) {
        await waitChange(50);
        continue;
      }
      const batch = Math.min(N - fed, maxOutstanding - (fed - answered), 64);
      for (let k = 0; k < batch; k++) {
        const i = fed++;
        fedGen[i] = gen;
        fedAt[i] = Date.now();
        if (kind[i] === 'wa') nodes.wa.receive({ soakIndex: i, payload: `soak ${i}`, to: `9197${String(10_000_000 + i).slice(-8)}`, from: '918000000000' });
        else nodes.cs.receive({ soakIndex: i, payload: callId[i] });
      }
      await new Promise((r) => setImmediate(r)); // let the runtime breathe between batches
    }
    // Wait for the last answers, then a little longer for any second answer.
    while (answered < N && Date.now() < deadline) {
      if (o.redeployAfter > 0 && !redeploy.done && answered >= o.redeployAfter) await doRedeploy();
      else await waitChange(100);
    }
    const lastAnswer = Date.now();
    await sleep(o.settleMs);
    report.timedOut = answered < N;
    report.feedAndAnswerMs = lastAnswer - started;
    // What the runtime logged for our nodes (an error is logged only when no Catch node took it).
    const spy = helper.log();
    report.logged = {};
    for (const [e] of spy.args) {
      if (e && typeof e.id === 'string' && e.id.startsWith('soak-') && (e.level === spy.ERROR || e.level === spy.WARN)) {
        bump(report.logged, `${e.level === spy.ERROR ? 'error' : 'warn'} ${e.id}`);
      }
    }
  } finally {
    const t0 = Date.now();
    await helper.unload().catch(() => undefined);
    report.unloadMs = Date.now() - t0;
    hooks.remove(`*.${HOOK}`);
    await sim.stop();
  }

  // Node and runtime level.
  let lost = 0;
  let dupAnswers = 0;
  let doneNotOnce = 0;
  let wireMismatch = 0;
  let unroutable = 0;
  let wrongGeneration = 0;
  const outcomes = {};
  const unroutableCodes = {};
  for (let i = 0; i < N; i++) {
    if (answers[i] === 0) lost++;
    if (answers[i] > 1) dupAnswers++;
    if (done[i] !== 1) doneNotOnce++;
    if (outcome[i] !== undefined) bump(outcomes, outcome[i]);
    if (fedGen[i] >= 0 && doneGen[i] >= 0 && fedGen[i] !== doneGen[i]) {
      wrongGeneration++;
      anomaly(`msg ${i} fed to generation ${fedGen[i]} but finished by ${doneGen[i]}`);
    }
    if (wired[i] !== answers[i]) {
      if (intoStopped[i] && wired[i] === 0 && answers[i] === 1) {
        unroutable++;
        bump(unroutableCodes, outcome[i]);
      } else {
        wireMismatch++;
        anomaly(`msg ${i}: ${answers[i]} answers but ${wired[i]} reached the collectors`);
      }
    }
  }
  const fedTo = {};
  for (let i = 0; i < fed; i++) bump(fedTo, `generation ${fedGen[i]}`);
  const oldNodeAnswers = {};
  for (let i = 0; i < N; i++) if (intoStopped[i]) bump(oldNodeAnswers, outcome[i]);

  // The simulator's log.
  const sendRequests = new Map(); // marker index -> fault labels in order ('' when answered normally)
  const readRequests = new Map();
  const sendTimes = new Map();
  for (const r of sim.requests) {
    let i;
    if (r.endpoint === 'messaging') {
      try {
        const m = /^soak (\d+)$/.exec(JSON.parse(r.fields.body ?? '{}')?.text?.message ?? '');
        i = m ? Number(m[1]) : undefined;
      } catch {
        i = undefined;
      }
      if (i === undefined) continue;
      (sendRequests.get(i) ?? sendRequests.set(i, []).get(i)).push(r.fault ?? '');
      (sendTimes.get(i) ?? sendTimes.set(i, []).get(i)).push(r.at);
    } else if (r.endpoint === 'obd') {
      i = indexOfCall.get(r.fields.id);
      if (i === undefined) continue;
      (readRequests.get(i) ?? readRequests.set(i, []).get(i)).push(r.fault ?? '');
    }
  }
  const accepted = new Map(); // marker index -> sim ids
  const acceptedAt = new Map();
  for (const m of sim.messages) {
    const x = /^soak (\d+)$/.exec(m.body?.text?.message ?? '');
    if (!x) continue;
    const i = Number(x[1]);
    (accepted.get(i) ?? accepted.set(i, []).get(i)).push(m.recipients.map((r) => r.id));
    acceptedAt.set(i, m.at);
  }
  let duplicated = 0;
  let sendsRetried = 0;
  let policyViolations = 0;
  let acceptedButFailed = 0;
  let outputNotAccepted = 0;
  let idMismatch = 0;
  // The policy allows resending a send only when it provably did not arrive: never seen by a server
  // (so not in this log), or refused with 503/429 and a Retry-After.
  const allowedRetryAfter = new Set(simRetryAfter ? ['http503'] : []);
  for (const [i, faults] of sendRequests) {
    if (faults.length > 1) {
      sendsRetried++;
      if (!faults.slice(0, -1).every((f) => allowedRetryAfter.has(f))) {
        policyViolations++;
        anomaly(`send ${i} requested ${faults.length} times: ${faults.map((f) => f || 'ok').join(',')}`);
      }
    }
  }
  const faultsSeen = {};
  for (const r of sim.requests) if (r.fault) bump(faultsSeen, `${r.endpoint}:${r.fault}`);
  for (let i = 0; i < N; i++) {
    if (kind[i] !== 'wa') continue;
    const acc = accepted.get(i) ?? [];
    if (acc.length > 1) {
      duplicated++;
      anomaly(`send ${i} accepted ${acc.length} times`);
    }
    if (acc.length >= 1 && outcome[i] !== undefined && outcome[i] !== 'output') {
      acceptedButFailed++;
      note(`send ${i} accepted but failed with ${outcome[i]} (requests: ${(sendRequests.get(i) ?? []).map((f) => f || 'ok').join(',')}${intoStopped[i] ? ', during the redeploy' : ''}; ms after it was fed: received ${(sendTimes.get(i) ?? []).map((t) => t - fedAt[i]).join(',')}, accepted ${acceptedAt.get(i) - fedAt[i]}, failed ${doneAt[i] - fedAt[i]}): ${errorText[i]}`);
    }
    if (acc.length === 0 && outcome[i] === 'output') {
      outputNotAccepted++;
      anomaly(`send ${i} output without an accepted send`);
    }
    if (acc.length === 1 && outcome[i] === 'output' && JSON.stringify(acc[0]) !== JSON.stringify(outputIds[i])) {
      idMismatch++;
      anomaly(`send ${i}: output ids ${JSON.stringify(outputIds[i])}, simulator ids ${JSON.stringify(acc[0])}`);
    }
  }
  let readsRetried = 0;
  let readExtraRequests = 0;
  let readsOverBudget = 0;
  let readsRetriedAfterAnswer = 0;
  for (const [i, faults] of readRequests) {
    if (faults.length > 1) {
      readsRetried++;
      readExtraRequests += faults.length - 1;
    }
    // A read is retried after a failure only: every request but the last met a fault.
    if (faults.slice(0, -1).some((f) => f === '')) {
      readsRetriedAfterAnswer++;
      anomaly(`read ${i} requested again after an answer: ${faults.map((f) => f || 'ok').join(',')}`);
    }
    if (faults.length > 1 + o.retries) {
      readsOverBudget++;
      anomaly(`read ${i} requested ${faults.length} times`);
    }
  }

  Object.assign(report, {
    elapsedMs: Date.now() - started,
    fed,
    answered,
    lost,
    duplicated,
    dupAnswers,
    doneNotOnce,
    wireMismatch,
    unroutable,
    unroutableCodes,
    oldNodeAnswers,
    fedTo,
    wrongGeneration,
    outcomes,
    faultsSeen,
    sendsRetried,
    policyViolations,
    acceptedButFailed,
    outputNotAccepted,
    idMismatch,
    readsRetried,
    readExtraRequests,
    readsOverBudget,
    readsRetriedAfterAnswer,
    redeploy: o.redeployAfter > 0 ? redeploy : undefined,
    requests: sim.requests.length,
    acceptedSends: sim.messages.length,
    anomalies,
    notes,
  });
  report.ok =
    lost === 0 &&
    duplicated === 0 &&
    dupAnswers === 0 &&
    doneNotOnce === 0 &&
    wireMismatch === 0 &&
    wrongGeneration === 0 &&
    policyViolations === 0 &&
    outputNotAccepted === 0 &&
    idMismatch === 0 &&
    readsOverBudget === 0 &&
    readsRetriedAfterAnswer === 0 &&
    !report.timedOut &&
    (o.redeployAfter === 0 || redeploy.done);
  return report;
}

const fmt = (counts) =>
  Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'none';

/** The report as the lines the soak prints; the last one is the summary line. */
function describe(r) {
  const lines = [];
  const errors = Object.fromEntries(Object.entries(r.outcomes).filter(([k]) => k !== 'output'));
  lines.push(`soak: elapsed ${(r.elapsedMs / 1000).toFixed(1)} s (feeding and answers ${(r.feedAndAnswerMs / 1000).toFixed(1)} s, unload ${r.unloadMs} ms)`);
  lines.push(`soak: simulator faults injected: ${fmt(r.faultsSeen)}; ${r.requests} requests, ${r.acceptedSends} sends accepted`);
  lines.push(`soak: outputs ${r.outcomes.output ?? 0}; errors by code: ${fmt(errors)}`);
  if (r.redeploy) {
    const d = r.redeploy;
    lines.push(
      d.done
        ? `soak: redeploy at ${d.answeredBefore} answered: ${d.outstanding} outstanding (${d.inFlight} in flight, ${d.queued} queued); old nodes closed in ${d.closeMs} ms; fed to the flow before / after it: ${fmt(r.fedTo)}; answered by the old nodes into their stopping flow: ${fmt(r.oldNodeAnswers)}`
        : 'soak: the redeploy did not happen',
    );
    lines.push(
      `soak: of those, not routed to the collectors (Node-RED drops what a stopped flow sends; counted from the runtime hooks): ${r.unroutable} (${fmt(r.unroutableCodes)})`,
    );
  }
  lines.push(
    `soak: sends requested more than once: ${r.sendsRetried} (simulator 503 carries Retry-After: ${r.simRetryAfter ? 'yes' : 'no'}; against the retry policy: ${r.policyViolations}); ` +
      `accepted but reported failed (allowed: ADR 0002, a timeout after the body was written): ${r.acceptedButFailed}; output without an accepted send: ${r.outputNotAccepted}; output ids differing from the simulator's: ${r.idMismatch}`,
  );
  lines.push(`soak: warnings and errors the runtime logged for the soak's nodes: ${fmt(r.logged ?? {})}`);
  lines.push(`soak: reads retried: ${r.readsRetried} (${r.readExtraRequests} extra requests; over the retry budget: ${r.readsOverBudget}; retried after an answer: ${r.readsRetriedAfterAnswer})`);
  lines.push(
    `soak: done() not exactly once: ${r.doneNotOnce}; answered twice: ${r.dupAnswers}; collectors disagreeing with the runtime: ${r.wireMismatch}; finished by the wrong flow generation: ${r.wrongGeneration}${r.timedOut ? '; TIMED OUT' : ''}`,
  );
  for (const n of r.notes.slice(0, 5)) lines.push(`soak: note: ${n}`);
  for (const a of r.anomalies.slice(0, 10)) lines.push(`soak: ! ${a}`);
  lines.push(`soak: N counts both kinds: ${r.messages} whatsapp sends + ${r.statuses} call-status reads; duplicated = sends the simulator accepted more than once`);
  lines.push(`soak: ${r.N} messages, ${r.answered} answered, ${r.lost} lost, ${r.duplicated} duplicated`);
  return lines;
}

module.exports = { runSoak, describe, DEFAULTS };
