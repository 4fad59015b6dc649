'use strict';
// What the README's screenshots show depends on: the editor files (nodes/*.html, src/editor), their en-US strings
// (and the Japanese ones of the dialog shown in Japanese) and the demo flow. One hash of them all, kept in docs/images/manifest.json when the images are made.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');

function imageInputsHash() {
  const files = [
    ...fs.readdirSync(path.join(ROOT, 'nodes')).filter((f) => f.endsWith('.html')).map((f) => path.join('nodes', f)),
    ...['en-US', 'ja'].flatMap((lang) => fs.readdirSync(path.join(ROOT, 'nodes', 'locales', lang)).filter((f) => f.endsWith('.json')).map((f) => path.join('nodes', 'locales', lang, f))),
    path.join('examples', 'demo.json'),
    path.join('src', 'editor', 'kaleyra-editor.js'),
  ].sort();
  const hash = crypto.createHash('sha256');
  for (const f of files) hash.update(`${f}\n`).update(fs.readFileSync(path.join(ROOT, f)).toString('utf8').replace(/\r\n/g, '\n'));
  return hash.digest('hex').slice(0, 16);
}

module.exports = { imageInputsHash };
