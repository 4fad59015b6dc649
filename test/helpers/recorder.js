'use strict';
// A real HTTP server on 127.0.0.1 that records every request and answers from a script.
// Tests use it to see the exact request a call produced and to feed the decoders any answer.
const http = require('node:http');
const { Response } = require('undici');

class Recorder {
  constructor() {
    this.requests = [];
    /** (req) => { status?, headers?, body } | string — what to answer; default a JSON OK envelope. */
    this.reply = () => ({ body: '{"status":"200","message":"OK","data":{}}' });
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.sockets = new Set();
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  async start() {
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${this.server.address().port}`;
    return this.url;
  }

  async stop() {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  async handle(req, res) {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url, this.url);
    const rec = {
      method: req.method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      rawQuery: url.search,
      headers: req.headers,
      raw,
      fields: {},
      files: {},
    };
    const type = req.headers['content-type'] || '';
    if (type.startsWith('multipart/form-data')) {
      const form = await new Response(raw, { headers: { 'content-type': type } }).formData();
      for (const [name, value] of form.entries()) {
        if (typeof value === 'string') rec.fields[name] = value;
        else rec.files[name] = { filename: value.name, type: value.type, data: Buffer.from(await value.arrayBuffer()) };
      }
    }
    this.requests.push(rec);
    let answer = this.reply(rec);
    if (answer && typeof answer.then === 'function') answer = await answer;
    if (answer === 'reset') return req.socket.destroy();
    if (typeof answer === 'string') answer = { body: answer };
    res.writeHead(answer.status || 200, answer.headers || { 'content-type': 'application/json' });
    res.end(answer.body);
  }

  get last() {
    return this.requests[this.requests.length - 1];
  }
}

module.exports = { Recorder };
