#!/usr/bin/env node
'use strict';
// `npm start`: the project's own Node-RED on 127.0.0.1 with this package loaded from the working tree,
// a user directory inside the project (.node-red-data, ignored by git) and, on first start, the demo
// flow deployed against the built-in simulator. Environment: PORT (default 1880), KALEYRA_DATA_DIR.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { linkPackage, quietSettings, sealCredentials } = require('./node-red-home');
const { MINIMUM, supportedNode } = require('./runtime');

const root = path.resolve(__dirname, '..');
const port = Number(process.env.PORT) || 1880;
const userDir = path.resolve(process.env.KALEYRA_DATA_DIR || path.join(root, '.node-red-data'));
const credentialSecret = 'kaleyra-demo-only';

linkPackage(userDir);

// The demo flow, written only when there is no flow yet, so edits survive a restart.
const flowFile = path.join(userDir, 'flows.json');
if (!fs.existsSync(flowFile)) {
  const demo = JSON.parse(fs.readFileSync(path.join(root, 'examples', 'demo.json'), 'utf8'));
  fs.writeFileSync(flowFile, JSON.stringify(demo, null, 2));
  // Each listener gets its own random token, stored as Node-RED stores credentials (encrypted).
  const creds = {};
  for (const node of demo) {
    if (node.type === 'kaleyra-callback' || node.type === 'kaleyra-vmn-in') creds[node.id] = { token: crypto.randomBytes(16).toString('hex') };
  }
  fs.writeFileSync(path.join(userDir, 'flows_cred.json'), JSON.stringify(sealCredentials(creds, credentialSecret)));
}

const settingsFile = path.join(userDir, 'settings.js');
const settings = { ...quietSettings({ port, userDir, credentialSecret }), httpNodeRoot: '/' };
fs.writeFileSync(settingsFile, `// Written by scripts/start.js on every start.\nmodule.exports = ${JSON.stringify(settings, null, 2)};\n`);

// KALEYRA_NODE_RED_DIR: another Node-RED to run (the tests' version matrix).
const redJs = process.env.KALEYRA_NODE_RED_DIR
  ? path.join(path.resolve(process.env.KALEYRA_NODE_RED_DIR), 'red.js')
  : require.resolve('node-red/red.js', { paths: [root] });
// The package needs Node.js MINIMUM or later: on an older machine Node.js (20, say), Node-RED runs on
// Node.js 22 from the npm registry (installed once into .matrix/).
const nodeJs = supportedNode((line) => console.log(`npm start: ${line}`));
if (nodeJs !== process.execPath) console.log(`npm start: Node.js ${process.versions.node} is older than ${MINIMUM}: Node-RED runs on ${path.relative(root, nodeJs)}`);
const child = spawn(nodeJs, [redJs, '--settings', settingsFile, '--userDir', userDir], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, KALEYRA_DEMO_URL: `http://127.0.0.1:${port}` },
});
let told = false;
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  if (!told && /Started flows/.test(chunk.toString())) {
    told = true;
    console.log(`\n  Node-RED with @flowcomms/node-red-kaleyra and the demo flow: open http://127.0.0.1:${port}/\n`);
  }
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
