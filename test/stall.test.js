'use strict';
// A stalled upload is aborted cleanly. The server here accepts the connection, reads the first bytes of
// the multipart upload and then stops reading for good (the socket is paused), so the client's writes
// back up. A 64 MB document, from a file path and from a stream, must then fail with TIMEOUT, with its
// stream closed and no file descriptor left on the file, no socket left to the server once the pools are
// closed, and no extra active handle in the process.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { Readable } = require('node:stream');
const { Transport } = require('../dist/core/transport');
const { LIMITS } = require('../dist/core/messaging');
const { KaleyraClient } = require('../dist/core/client');
const { TransportError } = require('../dist/core/errors');
const { helper, loadNode } = require('./helpers/flow');
const { until } = require('./helpers/http-node');

const FROM = '918000000000';
const TO = '919812345678';
const MB64 = 64 * 1024 * 1024;

/** Reads `readLimit` bytes of each connection, then never reads again, until drain(). */
class StallServer {
  constructor(readLimit = 64 * 1024) {
    this.readLimit = readLimit;
    this.sockets = new Set();
    this.uploads = 0; // connections that started sending a request
    this.draining = false;
    this.server = net.createServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
      let got = 0;
      socket.on('data', (chunk) => {
        if (got === 0) this.uploads++;
        got += chunk.length;
        if (got >= this.readLimit && !this.draining) socket.pause();
      });
    });
  }

  async start() {
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = this.server.address().port;
    this.url = `http://127.0.0.1:${this.port}`;
    return this.url;
  }

  /**
   * A paused socket notices no FIN: read what is left, so every connection the client has closed ends
   * here too. A connection the client still held open would stay.
   */
  drain() {
    this.draining = true;
    for (const s of this.sockets) s.resume();
  }

  async stop() {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** Open file descriptors of this process on `file` (Linux: the /proc/self/fd symlinks). */
function fdsOn(file) {
  return fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false; // the fd of the directory listing itself, closed meanwhile
    }
  }).length;
}

/** Client sockets of this process still connected to `port`. */
function clientSocketsTo(port) {
  return process._getActiveHandles().filter((h) => h instanceof net.Socket && h.remotePort === port && !h.destroyed).length;
}

const handleSummary = () => process._getActiveHandles().map((h) => h.constructor.name).join(', ');

/** Asserts err is a TransportError TIMEOUT. */
function isTimeout(err) {
  assert.ok(err instanceof TransportError, `a TransportError, not ${err && err.name}: ${err && err.message}`);
  assert.equal(err.code, 'TIMEOUT', err.message);
  return true;
}

/** A stream of `size` zero bytes, made as it is read. */
function generated(size) {
  let left = size;
  const chunk = Buffer.alloc(64 * 1024);
  return new Readable({
    read() {
      if (left <= 0) return this.push(null);
      const n = Math.min(left, chunk.length);
      left -= n;
      this.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    },
  });
}

function watchClose(stream) {
  const state = { closed: false };
  stream.on('close', () => (state.closed = true));
  stream.on('error', () => undefined);
  return state;
}

