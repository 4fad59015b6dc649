'use strict';
// Runs our nodes in the real Node-RED runtime (node-red-node-test-helper) next to a Catch node, and
// collects what each input message turned into: an output, a Catch error, statuses and log lines.
const helper = require('node-red-node-test-helper');
const { nodeRedMain, fromNodeRed } = require('./node-red');

const catchNode = fromNodeRed('@node-red/nodes/core/common/25-catch.js');

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
 * Loads config node `cfg` + the node under test `n1` wired to helper `out`, and a Catch node wired
 * to helper `caught`. Returns a harness with `run(msg)` resolving to { output } or { error }.
 */
async function loadNode(type, props, { config = {}, apiKey = 'TESTKEY0123456789abcdef', extra = [] } = {}) {
  const flow = [
    { id: 'cfg', type: 'kaleyra-config', name: 'acct', timeout: 5, ...config },
    { id: 'n1', type, z: 'f1', name: 'under test', account: 'cfg', ...props, wires: [['out']] },
    { id: 'out', type: 'helper', z: 'f1' },
    { id: 'c1', type: 'catch', z: 'f1', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'caught', type: 'helper', z: 'f1' },
    { id: 'f1', type: 'tab', label: 'test' },
    ...extra,
  ];
  const credentials = apiKey ? { cfg: { apiKey } } : {};
  const modules = [catchNode, NODE_MODULES['kaleyra-config']];
  if (type !== 'kaleyra-config') modules.push(NODE_MODULES[type]);
  for (const n of extra) if (NODE_MODULES[n.type] && !modules.includes(NODE_MODULES[n.type])) modules.push(NODE_MODULES[n.type]);
  await helper.load(modules, flow, credentials);
  const node = helper.getNode('n1');
  const statuses = [];
  const status = node.status.bind(node);
  node.status = (s) => {
    statuses.push(s);
    status(s);
  };
  const outputs = [];
  const errors = [];
  helper.getNode('out').on('input', (m) => outputs.push(m));
  helper.getNode('caught').on('input', (m) => errors.push(m));

  /** Sends msg and waits until it has produced one output or one Catch message. */
  function run(msg, timeout = 8000) {
    const before = outputs.length + errors.length;
    node.receive(msg);
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const check = () => {
        if (outputs.length + errors.length > before) {
          // wait a little to make sure nothing else arrives for the same msg
          return setTimeout(() => resolve(settled(before)), 30);
        }
        if (Date.now() - started > timeout) return reject(new Error('no output and no error for the message'));
        setTimeout(check, 5);
      };
      check();
    });
  }
  function settled() {
    return { output: outputs[outputs.length - 1], error: errors[errors.length - 1], outputs, errors };
  }
  /** The status shown once the node is idle (status updates are throttled, the last one trails). */
  async function finalStatus(timeout = 3000) {
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

/** Everything the runtime logged during the test, as one string. */
function logText() {
  return helper
    .log()
    .args.map((a) => JSON.stringify(a, (k, v) => (v instanceof Error ? { message: v.message, stack: v.stack } : v)))
    .join('\n');
}

/** A status text the nodes send as a key of kaleyra-config's catalog (the editor shows it translated). */
const statusKey = (key) => `@flowcomms/node-red-kaleyra/kaleyra-config:kaleyra-config.status.${key}`;

module.exports = { helper, loadNode, logText, NODE_MODULES, catchNode, statusKey };
