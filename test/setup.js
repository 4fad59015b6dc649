#!/usr/bin/env node
'use strict';
// `npm test`'s setup, run before any test (test/matrix.js calls it first): everything the tests need that
// a fresh machine lacks, provisioned here and never inside a test or a hook with a timeout.
// - Debian's chromium and redis-server, when missing: one apt-get run that waits for the dpkg lock.
// - The matrix's Node.js versions (the npm registry's `node` package) and Node-RED versions, into .matrix/.
// - The typed client as users get it: the package packed and the tarball installed into .matrix/consumer
//   (test/typed-client.test.js), from the npm cache the project's own install filled.
// It prints what it does and how long each step took. Whatever is still missing afterwards is one clear
// failure naming it (exit code 1), not a cascade of hook timeouts. Tests only look things up (paths below).
// `node test/setup.js --only=4@22` provisions for those legs only (test/matrix.js passes its selection).
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { ensureNode, npmInstall } = require('../scripts/runtime');
const { TOOLS, CONSUMER_DIR, findTool, nodeRedDirOf } = require('./helpers/provisioned');

const ROOT = path.resolve(__dirname, '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const log = (line) => console.log(`setup: ${line}`);

/** Runs `command args` with output passed through; returns its exit code (127 when it cannot start). */
function run(command, args, options = {}) {
  const r = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
  return r.error ? 127 : (r.status ?? 1);
}

/** Times one step, printing its name and duration. */
function step(what, fn) {
  const started = Date.now();
  log(`${what} ...`);
  const result = fn();
  log(`${what}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

/** apt-get update && apt-get install -y, as root or through password-less sudo, waiting up to 10 min for dpkg's lock. */
function aptInstall(packages) {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const lock = ['-o', 'DPkg::Lock::Timeout=600'];
  const apt = (args) => (root ? run('apt-get', [...lock, ...args], { env }) : run('sudo', ['-n', 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...lock, ...args], { env }));
  // apt-get update takes the lists' lock, which DPkg::Lock::Timeout does not cover: a few tries.
  let code = 1;
  for (let i = 0; i < 5 && code !== 0; i++) {
    if (i) spawnSync('sleep', ['10']);
    code = apt(['update', '-qq']);
  }
  return code || apt(['install', '-y', '-qq', '--no-install-recommends', ...packages]);
}

function main() {
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
  const { LEGS } = require('./legs');
  const legs = LEGS.filter((l) => !only || only.includes(l.key));
  const started = Date.now();
  const problems = [];

  const packages = TOOLS.filter((t) => !findTool(t)).map((t) => t.debian);
  // Screenshots for the README show a dialog in Japanese: with a Japanese font (tests read the DOM, not pixels).
  if (process.env.UPDATE_SCREENSHOTS && !spawnSync('fc-list', [':lang=ja'], { encoding: 'utf8' }).stdout?.trim()) packages.push('fonts-ipafont-gothic');
  if (packages.length) {
    step(`installing Debian's ${packages.join(', ')} (apt-get install)`, () => {
      const code = aptInstall(packages);
      if (code !== 0) log(`apt-get exited with ${code}`);
    });
  } else log(`found ${TOOLS.map((t) => findTool(t)).join(', ')}`);
  for (const t of TOOLS) if (!findTool(t)) problems.push(`${t.name} is missing (apt-get install -y ${t.debian} as root); the ${t.for} need it`);

  // Node.js 22 always: `npm start` (and its test) runs Node-RED on it when the machine's own is older.
  for (const major of [...new Set([22, ...legs.map((l) => l.node)])]) {
    try {
      step(`Node.js ${major}`, () => log(`Node.js ${major}: ${ensureNode(major, log)}`));
    } catch (err) {
      problems.push(err.message);
    }
  }
  for (const leg of legs.filter((l) => l.install)) {
    const dir = nodeRedDirOf(leg);
    if (fs.existsSync(path.join(dir, 'package.json'))) continue;
    step(`installing ${leg.install} into ${path.relative(ROOT, path.dirname(path.dirname(dir)))}`, () => {
      const code = npmInstall(path.dirname(path.dirname(dir)), leg.install);
      if (code !== 0 || !fs.existsSync(path.join(dir, 'package.json'))) problems.push(`could not install ${leg.install} (npm exited with ${code})`);
    });
  }

  step('the typed client packed and installed as users get it (.matrix/consumer)', () => {
    fs.rmSync(CONSUMER_DIR, { recursive: true, force: true });
    fs.mkdirSync(CONSUMER_DIR, { recursive: true });
    // npm pack runs prepack (the build): the tarball is what the registry would hold.
    const packed = spawnSync(npm, ['pack', '--json', '--pack-destination', CONSUMER_DIR], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    let tarball;
    try {
      tarball = path.join(CONSUMER_DIR, JSON.parse(packed.stdout)[0].filename);
    } catch {
      problems.push(`npm pack failed (exit code ${packed.status})`);
      return;
    }
    fs.writeFileSync(path.join(CONSUMER_DIR, 'package.json'), JSON.stringify({ name: 'consumer', private: true, version: '1.0.0' }));
    const code = run(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball], { cwd: CONSUMER_DIR });
    if (code !== 0) problems.push(`npm install of the packed tarball failed (exit code ${code})`);
    else fs.writeFileSync(path.join(CONSUMER_DIR, 'tarball.txt'), tarball);
  });

  log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (problems.length) {
    for (const p of problems) console.error(`setup: FAILED: ${p}`);
    process.exitCode = 1;
  }
}

main();
