#!/usr/bin/env node
'use strict';
// `npm test`: first the setup (test/setup.js: Chromium, redis-server, the matrix's Node.js and Node-RED,
// the packed client), then the whole mocha suite on every leg of test/legs.js: Node-RED 4.1 and 5.x on
// Node.js 22 and 24, whatever this machine's own Node.js is (each leg runs on Node.js from .matrix/).
// Each leg is the same suite, pointed at its Node-RED by KALEYRA_NODE_RED_DIR (test/helpers/node-red.js).
// `node test/matrix.js 4@22` (or KALEYRA_MATRIX=4@22,5@24) runs only those legs.
const { spawnSync, spawn } = require('node:child_process');
const path = require('node:path');
const { LEGS } = require('./legs');
const { nodeRedDirOf } = require('./helpers/provisioned');
const { ensureNode } = require('../scripts/runtime');

const root = path.resolve(__dirname, '..');
const mocha = require.resolve('mocha/bin/mocha.js', { paths: [root] });
const picked = process.argv.slice(2).join(',') || process.env.KALEYRA_MATRIX;
const only = picked ? picked.split(',').map((s) => s.trim()) : null;
const unknown = only?.filter((k) => !LEGS.some((l) => l.key === k)) ?? [];
if (unknown.length) {
  console.error(`matrix: no leg ${unknown.join(', ')}; the legs are ${LEGS.map((l) => l.key).join(', ')}`);
  process.exit(2);
}

function run(leg) {
  return new Promise((resolve) => {
    const env = { ...process.env };
    if (leg.install) env.KALEYRA_NODE_RED_DIR = nodeRedDirOf(leg);
    else delete env.KALEYRA_NODE_RED_DIR;
    const version = require(path.join(nodeRedDirOf(leg), 'package.json')).version;
    const node = ensureNode(leg.node);
    // A test that starts `node` or `npm` by name gets the leg's Node.js too.
    env.PATH = `${path.dirname(node)}${path.delimiter}${env.PATH}`;
    leg.label = `Node-RED ${version}, Node.js ${spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim().slice(1)}`;
    console.log(`\nmatrix: ${leg.label}${leg.ignore ? `, without ${leg.ignore}` : ''}`);
    const child = spawn(node, [mocha, ...(leg.ignore ? ['--ignore', leg.ignore] : [])], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
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
      resolve({ leg, code, failures, passed: m ? +m[1] : 0, failed: m ? +m[2] : 0, skipped: m ? +m[3] : 0, summary: !!m });
    });
  });
}

(async () => {
  const legs = LEGS.filter((l) => !only || only.includes(l.key));
  const setup = spawnSync(process.execPath, [path.join(__dirname, 'setup.js'), `--only=${legs.map((l) => l.key).join(',')}`], { cwd: root, stdio: 'inherit' });
  if (setup.status !== 0) {
    // Nothing would run as it should: one failure naming the cause (printed above), not a cascade.
    console.log('\nmatrix: the setup failed (see "setup: FAILED" above); no test was run');
    console.log('mocha: 0 passed, 1 failed, 0 skipped');
    process.exit(1);
  }
  const results = [];
  for (const leg of legs) {
    try {
      results.push(await run(leg));
    } catch (err) {
      console.error(`matrix: ${leg.key}: ${err.message}`);
      results.push({ leg, code: 1, failures: [], passed: 0, failed: 0, skipped: 0, summary: false });
    }
  }
  console.log('\nmatrix results:');
  for (const r of results) {
    console.log(`  ${r.leg.label ?? r.leg.key}: ${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped${r.code !== 0 ? ` (exit ${r.code})` : ''}`);
    for (const f of r.failures) console.log(`    failed: ${f}`);
  }
  const sum = (k) => results.reduce((n, r) => n + r[k], 0);
  const ok = results.length > 0 && results.every((r) => r.code === 0 && r.summary);
  // One closing line for all runs, in the plain form CI reads.
  console.log(`mocha: ${sum('passed')} passed, ${sum('failed')} failed, ${sum('skipped')} skipped`);
  process.exit(ok ? 0 : 1);
})();
