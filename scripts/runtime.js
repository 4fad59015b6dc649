'use strict';
// The Node.js this package runs on (package.json engines.node), brought from the npm registry when the
// machine's own is older: the registry's `node` package carries the official binary, installed into
// .matrix/node-<major>/ (ignored by git) once. Used by `npm start` (scripts/start.js) and by `npm test`
// (test/setup.js installs the matrix's versions, test/matrix.js runs each leg on its own).
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** The oldest Node.js the package supports, read from engines.node (">=22.19.0"). */
const MINIMUM = /(\d+\.\d+\.\d+)/.exec(require(path.join(ROOT, 'package.json')).engines.node)[1];

/** Whether version "a.b.c" is at least "x.y.z". */
function atLeast(version, minimum) {
  const [a, b] = [version, minimum].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return true;
}

/** Installs `spec` into `dir` (its own node_modules, nothing saved), from the npm cache when it has it; the exit code. */
function npmInstall(dir, spec) {
  fs.mkdirSync(dir, { recursive: true });
  const r = spawnSync(npm, ['install', '--prefix', dir, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', spec], { stdio: 'inherit' });
  return r.error ? 127 : (r.status ?? 1);
}

/** Where Node.js `major` lives once installed. */
function nodePath(major) {
  return path.join(ROOT, '.matrix', `node-${major}`, 'node_modules', 'node', 'bin', process.platform === 'win32' ? 'node.exe' : 'node');
}

/** The version an installed binary reports, or undefined when it is missing or does not run. */
function versionOf(binary) {
  if (!fs.existsSync(binary)) return undefined;
  const r = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim().replace(/^v/, '') : undefined;
}

/**
 * The path of Node.js `major` (newest release of that line on the registry), installed when missing or
 * older than the package's minimum. Throws, naming the command that failed, when it cannot be installed.
 */
function ensureNode(major, log = (line) => console.log(line)) {
  const binary = nodePath(major);
  const have = versionOf(binary);
  if (have && atLeast(have, MINIMUM)) return binary;
  const dir = path.join(ROOT, '.matrix', `node-${major}`);
  log(`installing Node.js ${major} from the npm registry (npm install --prefix ${path.relative(ROOT, dir)} node@${major})`);
  const status = npmInstall(dir, `node@${major}`);
  const got = versionOf(binary);
  if (status !== 0 || !got) throw new Error(`could not install Node.js ${major}: npm install node@${major} exited with ${status}`);
  if (!atLeast(got, MINIMUM)) throw new Error(`Node.js ${got} from the registry is older than the package's minimum ${MINIMUM}`);
  return binary;
}

/** The Node.js to run the package with: this one when it is recent enough, else Node.js 22 from the registry. */
function supportedNode(log) {
  return atLeast(process.versions.node, MINIMUM) ? process.execPath : ensureNode(22, log);
}

module.exports = { MINIMUM, atLeast, ensureNode, npmInstall, supportedNode, versionOf };

// `node scripts/runtime.js <script> [args]`: runs the script on a supported Node.js (npm run soak, bench,
// simulator), with its exit code.
if (require.main === module) {
  const node = supportedNode((line) => console.error(line));
  const r = spawnSync(node, process.argv.slice(2), { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
