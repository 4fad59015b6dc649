'use strict';
// Prints the top self-time functions of a .cpuprofile (node --cpu-prof): node bench/lib/profile-top.js <file> [N]
const fs = require('node:fs');
const path = require('node:path');

const [file, top = 25] = process.argv.slice(2);
const prof = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map();
// Sample i lasted timeDeltas[i + 1]; attribute it to the sampled node's function.
prof.samples.forEach((id, i) => {
  const n = byId.get(id);
  const f = n.callFrame;
  const where = f.url ? `${path.relative(process.cwd(), f.url.replace(/^file:\/\//, ''))}:${f.lineNumber + 1}` : '';
  const key = `${f.functionName || '(anonymous)'} ${where}`.trim();
  self.set(key, (self.get(key) ?? 0) + (prof.timeDeltas[i + 1] ?? 0));
});
const total = [...self.values()].reduce((a, b) => a + b, 0);
const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(top));
console.log(`total ${(total / 1000).toFixed(0)} ms`);
for (const [k, t] of rows) console.log(`${((100 * t) / total).toFixed(1).padStart(5)}%  ${(t / 1000).toFixed(0).padStart(6)} ms  ${k}`);
