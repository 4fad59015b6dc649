'use strict';
// Start-up and package size (npm run bench, or node bench/startup.js [--runs 15]).
//   - load: in a fresh process each run, the time to require every nodes/*.js the package declares and
//     call its register function with a stub RED (what Node-RED does at start), measured inside the
//     process (process start-up itself aside); the median of `runs`, and the modules it loaded;
//   - size: `npm pack --dry-run --json`: packed size, unpacked size, file count.
const { execFileSync, spawnSync } = require('node:child_process');
const path = require('node:path');
const { median, num, main } = require('./lib/common');

const ROOT = path.join(__dirname, '..');

// Runs in the fresh process: loads and registers every node, prints the time and the module count.
const LOAD = (ROOT) => `
const t0 = process.hrtime.bigint();
const before = new Set(Object.keys(require.cache));
const pkg = require(${JSON.stringify(path.join(ROOT, 'package.json'))});
const registered = [];
const RED = {
  nodes: { createNode() {}, getNode() { return null; }, registerType(type) { registered.push(type); } },
  util: { evaluateNodeProperty() {} },
  settings: {},
  log: { debug() {}, info() {}, warn() {}, error() {} },
  _: (key) => key,
};
for (const file of Object.values(pkg['node-red'].nodes)) require(require('node:path').join(${JSON.stringify(ROOT)}, file))(RED);
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
const loaded = Object.keys(require.cache).filter((f) => !before.has(f));
console.log(JSON.stringify({ ms, registered, modules: loaded.length, deps: [...new Set(loaded.map((f) => (/node_modules\\/((@[^/]+\\/)?[^/]+)/.exec(f) || [])[1]).filter(Boolean))] }));
`;

function loadOnce(root) {
  const r = spawnSync(process.execPath, ['-e', LOAD(root)], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the load failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

function packSize(root) {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const [p] = JSON.parse(out);
  return { size: p.size, unpackedSize: p.unpackedSize, files: p.entryCount };
}

async function run(opts = {}) {
  // --root <dir>: another copy of the package (a build of other sources), to compare.
  const o = { runs: 15, root: ROOT, log: console.log, ...opts };
  const root = path.resolve(String(o.root));
  loadOnce(root); // warms the file system cache
  const runs = [];
  for (let i = 0; i < o.runs; i++) runs.push(loadOnce(root));
  const ms = median(runs.map((r) => r.ms));
  const { registered, modules, deps } = runs[0];
  o.log(`startup: require + register of ${registered.length} node types (${registered.join(', ')}): median ${ms.toFixed(1)} ms of ${o.runs} fresh processes (min ${Math.min(...runs.map((r) => r.ms)).toFixed(1)}, max ${Math.max(...runs.map((r) => r.ms)).toFixed(1)})`);
  o.log(`startup: ${modules} modules loaded; packages: ${deps.join(', ') || 'none'}`);
  const p = packSize(root);
  o.log(`startup: npm pack: ${num(p.size / 1024, 1)} kB packed, ${num(p.unpackedSize / 1024, 1)} kB unpacked, ${p.files} files`);
  return {
    rows: [
      { bench: `start-up: require + register all ${registered.length} nodes`, value: `${ms.toFixed(1)} ms`, compared: `median of ${o.runs} fresh processes; ${modules} modules (${deps.join(', ') || 'no packages'})`, target: 'report', met: true },
      { bench: 'package size (npm pack)', value: `${num(p.size / 1024, 1)} kB packed`, compared: `${num(p.unpackedSize / 1024, 1)} kB unpacked, ${p.files} files`, target: 'report', met: true },
    ],
  };
}

module.exports = { run };

if (require.main === module) main('startup', run);
