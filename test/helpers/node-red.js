'use strict';
// Which Node-RED the tests run against: the project's own (node_modules/node-red), or the one named by
// KALEYRA_NODE_RED_DIR (the version matrix, test/matrix.js). Everything that reaches into Node-RED
// (the runtime, its core nodes, its hooks, its ws) goes through here, so one variable switches it all.
const path = require('node:path');

const nodeRedDir = process.env.KALEYRA_NODE_RED_DIR
  ? path.resolve(process.env.KALEYRA_NODE_RED_DIR)
  : path.dirname(require.resolve('node-red/package.json'));

/** The runtime's entry (what node-red-node-test-helper's init takes). */
const nodeRedMain = require.resolve(nodeRedDir);

/** Requires a module as Node-RED itself would resolve it (its own @node-red/*, ws, ...). */
function fromNodeRed(id) {
  return require(require.resolve(id, { paths: [nodeRedDir] }));
}

module.exports = { nodeRedDir, nodeRedMain, fromNodeRed };
