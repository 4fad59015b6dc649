'use strict';
// A real redis-server for the tests (Debian's package, installed by npm test's setup, test/setup.js):
// started on a free loopback port with its data in a temporary folder, AOF on or off, stopped (or killed, or restarted with or without its data) by the tests.
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { requireTool } = require('./provisioned');
const { freePort, waitFor } = require('./started-node-red');

/** Sends one RESP command on a fresh connection; resolves the raw reply text. */
function command(port, ...args) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    socket.setTimeout(3000, () => socket.destroy(new Error('redis command timeout')));
    socket.on('connect', () => socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(String(a))}\r\n${a}\r\n`).join('')}`));
    socket.on('data', (d) => {
      reply += d.toString();
      // Enough for the replies read here: a simple/error/integer line, or a bulk string read whole.
      const m = /^\$(-?\d+)\r\n/.exec(reply);
      if (!m && reply.endsWith('\r\n')) socket.end();
      else if (m && (Number(m[1]) < 0 || reply.length >= m[0].length + Number(m[1]) + 2)) socket.end();
    });
    socket.on('end', () => resolve(reply));
    socket.on('error', reject);
  });
}

class RedisServer {
  constructor({ aof = true } = {}) {
    this.aof = aof;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kaleyra-redis-'));
    this.output = '';
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start() {
    this.exe ??= requireTool('redis-server');
    this.port ??= await freePort();
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', this.aof ? 'yes' : 'no', '--appendfsync', 'always', '--protected-mode', 'yes', '--daemonize', 'no'];
    this.child = spawn(this.exe, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (d) => (this.output += d));
    this.child.stderr.on('data', (d) => (this.output += d));
    this.exited = new Promise((resolve) => this.child.on('exit', resolve));
    await waitFor(async () => (await command(this.port, 'PING').catch(() => '')).startsWith('+PONG'), `redis-server on port ${this.port}`, 60_000);
    return this;
  }

  /** Ends the server at once (SIGKILL): what is not on disk is gone. */
  async kill() {
    if (!this.child || this.child.exitCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  /** Removes its data (a Redis restarted without persistence). */
  wipe() {
    fs.rmSync(this.dir, { recursive: true, force: true });
    fs.mkdirSync(this.dir, { recursive: true });
  }

  command(...args) {
    return command(this.port, ...args);
  }

  /** The clients connected now, by name-less count (CLIENT LIST, without this query's own connection). */
  async clients() {
    const list = await this.command('CLIENT', 'LIST');
    return list.split('\n').filter((l) => l.startsWith('id=') && !/cmd=client\|list/.test(l)).length;
  }

  async stop() {
    await this.kill();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

module.exports = { RedisServer };
