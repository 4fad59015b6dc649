#!/usr/bin/env node
'use strict';
// `npm start`: the project's own Node-RED on 127.0.0.1 with this package loaded from the working tree,
// a user directory inside the project (.node-red-data, ignored by git) and, on first start, the demo
// flow deployed against the built-in simulator. Environment: PORT (default 1880), KALEYRA_DATA_DIR.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const pkg = require(path.join(root, 'package.json'));
const port = Number(process.env.PORT) || 1880;
const userDir = path.resolve(process.env.KALEYRA_DATA_DIR || path.join(root, '.node-red-data'));
const credentialSecret = 'kaleyra-demo-only';

// This package, as Node-RED finds installed packages: userDir/node_modules/<name>. A link left by another
// checkout (or dangling, the checkout moved) is pointed at this one; an installed copy is left alone.
const link = path.join(userDir, 'node_modules', ...pkg.name.split('/'));
fs.mkdirSync(path.dirname(link), { recursive: true });
const stat = fs.lstatSync(link, { throwIfNoEntry: false });
if (stat?.isSymbolicLink() && path.resolve(path.dirname(link), fs.readlinkSync(link)) !== root) fs.unlinkSync(link);
if (!fs.lstatSync(link, { throwIfNoEntry: false })) fs.symlinkSync(root, link, 'junction');

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
  const key = crypto.createHash('sha256').update(credentialSecret).digest();
  const iv = crypto.randomBytes(16);
  const cipher = crypto.createCipheriv('aes-256-ctr', key, iv);
  const sealed = iv.toString('hex') + cipher.update(JSON.stringify(creds), 'utf8', 'base64') + cipher.final('base64');
  fs.writeFileSync(path.join(userDir, 'flows_cred.json'), JSON.stringify({ $: sealed }));
}

const settingsFile = path.join(userDir, 'settings.js');
fs.writeFileSync(
  settingsFile,
  `// Written by scripts/start.js on every start.
module.exports = ${JSON.stringify(
    {
      uiHost: '127.0.0.1',
      uiPort: port,
      userDir,
      flowFile: 'flows.json',
      credentialSecret,
      httpNodeRoot: '/',
      logging: { console: { level: 'info', metrics: false, audit: false } },
      editorTheme: { tours: false, projects: { enabled: false } },
      diagnostics: { enabled: false },
      telemetry: { enabled: false },
      externalModules: { autoInstall: false, palette: { allowInstall: false } },
    },
    null,
    2,
  )};
`,
);

// KALEYRA_NODE_RED_DIR: another Node-RED to run (the tests' version matrix).
const redJs = process.env.KALEYRA_NODE_RED_DIR
  ? path.join(path.resolve(process.env.KALEYRA_NODE_RED_DIR), 'red.js')
  : require.resolve('node-red/red.js', { paths: [root] });
const child = spawn(process.execPath, [redJs, '--settings', settingsFile, '--userDir', userDir], {
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
