#!/usr/bin/env node
'use strict';
// `npm test`: the whole suite on every supported Node-RED: the project's own 4.x and 3.1 under this
// Node.js, 5.x under Node.js 22 (which it needs), and 4.x and 5.x under Node.js 24 (Node.js 22 and 24
// fetched from the npm registry as the `node` package). Other Node-RED versions are installed once into .matrix/ (ignored by git). Each run is the
// same mocha suite, pointed at its Node-RED by KALEYRA_NODE_RED_DIR (test/helpers/node-red.js).
// KALEYRA_MATRIX=4 (or 3.1, 5, 4@24, 5@24, comma-separated) runs only those.
const { spawnSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const mocha = require.resolve('mocha/bin/mocha.js', { paths: [root] });
const TARGETS = [
  { key: '4', label: 'Node-RED 4 (project), Node.js ' + process.versions.node },
  { key: '3.1', label: 'Node-RED 3.1, Node.js ' + process.versions.node, install: 'node-red@~3.1.0' },
  { key: '5', label: 'Node-RED 5, Node.js 22', install: 'node-red@^5.0.0', node: '22' },
  // The editor runs in the browser, whatever the server's Node.js: its tests run on the legs above, which
  // cover Node-RED 3.1, 4 and 5; the Node.js 24 legs run everything else, to keep npm test near 15 minutes.
  { key: '4@24', label: 'Node-RED 4 (project), Node.js 24', node: '24', ignore: 'test/browser.test.js' },
  { key: '5@24', label: 'Node-RED 5, Node.js 24', install: 'node-red@^5.0.0', node: '24', dir: '5', ignore: 'test/browser.test.js' },
];
const only = process.env.KALEYRA_MATRIX ? process.env.KALEYRA_MATRIX.split(',').map((s) => s.trim()) : null;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

function installed(target) {
  const dir = path.join(root, '.matrix', `node-red-${target.dir ?? target.key}`);
  const pkg = path.join(dir, 'node_modules', 'node-red', 'package.json');
  if (!fs.existsSync(pkg)) {
    console.log(`matrix: installing ${target.install} into ${path.relative(root, dir)}`);
    fs.mkdirSync(dir, { recursive: true });
    const r = spawnSync(npm, ['install', '--prefix', dir, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', target.install], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`could not install ${target.install}`);
  }
  return path.dirname(pkg);
}

function run(target) {
  return new Promise((resolve) => {
    const env = { ...process.env };
    if (target.install) env.KALEYRA_NODE_RED_DIR = installed(target);
    else delete env.KALEYRA_NODE_RED_DIR;
    const version = require(path.join(env.KALEYRA_NODE_RED_DIR ?? path.dirname(require.resolve('node-red/package.json', { paths: [root] })), 'package.json')).version;
    console.log(`\nmatrix: ${target.label} (node-red ${version})${target.ignore ? `, without ${target.ignore}` : ''}`);
    const mochaArgs = [mocha, ...(target.ignore ? ['--ignore', target.ignore] : [])];
    const [cmd, args] = target.node ? [npx, ['-y', '-p', `node@${target.node}`, 'node', ...mochaArgs]] : [process.execPath, mochaArgs];
    const child = spawn(cmd, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let tail = '';
    let line = '';
    const failures = [];
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      tail = (tail + chunk).slice(-4000);
      const lines = (line + chunk).split('\n');
      line = lines.pop();
      for (const l of lines) if (l.startsWith('mocha: failed: ')) failures.push(l.slice('mocha: failed: '.length));
    });
    child.on('close', (code) => {
      const m = /mocha: (\d+) passed, (\d+) failed, (\d+) skipped/.exec(tail);
      resolve({ target, version, code, failures, passed: m ? +m[1] : 0, failed: m ? +m[2] : 0, skipped: m ? +m[3] : 0, summary: !!m });
    });
  });
}

(async () => {
  const results = [];
  for (const target of TARGETS.filter((t) => !only || only.includes(t.key))) {
    try {
      results.push(await run(target));
    } catch (err) {
      console.error(`matrix: ${target.label}: ${err.message}`);
      results.push({ target, version: '?', code: 1, failures: [], passed: 0, failed: 0, skipped: 0, summary: false });
    }
  }
  console.log('\nmatrix results:');
  for (const r of results) {
    console.log(`  ${r.target.label} (node-red ${r.version}): ${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped${r.code !== 0 ? ` (exit ${r.code})` : ''}`);
    for (const f of r.failures) console.log(`    failed: ${f}`);
  }
  const sum = (k) => results.reduce((n, r) => n + r[k], 0);
  const ok = results.length > 0 && results.every((r) => r.code === 0 && r.summary);
  // One closing line for all runs, in the plain form CI reads.
  console.log(`mocha: ${sum('passed')} passed, ${sum('failed')} failed, ${sum('skipped')} skipped`);
  process.exit(ok ? 0 : 1);
})();
