'use strict';
// RED.httpNode of the flows the test helper loaded, and a real HTTP server on 127.0.0.1 serving it.
// node-red-node-test-helper 0.3 has no httpNode() of its own (helper.request() is the admin app, and the
// app behind helper.startServer()/helper.url() does not serve httpNode), so the tests capture `RED`
// through a node module function passed to helper.load() — as DESIGN.md's "Habits" says.
const http = require('node:http');
const express = require('express');
const { Agent, request } = require('undici');

class HttpNode {
  constructor() {
    this.RED = undefined;
    /** Pass this in helper.load()'s module list; every load hands it the RED of that load. */
    this.capture = (RED) => {
      this.RED = RED;
    };
    this.sockets = new Set();
  }

  /** The captured RED.httpNode (an express app: supertest takes it as is). */
  get app() {
    if (!this.RED) throw new Error('no flow loaded with httpNode.capture');
    return this.RED.httpNode;
  }

  /**
   * Serves RED.httpNode on 127.0.0.1, mounted at `root` (the httpNodeRoot, as Node-RED itself mounts it),
   * and RED.httpAdmin at /. Requests to neither, or with no flow loaded, get 404.
   */
  async start(root = '/') {
    const outer = express();
    outer.use(root, (req, res, next) => (this.RED ? this.RED.httpNode(req, res, next) : next()));
    // The admin API at /, as Node-RED serves both on one port (the simulator's control routes live there).
    outer.use((req, res, next) => (this.RED?.httpAdmin ? this.RED.httpAdmin(req, res, next) : next()));
    this.server = http.createServer(outer);
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = this.server.address().port;
    this.url = `http://127.0.0.1:${this.port}`;
    this.agent = new Agent({ connections: 64 });
    return this.url;
  }

  async stop() {
    await this.agent?.destroy();
    for (const s of this.sockets) s.destroy();
    if (this.server) await new Promise((resolve) => this.server.close(resolve));
    this.server = undefined;
  }

  /** GET or POST `path` (below this server's URL) and resolve to { status, text }. */
  async fetch(path, { method = 'GET', body, headers } = {}) {
    const res = await request(this.url + path, { method, body, headers, dispatcher: this.agent });
    return { status: res.statusCode, text: await res.body.text() };
  }
}

/** Warnings the runtime logged for node `id` (or all of them), as strings. */
function warnings(helper, id) {
  const log = helper.log();
  return log.args
    .map(([entry]) => entry)
    .filter((e) => e && e.level === log.WARN && (id === undefined || e.id === id))
    .map((e) => String(e.msg));
}

/** The statuses node `id` showed since the flows were loaded (the helper spies on Node.prototype.status). */
function statuses(helper, id) {
  const node = helper.getNode(id);
  return helper._NodePrototype.status.getCalls().filter((c) => c.thisValue === node).map((c) => c.args[0]);
}

/**
 * Resolves once `check()` is true (or resolves true: a check may be async); rejects after `ms` with `what`
 * (a safety net, not a timing assertion).
 */
async function until(check, what, ms = 60_000) {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

module.exports = { HttpNode, warnings, statuses, until };
