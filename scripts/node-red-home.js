'use strict';
// What a Node-RED user directory needs to run this package from the working tree: the package linked in,
// credentials sealed as Node-RED seals them, and quiet settings. Used by `npm start` (scripts/start.js)
// and by the tests' Node-RED processes (test/helpers/node-red-process.js).
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const pkg = require(path.join(ROOT, 'package.json'));

/**
 * This package, as Node-RED finds installed packages: userDir/node_modules/<name>. A link left by another
 * checkout (or dangling, the checkout moved) is pointed at this one; an installed copy is left alone.
 */
function linkPackage(userDir) {
  const link = path.join(userDir, 'node_modules', ...pkg.name.split('/'));
  fs.mkdirSync(path.dirname(link), { recursive: true });
  const stat = fs.lstatSync(link, { throwIfNoEntry: false });
  if (stat?.isSymbolicLink() && path.resolve(path.dirname(link), fs.readlinkSync(link)) !== ROOT) fs.unlinkSync(link);
  if (!fs.lstatSync(link, { throwIfNoEntry: false })) fs.symlinkSync(ROOT, link, 'junction');
}

/** The contents of flows_cred.json for `creds`, sealed as Node-RED seals them (aes-256-ctr, key sha256(secret)). */
function sealCredentials(creds, secret) {
  const key = crypto.createHash('sha256').update(secret).digest();
  const iv = crypto.randomBytes(16);
  const cipher = crypto.createCipheriv('aes-256-ctr', key, iv);
  return { $: iv.toString('hex') + cipher.update(JSON.stringify(creds), 'utf8', 'base64') + cipher.final('base64') };
}

/** Settings of a Node-RED on loopback that asks nothing of its user: no tours, telemetry or installs. */
function quietSettings({ port, userDir, credentialSecret }) {
  return {
    uiHost: '127.0.0.1',
    uiPort: port,
    userDir,
    flowFile: 'flows.json',
    credentialSecret,
    logging: { console: { level: 'info', metrics: false, audit: false } },
    editorTheme: { tours: false, projects: { enabled: false } },
    diagnostics: { enabled: false },
    telemetry: { enabled: false },
    externalModules: { autoInstall: false, palette: { allowInstall: false } },
  };
}

module.exports = { linkPackage, sealCredentials, quietSettings };