describe('a stalled upload is aborted cleanly', function () {
  let dir;
  let file;

  before(() => {
    assert.equal(LIMITS.fileBytes, MB64);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kaleyra-stall-'));
    file = path.join(dir, 'report.pdf');
    fs.writeFileSync(file, '');
    fs.truncateSync(file, MB64); // exactly 64 MB, the largest size allowed; sparse, so nothing is written
    assert.equal(fs.statSync(file).size, MB64);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Runs `scenario(server)` and then checks that nothing is left: sockets, descriptors, handles. */
  async function clean(scenario) {
    const server = new StallServer();
    await server.start();
    const handlesBefore = process._getActiveHandles().length; // the server is already among them
    const fdsBefore = fdsOn(file);
    try {
      const sends = await scenario(server);
      await until(() => fdsOn(file) <= fdsBefore, 'the descriptors on the document to be closed');
      assert.equal(fdsOn(file), fdsBefore, 'no file descriptor on the document is left open');
      assert.equal(server.uploads, sends, 'each stalled upload was sent once, not again');
      assert.equal(clientSocketsTo(server.port), 0, 'no client socket to the server is left');
      server.drain();
      await until(() => server.sockets.size === 0, `the server's connections to close (${server.sockets.size} open)`, 60_000);
      await until(() => process._getActiveHandles().length <= handlesBefore, `the active handles to settle (${handleSummary()})`);
      assert.ok(process._getActiveHandles().length <= handlesBefore, `no extra active handle: ${handleSummary()}`);
    } finally {
      await server.stop();
    }
  }

  it('core: from a file path, a stream and a generated stream, through KaleyraClient.sendMessage with a 1.5 s timeout (one attempt)', async function () {
    await clean(async (server) => {
      const client = new KaleyraClient({ apiKey: 'stallkey01', messagingUrl: server.url, timeout: 1500, sendRetry: { retries: 0 } });
      const doc = (extra) => ({ from: FROM, to: TO, body: { type: 'document', document: { caption: 'big' } }, ...extra });

      await assert.rejects(client.sendMessage(doc({ file })), isTimeout);
      await until(() => fdsOn(file) === 0, 'the file opened for the path to be closed');

      const stream = fs.createReadStream(file);
      const state = watchClose(stream);
      await assert.rejects(client.sendMessage(doc({ file: stream })), isTimeout);
      assert.ok(stream.destroyed, 'the caller’s file stream is destroyed');
      await until(() => state.closed, "the file stream's close event");
      await until(() => fdsOn(file) === 0, 'no descriptor on the file');

      const gen = generated(MB64);
      const genState = watchClose(gen);
      await assert.rejects(client.sendMessage(doc({ file: gen, filename: 'report.pdf' })), isTimeout);
      assert.ok(gen.destroyed, 'a generated stream is destroyed too');
      await until(() => genState.closed, "the generated stream's close event");

      await client.close();
      return 3;
    });
  });

  it('core: Transport.send on its own closes a file part it could not finish sending', async function () {
    await clean(async (server) => {
      const transport = new Transport({ timeout: 1500 });
      const stream = fs.createReadStream(file);
      const state = watchClose(stream);
      await assert.rejects(
        transport.send({
          baseUrl: server.url,
          path: '/api/v4/',
          method: 'POST',
          params: { method: 'wa', from: FROM, body: JSON.stringify({ type: 'document', to: TO }) },
          files: [{ field: 'file', value: stream, filename: 'report.pdf', knownLength: MB64 }],
          apiKey: 'stallkey01',
        }),
        isTimeout,
      );
      await until(() => state.closed, "the file part's close event");
      assert.ok(stream.destroyed);
      await transport.close();
      return 1;
    });
  });

  it('kaleyra-whatsapp with a 1 s config timeout: from a path and from a stream, TIMEOUT in Catch, nothing left open', async function () {
    await clean(async (server) => {
      const t = await loadNode('kaleyra-whatsapp', {}, { config: { messagingUrl: server.url, timeout: 1 } });
      try {
        const a = await t.run({ payload: { type: 'document' }, file, to: TO, from: FROM }, 60_000);
        assert.equal(a.output, undefined);
        assert.equal(a.error.error.code, 'TIMEOUT');
        await until(() => fdsOn(file) === 0, 'the file opened for the path to be closed');

        const stream = fs.createReadStream(file);
        const state = watchClose(stream);
        const b = await t.run({ payload: { type: 'document' }, file: stream, to: TO, from: FROM }, 60_000);
        assert.equal(b.error.error.code, 'TIMEOUT');
        assert.equal(t.outputs.length, 0);
        await until(() => state.closed, "the msg.file stream's close event");
        assert.ok(stream.destroyed);
        assert.deepEqual(await t.finalStatus(), { fill: 'red', shape: 'ring', text: 'TIMEOUT' });
      } finally {
        await helper.unload(); // stops the config node, which closes the account's pools
      }
      return 2;
    });
  });
});
