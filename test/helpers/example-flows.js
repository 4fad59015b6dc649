'use strict';
// Runs a flow file of examples/ in the real Node-RED runtime (node-red-node-test-helper): its debug nodes
// become helper nodes of the same id (their messages are collected), its listener nodes get a random
// token as credentials, and the core nodes it uses are loaded from node-red's own @node-red/nodes.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { helper, NODE_MODULES } = require('./flow');
const { fromNodeRed } = require('./node-red');

const EXAMPLES_DIR = path.join(__dirname, '..', '..', 'examples');
const LISTENER_TYPES = ['kaleyra-callback', 'kaleyra-vmn-in'];

/** Core node types an example may use, and the file of @node-red/nodes that registers each. */
const CORE_FILES = {
  inject: 'common/20-inject.js',
  comment: 'common/90-comment.js',
  catch: 'common/25-catch.js',
  status: 'common/25-status.js',
  complete: 'common/24-complete.js',
  'link in': 'common/60-link.js',
  'link out': 'common/60-link.js',
  'link call': 'common/60-link.js',
  function: 'function/10-function.js',
  switch: 'function/10-switch.js',
  change: 'function/15-change.js',
  template: 'function/80-template.js',
  delay: 'function/89-delay.js',
  'http request': 'network/21-httprequest.js',
  json: 'parsers/70-JSON.js',
};

const coreModule = (file) => fromNodeRed(`@node-red/nodes/core/${file}`);

/** The example files, demo.json included, sorted. */
function exampleFiles() {
  return fs
    .readdirSync(EXAMPLES_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort();
}

function readExample(file) {
  return JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8'));
}

/** Types of the flow that neither this package nor the core files above provide. */
function unknownTypes(flow) {
  const known = (t) => t === 'tab' || t === 'debug' || t === 'group' || t === 'junction' || NODE_MODULES[t] || CORE_FILES[t];
  return [...new Set(flow.map((n) => n.type))].filter((t) => !known(t));
}

/** Debug nodes fed by a catch node: where a flow's errors end up. */
function errorDebugIds(flow) {
  const ids = new Set();
  for (const n of flow) if (n.type === 'catch') for (const out of n.wires ?? []) for (const id of out) ids.add(id);
  return [...ids].filter((id) => flow.find((n) => n.id === id)?.type === 'debug');
}

/**
 * Loads `file`; `extraModules` are passed to helper.load too (e.g. HttpNode's capture). Returns the
 * original flow, the loaded one, the tokens given to listener nodes, and `out(id)`: the messages that
 * reached debug node `id` so far.
 */
async function loadExample(file, extraModules = []) {
  const original = readExample(file);
  const missing = unknownTypes(original);
  if (missing.length) throw new Error(`${file} uses node types no module here provides: ${missing.join(', ')}`);
  const flow = structuredClone(original).map((n) => (n.type === 'debug' ? { id: n.id, type: 'helper', z: n.z, name: n.name, wires: [] } : n));
  const credentials = {};
  for (const n of flow) if (LISTENER_TYPES.includes(n.type)) credentials[n.id] = { token: crypto.randomBytes(12).toString('hex') };
  const modules = new Set();
  for (const n of flow) {
    if (NODE_MODULES[n.type]) modules.add(NODE_MODULES[n.type]);
    if (CORE_FILES[n.type]) modules.add(coreModule(CORE_FILES[n.type]));
  }
  // The runtime keeps the credentials object it was given, so it gets a copy.
  await helper.load([...modules, ...extraModules], flow, structuredClone(credentials));
  const received = new Map();
  for (const n of flow.filter((n) => n.type === 'helper')) {
    received.set(n.id, []);
    helper.getNode(n.id).on('input', (msg) => received.get(n.id).push(msg));
  }
  const out = (id) => {
    if (!received.has(id)) throw new Error(`${file} has no debug node ${id}`);
    return received.get(id);
  };
  return { original, flow, credentials, out };
}

/** Log entries at error level or worse, and warnings logged by the nodes of `flow`. */
function problems(flow) {
  const log = helper.log();
  const ids = new Set(flow.map((n) => n.id));
  return log.args
    .map(([entry]) => entry)
    .filter((e) => e && (e.level <= log.ERROR || (e.level === log.WARN && ids.has(e.id))))
    .map((e) => `${e.level <= log.ERROR ? 'error' : 'warn'} ${e.type ?? ''} ${e.id ?? ''}: ${e.msg instanceof Error ? e.msg.message : e.msg}`);
}

module.exports = { EXAMPLES_DIR, LISTENER_TYPES, CORE_FILES, exampleFiles, readExample, unknownTypes, errorDebugIds, loadExample, problems };
