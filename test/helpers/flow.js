'use strict';
// Runs our nodes in the real Node-RED runtime (node-red-node-test-helper) next to a Catch node and a
// Complete node, and collects what each input message turned into: its outputs, its end (Complete for
// done(), Catch for done(err)), statuses and log lines.
const crypto = require('node:crypto');
const helper = require('node-red-node-test-helper');
const { nodeRedMain, fromNodeRed } = require('./node-red');

const catchNode = fromNodeRed('@node-red/nodes/core/common/25-catch.js');
const completeNode = fromNodeRed('@node-red/nodes/core/common/24-complete.js');

helper.init(nodeRedMain);

const NODE_MODULES = {
  'kaleyra-config': require('../../nodes/kaleyra-config.js'),
  'kaleyra-whatsapp': require('../../nodes/kaleyra-whatsapp.js'),
  'kaleyra-inbox': require('../../nodes/kaleyra-inbox.js'),
  'kaleyra-call-status': require('../../nodes/kaleyra-call-status.js'),
  'kaleyra-click2call': require('../../nodes/kaleyra-click2call.js'),
  'kaleyra-callback': require('../../nodes/kaleyra-callback.js'),
  'kaleyra-vmn-in': require('../../nodes/kaleyra-vmn-in.js'),
};

/**
 * Loads config node `cfg` + the node under test `n1` wired to helper `out`, a Catch node wired to helper
 * `caught` and a Complete node (scope n1) wired to helper `completed`. Returns a harness whose `run(msg)`
 * resolves once that message has ended, to its outputs and its Catch message.
 */
async function loadNode(type, props, { config = {}, apiKey = 'TESTKEY0123456789abcdef', extra = [] } = {}) {
  const flow = [
    { id: 'cfg', type: 'kaleyra-config', name: 'acct', timeout: 60, ...config },
    { id: 'n1', type, z: 'f1', name: 'under test', account: 'cfg', ...props, wires: [['out']] },
    { id: 'out', type: 'helper', z: 'f1' },
    { id: 'c1', type: 'catch', z: 'f1', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'caught', type: 'helper', z: 'f1' },
    { id: 'c2', type: 'complete', z: 'f1', scope: ['n1'], uncaught: false, wires: [['completed']] },
    { id: 'completed', type: 'helper', z: 'f1' },
    { id: 'f1', type: 'tab', label: 'test' },
    ...extra,
  ];
  const credentials = apiKey ? { cfg: { apiKey } } : {};
  const modules = [catchNode, completeNode, NODE_MODULES['kaleyra-config']];
  if (type !== 'kaleyra-config') modules.push(NODE_MODULES[type]);
  for (const n of extra) if (NODE_MODULES[n.type] && !modules.includes(NODE_MODULES[n.type])) modules.push(NODE_MODULES[n.type]);
  await helper.load(modules, flow, credentials);
  const node = helper.getNode('n1');
  if (!node) {
    // (not a TypeError further on): the runtime says why, in its log
    const logged = helper.log().args.map(([e]) => e).filter((e) => e && e.level <= helper.log().ERROR);
    const text = (e) => (e.msg instanceof Error ? e.msg.message : typeof e.msg === 'string' ? e.msg : JSON.stringify({ ...e, msg: String(e.msg) }));
    throw new Error(`the node under test (${type}) was not created; the runtime's errors: ${JSON.stringify(logged.map(text)).slice(0, 600)}`);
  }
  const statuses = [];
  const status = node.status.bind(node);
  node.status = (s) => {
    statuses.push(s);
    status(s);
  };
  const outputs = [];
  const errors = [];
  /** run()s waiting for their message to end, by _msgid. */
  const waiting = new Map();
  const ended = (msg, how) => waiting.get(msg._msgid)?.(how, msg);
  helper.getNode('out').on('input', (m) => outputs.push(m));
  helper.getNode('caught').on('input', (m) => {
    errors.push(m);
    ended(m, 'caught');
  });
  helper.getNode('completed').on('input', (m) => ended(m, 'completed'));

  /**
   * Sends msg and resolves once it has ended: its Complete message (done()) or its Catch message
   * (done(err)). An output is delivered before the end is (send() queues it first), so the result holds
   * exactly the message's outputs so far: { output: the last, error: the Catch message, outputs, errors }.
   * Rejects when the message both had an output and went to Catch, and (a safety net) when it has not
   * ended within `timeout` ms.
   */
  function run(msg, timeout = 60_000) {
    if (!msg._msgid) msg._msgid = crypto.randomBytes(8).toString('hex');
    const id = msg._msgid;
    const mine = (list) => list.filter((m) => m._msgid === id);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`the message did not end within ${timeout} ms: no Complete and no Catch message (${mine(outputs).length} outputs so far)`));
      }, timeout);
      waiting.set(id, (how, end) => {
        clearTimeout(timer);
        waiting.delete(id);
        const own = mine(outputs);
        if (how === 'caught' && own.length > 0) {
          reject(new Error(`the message both had ${own.length} output(s) and went to Catch: ${JSON.stringify(end.error)}`));
        } else {
          resolve({ output: own.at(-1), error: how === 'caught' ? end : undefined, outputs: own, errors: how === 'caught' ? [end] : [] });
        }
      });
      node.receive(msg);
    });
  }
  /** The status shown once the node is idle (status updates are throttled, the last one trails). */
  async function finalStatus(timeout = 60_000) {
    const deadline = Date.now() + timeout;
    while (Date.now() < deadline) {
      const last = statuses[statuses.length - 1];
      if (last && last.fill !== 'blue') return last;
      await new Promise((r) => setTimeout(r, 20));
    }
    return statuses[statuses.length - 1];
  }
  return { node, run, statuses, outputs, errors, helper, finalStatus };
}

/**
 * Deploys `flow` as helper.setFlows() does, without its fixed 300 ms wait for the flows to start (which
 * a busy machine misses): resolves once the runtime says they started; `ms` is only a safety net.
 */
async function setFlows(flow, type = 'full', credentials = {}, ms = 60_000) {
  let onStarted;
  let timer;
  const started = new Promise((resolve, reject) => {
    helper._events.on('flows:started', (onStarted = resolve));
    timer = setTimeout(() => reject(new Error(`the flows did not start within ${ms} ms of the ${type} deploy`)), ms);
  });
  try {
    await helper._redNodes.setFlows(flow, credentials, type);
    await started;
  } finally {
    clearTimeout(timer);
    helper._events.off('flows:started', onStarted);
  }
}

/** Everything the runtime logged during the test, as one string. */
function logText() {
  return helper
    .log()
    .args.map((a) => JSON.stringify(a, (k, v) => (v instanceof Error ? { message: v.message, stack: v.stack } : v)))
    .join('\n');
}

/** A status text the nodes send as a key of kaleyra-config's catalog (the editor shows it translated). */
const statusKey = (key) => `@flowcomms/node-red-kaleyra/kaleyra-config:kaleyra-config.status.${key}`;

module.exports = { helper, loadNode, setFlows, logText, NODE_MODULES, catchNode, completeNode, statusKey };
