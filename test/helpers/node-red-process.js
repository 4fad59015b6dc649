'use strict';
// A real Node-RED process of the project (the version the tests run against), with this package linked
// into its own user directory, given flows, encrypted credentials and settings: for what only a whole
// Node-RED shows (admin authentication, several replicas sharing one Redis). Its log is kept in `output`.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { linkPackage, quietSettings, sealCredentials } = require('../../scripts/node-red-home');
const { nodeRedDir } = require('./node-red');
const { freePort, waitFor } = require('./started-node-red');

const SECRET = 'kaleyra-test-secret';

class NodeRedProcess {
  /** `settings` are merged over a quiet default; `env` is added to the process's environment. */
  constructor({ flows, credentials = {}, settings = {}, env = {}, name = 'node-red' }) {
    this.flows = flows;
    this.credentials = credentials;
    this.settings = settings;
    this.env = env;
    this.name = name;
    this.output = '';
  }

  async start() {
    this.port ??= await freePort();
    this.url = `http://127.0.0.1:${this.port}`;
    this.userDir ??= fs.mkdtempSync(path.join(os.tmpdir(), `kaleyra-${this.name}-`));
    linkPackage(this.userDir);
    fs.writeFileSync(path.join(this.userDir, 'flows.json'), JSON.stringify(this.flows));
    fs.writeFileSync(path.join(this.userDir, 'flows_cred.json'), JSON.stringify(sealCredentials(this.credentials, SECRET)));
    const settings = { ...quietSettings({ port: this.port, userDir: this.userDir, credentialSecret: SECRET }), ...this.settings };
    const settingsFile = path.join(this.userDir, 'settings.js');
    fs.writeFileSync(settingsFile, `module.exports = ${JSON.stringify(settings, null, 2)};\n`);
    this.exit = undefined;
    this.startedAt = this.output.length;
    this.child = spawn(process.execPath, [path.join(nodeRedDir, 'red.js'), '--settings', settingsFile, '--userDir', this.userDir], {
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const collect = (chunk) => (this.output += chunk.toString());
    this.child.stdout.on('data', collect);
    this.child.stderr.on('data', collect);
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve((this.exit = { code, signal }))));
    await waitFor(() => {
      if (this.exit) throw new Error(`${this.name} exited (${this.exit.code ?? this.exit.signal}):\n${this.output}`);
      return /Started flows/.test(this.output.slice(this.startedAt));
    }, `${this.name} to start its flows`, 60_000);
    return this;
  }

  fetch(p, options) {
    return fetch(this.url + p, options);
  }

  /** The log since this process last started. */
  get log() {
    return this.output.slice(this.startedAt);
  }

  /** SIGTERM, and waits for the exit (SIGKILL after `ms`). */
  async stop(ms = 20_000) {
    if (!this.child || this.exit) return;
    this.child.kill('SIGTERM');
    const timer = new Promise((r) => setTimeout(r, ms, 'timeout'));
    if ((await Promise.race([this.exited, timer])) === 'timeout') this.kill();
    await this.exited;
  }

  /** SIGKILL: a replica that dies without closing anything. */
  kill() {
    if (!this.child || this.exit) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  /** Deploys flows through the admin API (a full deploy, as the editor's Deploy button does). */
  async deploy(flows, headers = {}) {
    const res = await this.fetch('/flows', { method: 'POST', headers: { 'content-type': 'application/json', 'Node-RED-Deployment-Type': 'full', ...headers }, body: JSON.stringify(flows) });
    if (res.status !== 204 && res.status !== 200) throw new Error(`deploy answered ${res.status}: ${await res.text()}`);
  }

  cleanup() {
    if (this.userDir) fs.rmSync(this.userDir, { recursive: true, force: true });
  }
}

module.exports = { NodeRedProcess };
