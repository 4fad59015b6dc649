'use strict';
// msg.file as a caller's stream that fails. Before, a read stream that errored (EISDIR for a directory,
// EIO mid-way) was piped with no 'error' listener: the error was uncaught and Node-RED exited; a stream
// of objects threw an uncaught ERR_INVALID_ARG_TYPE and a 0-byte document was sent and reported as sent.
// Now each ends its one message with a coded error, the request is aborted, nothing is reported as sent.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Readable } = require('node:stream');
const { Recorder } = require('./helpers/recorder');
const { KaleyraClient } = require('../dist/core/client');
const { helper, loadNode } = require('./helpers/flow');

const KEY = 'StreamKey0123456789';
const FROM = '918000000000';
const TO = '919812345678';

/** A stream that gives `good` bytes, then fails with an EIO error. */
function failingMidway(good = 256 * 1024) {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= good) {
        const err = Object.assign(new Error('i/o error reading the disk'), { code: 'EIO' });
        return void this.destroy(err);
      }
      sent += 64 * 1024;
      this.push(Buffer.alloc(64 * 1024, 1));
    },
  });
}

const doc = (file, filename = 'a.pdf') => ({ from: FROM, to: TO, body: { type: 'document', document: {} }, file, filename });

describe('msg.file streams that fail', function () {
  const rec = new Recorder();
  let dir;
  before(async () => {
    await rec.start();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kaleyra-streams-'));
  });
  after(async () => {
    await rec.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    rec.requests.length = 0;
    rec.reply = () => ({ body: JSON.stringify({ status: 'OK', message: 'sent', data: [{ id: 'm1', mobile: TO }] }) });
  });

  describe('core', () => {
    // One attempt per send (no retry): a test sees each request its message caused.
    let client;
    before(() => {
      client = new KaleyraClient({ apiKey: KEY, messagingUrl: rec.url, timeout: 60_000, sendRetry: { retries: 0 } });
    });
    after(() => client.close());

    it('a read stream of a directory (EISDIR) fails with INVALID_INPUT naming file and the system code', async () => {
      await assert.rejects(client.sendMessage(doc(fs.createReadStream(dir), 'folder.pdf')), (err) => {
        assert.equal(err.code, 'INVALID_INPUT');
        assert.match(err.message, /^file: could not be read: EISDIR/);
        return true;
      });
    });

    it('a stream failing mid-way (EIO) aborts the upload: INVALID_INPUT, no complete request', async () => {
      const stream = failingMidway();
      await assert.rejects(client.sendMessage(doc(stream)), (err) => {
        assert.equal(err.code, 'INVALID_INPUT');
        assert.match(err.message, /^file: could not be read: EIO i\/o error/);
        return true;
      });
      assert.ok(stream.destroyed);
      assert.equal(rec.requests.length, 0, 'the server never received a whole request');
    });

    it('a stream of objects, or of numbers, is refused before anything is sent', async () => {
      for (const items of [[{ a: 1 }], [1, 2, 3]]) {
        await assert.rejects(client.sendMessage(doc(Readable.from(items))), (err) => {
          assert.equal(err.code, 'INVALID_INPUT');
          assert.match(err.message, /^file: is a stream of objects/);
          return true;
        });
      }
      assert.equal(rec.requests.length, 0);
    });

    it('a stream that already failed, or was already read, is refused before anything is sent', async () => {
      const failed = failingMidway(0);
      failed.on('error', () => undefined);
      failed.resume();
      await new Promise((r) => failed.once('close', r));
      await assert.rejects(client.sendMessage(doc(failed)), /file: could not be read: EIO/);
      const done = Readable.from([Buffer.from('x')], { objectMode: false });
      done.resume();
      await new Promise((r) => done.once('end', r));
      await assert.rejects(client.sendMessage(doc(done)), /file: is a stream that was already closed/);
      assert.equal(rec.requests.length, 0);
    });

    it('a stream of strings, or an object-mode stream of Buffers and Uint8Arrays, is sent as their bytes', async () => {
      await client.sendMessage(doc(Readable.from(['%PDF-1.4 ', 'hello'], { objectMode: false })));
      assert.equal(rec.last.files.file.data.toString(), '%PDF-1.4 hello');
      await client.sendMessage(doc(Readable.from([Buffer.from('%PDF'), new Uint8Array([0x2d, 0x31]), 'x'])));
      assert.equal(rec.last.files.file.data.toString(), '%PDF-1x');
    });

    it('an object-mode stream whose later chunk is no bytes aborts the upload: INVALID_INPUT, no complete request', async () => {
      await assert.rejects(client.sendMessage(doc(Readable.from([Buffer.alloc(200 * 1024), { page: 2 }]))), (err) => {
        assert.equal(err.code, 'INVALID_INPUT');
        assert.match(err.message, /^file: is a stream that gave an object among its bytes/);
        return true;
      });
      assert.equal(rec.requests.length, 0);
    });
  });

  describe('kaleyra-whatsapp in the runtime', () => {
    afterEach(() => helper.unload());
    const load = () => loadNode('kaleyra-whatsapp', { from: FROM, to: TO }, { config: { messagingUrl: rec.url }, apiKey: KEY });

    for (const [what, file, pattern] of [
      ['a directory stream (EISDIR)', () => fs.createReadStream(dir), /EISDIR/],
      ['a stream failing mid-way (EIO)', () => failingMidway(), /EIO/],
      ['an object-mode stream', () => Readable.from([{ page: 1 }]), /stream of objects/],
    ]) {
      it(`${what}: Catch gets INVALID_INPUT, no output, Node-RED keeps running`, async () => {
        const t = await load();
        const { output, error } = await t.run({ payload: { type: 'document' }, file: file(), filename: 'x.pdf' });
        assert.equal(output, undefined);
        assert.equal(error.error.code, 'INVALID_INPUT');
        assert.match(error.error.message, pattern);
        // The runtime still works: the next message is sent.
        const next = await t.run({ payload: 'still here' });
        assert.equal(next.output.payload[0].id, 'm1');
      });
    }

    it('a stream that fails while the message waits (before the node reads it) does not end the process', async () => {
      const t = await load();
      const stream = fs.createReadStream(dir); // fails on the next tick, before the node's input handler runs
      const { error } = await t.run({ payload: { type: 'document' }, file: stream, filename: 'x.pdf' });
      assert.equal(error.error.code, 'INVALID_INPUT');
    });
  });
});
