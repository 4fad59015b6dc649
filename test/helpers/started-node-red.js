'use strict';
// `npm start` as a real process, for test/start.test.js: spawns scripts/start.js with PORT and
// KALEYRA_DATA_DIR, collects its output, and talks to the Node-RED it starts over HTTP and the /comms
// websocket (the debug sidebar's channel).
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { fromNodeRed } = require('./node-red');

const ROOT = path.join(__dirname, '..', '..');
// ws is a dependency of node-red (its editor's /comms server); the test client uses the same package.
const WebSocket = fromNodeRed('ws');

/** A port nothing listens on right now, on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resolves once `check()` is truthy (it may be async); rejects after `ms` (a deadline, not a timing check). */
async function waitFor(check, what, ms = 60_000) {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** The credentials Node-RED keeps in flows_cred.json, decrypted as Node-RED does (aes-256-ctr, sha256 of the secret). */
function readCredentials(userDir, secret) {
  const { $: sealed } = JSON.parse(fs.readFileSync(path.join(userDir, 'flows_cred.json'), 'utf8'));
  const key = crypto.createHash('sha256').update(secret).digest();
  const decipher = crypto.createDecipheriv('aes-256-ctr', key, Buffer.from(sealed.slice(0, 32), 'hex'));
  return JSON.parse(decipher.update(sealed.slice(32), 'base64', 'utf8') + decipher.final('utf8'));
}

class StartedNodeRed {
  /** `node`: the Node.js that runs scripts/start.js (default: this one). */
  constructor({ port, userDir, node = process.execPath }) {
    this.node = node;
    this.port = port;
    this.userDir = userDir;
    this.url = `http://127.0.0.1:${port}`;
    this.output = '';
    this.exit = undefined;
  }

  /** Spawns scripts/start.js; resolves when it printed the editor's URL, rejects if it exits first. */
  start() {
    this.spawnedAt = Date.now();
    // Its own process group (detached), so that a failed test can still end Node-RED with it.
    this.child = spawn(this.node, [path.join(ROOT, 'scripts', 'start.js')], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(this.port), KALEYRA_DATA_DIR: this.userDir },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
    const line = `open http://127.0.0.1:${this.port}/`;
    return new Promise((resolve, reject) => {
      const collect = (chunk) => {
        this.output += chunk.toString();
        if (this.output.includes(line)) resolve();
      };
      this.child.stdout.on('data', collect);
      this.child.stderr.on('data', collect);
      this.exited.then(({ code, signal }) => reject(new Error(`scripts/start.js exited (${code ?? signal}) before "${line}":\n${this.output}`)));
    });
  }

  /** fetch() below the editor's URL. */
  fetch(p, options) {
    return fetch(this.url + p, options);
  }

  /** Sends SIGTERM to scripts/start.js and waits until it exited. */
  async stop(ms = 30000) {
    if (this.exit || !this.child) return this.exit;
    this.child.kill('SIGTERM');
    const timer = sleep(ms).then(() => 'timeout');
    if ((await Promise.race([this.exited, timer])) === 'timeout') {
      this.kill();
      throw new Error(`scripts/start.js did not exit within ${ms} ms of SIGTERM`);
    }
    return this.exit;
  }

  /** Last resort after a failure: SIGKILL to the process group (scripts/start.js and its Node-RED). */
  kill() {
    if (this.exit || !this.child) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  /**
   * Connects to /comms and subscribes to the debug topic; `messages` collects each debug message as
   * { id, name, value } with the message (or the property the debug node shows) decoded.
   */
  async debugMessages() {
    const ws = new WebSocket(`ws://127.0.0.1:${this.port}/comms`);
    const messages = [];
    let statuses = 0;
    ws.on('message', (data) => {
      for (const { topic, data: d } of JSON.parse(data.toString())) {
        if (topic.startsWith('status/')) statuses++;
        if (topic !== 'debug') continue;
        let value = d.msg;
        try {
          value = JSON.parse(d.msg);
        } catch {
          // a plain string
        }
        messages.push({ id: d.id, name: d.name, value, format: d.format });
      }
    });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    // Subscriptions are not acknowledged, but the connection handles them in order: once a node status
    // arrives (retained ones at once, else the next), the debug subscription before it is in place too.
    ws.send(JSON.stringify({ subscribe: 'debug' }));
    ws.send(JSON.stringify({ subscribe: 'status/#' }));
    await waitFor(() => statuses > 0, 'a node status over /comms');
    return { messages, close: () => ws.terminate() };
  }
}

module.exports = { StartedNodeRed, freePort, listening, waitFor, readCredentials, ROOT };
