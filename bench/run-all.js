'use strict';
// npm run bench: the benchmarks, each in a fresh process of its own (no state, memory or JIT
// carried from one to the next), one after the other, then one table of their results.
// Options after `--` go to every benchmark (e.g. npm run bench -- --rounds 3); `--only send,upload`
// picks some. Needs a build (npx tsc -p .) first, as the tests do.
const { spawn } = require('node:child_process');
const path = require('node:path');

const BENCHES = ['send', 'multipart', 'send-redis', 'upload', 'callbacks', 'inbox', 'correlation-memory', 'startup'];

function runOne(name, args) {
  return new Promise((resolve) => {
    // --expose-gc: upload and inbox take their memory baselines after a GC.
    const child = spawn(process.execPath, ['--expose-gc', path.join(__dirname, `${name}.js`), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let rows;
    let rest = '';
    child.stdout.on('data', (d) => {
      const lines = (rest + d).split('\n');
      rest = lines.pop();
      for (const line of lines) {
        if (line.startsWith('BENCH_RESULT ')) rows = JSON.parse(line.slice('BENCH_RESULT '.length)).rows;
        else console.log(line);
      }
    });
    child.on('exit', (code) => resolve({ name, code, rows }));
  });
}

async function main() {
  const argv = process.argv.slice(2);
  const i = argv.indexOf('--only');
  const only = i >= 0 ? argv.splice(i, 2)[1].split(',') : BENCHES;
  const results = [];
  for (const name of BENCHES.filter((b) => only.includes(b))) {
    console.log(`\n== ${name} ==`);
    const t0 = Date.now();
    const r = await runOne(name, argv);
    console.log(`(${name}: ${((Date.now() - t0) / 1000).toFixed(0)} s${r.code ? `, exit code ${r.code}` : ''})`);
    results.push(r);
  }
  const cell = (s) => String(s).replace(/\|/g, '\\|');
  console.log('\n| benchmark | result | compared with | target | met |\n|---|---|---|---|---|');
  for (const r of results) {
    if (!r.rows) console.log(`| ${r.name} | failed (exit code ${r.code}) | | | no |`);
    else for (const row of r.rows) console.log(`| ${cell(row.bench)} | ${cell(row.value)} | ${cell(row.compared)} | ${cell(row.target)} | ${row.met ? 'yes' : 'no'} |`);
  }
  if (results.some((r) => !r.rows)) process.exitCode = 1;
}

main();
