'use strict';
// What test/setup.js provisions before any test runs, and where the tests look it up. Tests never install
// anything: a missing tool fails at once, naming it and the setup that brings it.
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..', '..');
/** The packed package installed into a project of its own (test/typed-client.test.js). */
const CONSUMER_DIR = path.join(ROOT, '.matrix', 'consumer');

/** Debian's programs the tests run. */
const TOOLS = [
  { name: 'chromium', debian: 'chromium', for: 'browser tests (test/browser.test.js)', paths: ['/usr/bin/chromium'] },
  { name: 'redis-server', debian: 'redis-server', for: 'Redis tests (test/redis-store.test.js, test/scale-out.test.js)', paths: ['/usr/bin/redis-server'] },
];

/** The path of a tool: on the PATH or where Debian puts it; undefined when missing. */
function findTool(tool) {
  const r = spawnSync('sh', ['-c', `command -v ${tool.name}`], { encoding: 'utf8' });
  if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  return tool.paths.find((p) => fs.existsSync(p));
}

/** The path of the named tool; throws a clear error when it is missing. */
function requireTool(name) {
  const tool = TOOLS.find((t) => t.name === name);
  const found = findTool(tool);
  if (!found) throw new Error(`${name} is missing: npm test's setup installs it (node test/setup.js, as root: apt-get install -y ${tool.debian})`);
  return found;
}

/** The folder of a leg's Node-RED (test/legs.js): installed into .matrix/node-red-<major>, or the project's own. */
function nodeRedDirOf(leg) {
  if (!leg.install) return path.dirname(require.resolve('node-red/package.json', { paths: [ROOT] }));
  return path.join(ROOT, '.matrix', `node-red-${leg.nodeRed}`, 'node_modules', 'node-red');
}

module.exports = { ROOT, CONSUMER_DIR, TOOLS, findTool, requireTool, nodeRedDirOf };
