'use strict';
// The api key and hostile answers: what an answer quotes into an error is masked before it is cut (no
// run of 6 of the key's characters survives at any cut), property names are masked as well as values,
// control characters are escaped, and masking never changes what the status check or a msg sees (a
// short key inside "OK" or inside an id is not the key).
const assert = require('node:assert/strict');
const { Recorder } = require('./helpers/recorder');
const { Transport } = require('../dist/core/transport');
const { sendMessage } = require('../dist/core/messaging');
const { callStatus } = require('../dist/core/call-status');
const { quote, redactDeep, escapeControl } = require('../dist/core/redact');

const KEY = 'Zq7Wm2Kp9Xr4Tn6Yb8Vc3';
const TO = '919812345678';

/** Every run of 6 characters of the key that appears in `text`. */
function keyRuns(text, key = KEY) {
  const runs = [];
  for (let i = 0; i + 6 <= key.length; i++) if (text.includes(key.slice(i, i + 6))) runs.push(key.slice(i, i + 6));
  return runs;
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

describe('redaction and quoting of hostile answers', function () {
  const rec = new Recorder();
  const transport = new Transport({ timeout: 5000 });
  const ctx = (apiKey = KEY) => ({ transport, apiKey, baseUrl: rec.url });
  before(() => rec.start());
  after(async () => {
    await transport.close();
    await rec.stop();
  });

  describe('part of the key in a quoted answer (a proxy page echoing the request)', () => {
    // The quote is cut at 120 characters: put the key across every cut position, and at the page's own edges.
    for (let at = 100; at <= 121; at++) {
      it(`200 with an undecodable page, the key starting at character ${at}: no 6 characters of it in the error`, async () => {
        const page = `${'p'.repeat(at - 8)}api_key=${KEY}&from=919000000001 and more of the page`;
        rec.reply = () => ({ headers: { 'content-type': 'text/html' }, body: page });
        await assert.rejects(sendMessage(ctx(), { from: '919000000001', to: TO, body: 'hi' }), (err) => {
          assert.equal(err.code, 'BAD_RESPONSE');
          assert.deepEqual(keyRuns(err.message), [], err.message);
          assert.deepEqual(keyRuns(String(err.stack)), []);
          return true;
        });
      });
    }

    it('a page that starts with the end of the key, or ends with its start, shows neither', async () => {
      for (const page of [`${KEY.slice(5)} was refused`, `refused: api_key=${KEY.slice(0, 12)}`, `${KEY.slice(-7)}`]) {
        rec.reply = () => ({ headers: { 'content-type': 'text/html' }, body: page });
        await assert.rejects(sendMessage(ctx(), { from: '919000000001', to: TO, body: 'hi' }), (err) => {
          assert.equal(err.code, 'BAD_RESPONSE');
          assert.deepEqual(keyRuns(err.message), [], err.message);
          return true;
        });
      }
    });

    it('quote() masks the key before the cut and any 6-character run of it after', () => {
      const q = quote(`x${KEY}y ${KEY.slice(3, 12)} ${KEY.slice(0, 5)}`, KEY, 10);
      assert.deepEqual(keyRuns(q), []);
      assert.equal(quote(`abc ${KEY.slice(0, 5)}`, KEY), `abc ${KEY.slice(0, 5)}`, 'fewer than 6 characters are no run of the key');
    });
  });

  describe('the key as a property name of an answer', () => {
    it('is masked in names as in values, at any depth, on the payload and the envelope', async () => {
      rec.reply = () => ({
        body: JSON.stringify({
          status: 'OK',
          message: 'ok',
          [KEY]: { [`k_${KEY}`]: 'v' },
          data: [{ id: 'm1', mobile: TO, [KEY]: KEY, nested: { deep: [{ [`${KEY}.x`]: 1 }] } }],
        }),
      });
      const result = await sendMessage(ctx(), { from: '919000000001', to: TO, body: 'hi' });
      const text = JSON.stringify(result);
      assert.ok(!text.includes(KEY), text);
      assert.equal(result.payload[0].id, 'm1');
      assert.equal(result.payload[0]['***'], '***');
      assert.deepEqual(result.envelope['***'], { 'k_***': 'v' });
    });

    it('a service error carrying the key in names and values keeps it out of its message and envelope', async () => {
      rec.reply = () => ({ body: JSON.stringify({ status: 'A404', message: `account of ${KEY} suspended`, [KEY]: 1 }) });
      await assert.rejects(sendMessage(ctx(), { from: '919000000001', to: TO, body: 'hi' }), (err) => {
        assert.equal(err.code, 'A404');
        assert.ok(!err.message.includes(KEY) && !JSON.stringify(err.envelope).includes(KEY), `${err.message} ${JSON.stringify(err.envelope)}`);
        return true;
      });
    });

    it('redactDeep leaves values and names without the key as they are', () => {
      const value = { a: 'b', list: [1, 'two', { c: null }], [`${KEY}:x`]: `${KEY}!` };
      assert.deepEqual(redactDeep(value, KEY), { a: 'b', list: [1, 'two', { c: null }], '***:x': '***!' });
    });
  });

  describe('control characters in answers', () => {
    const hostile = 'A\u001b[2J\u001b]0;pwned\u0007B\u0000C\u009bD\u202eE';

    it('an undecodable answer is quoted with ESC, BEL, NUL, C1 and bidi controls escaped', async () => {
      rec.reply = () => ({ headers: { 'content-type': 'text/plain' }, body: `<<${hostile}` });
      await assert.rejects(sendMessage(ctx(), { from: '919000000001', to: TO, body: 'hi' }), (err) => {
        assert.equal(err.code, 'BAD_RESPONSE');
        assert.ok(!CONTROL.test(err.message) && !/[\u202a-\u202e]/.test(err.message), JSON.stringify(err.message));
        assert.ok(err.message.includes('\\u001b[2J') && err.message.includes('\\u0007') && err.message.includes('\\u0000'), err.message);
        return true;
      });
    });

    it("a service error's message and status are escaped too; a status that is no code becomes SERVICE_ERROR", async () => {
      rec.reply = () => ({ body: JSON.stringify({ status: 'A4\u001b[31m04', message: hostile }) });
      await assert.rejects(callStatus(ctx(), 'c1'), (err) => {
        assert.equal(err.code, 'SERVICE_ERROR');
        assert.ok(!CONTROL.test(err.message) && !CONTROL.test(String(err)), JSON.stringify(err.message));
        assert.ok(err.message.includes('\\u001b'), err.message);
        return true;
      });
    });

    it('escapeControl writes each as \\uXXXX and leaves other text alone', () => {
      assert.equal(escapeControl('a\u001bb\nc\u2028d é ✓'), 'a\\u001bb\\u000ac\\u2028d é ✓');
    });
  });

  describe('a short key does not change answers', () => {
    it('with the key "K" a send answered OK succeeds, and ids and texts containing K are kept', async () => {
      rec.reply = () => ({ body: JSON.stringify({ status: 'OK', message: 'OK, Kaleyra took it', data: [{ id: 'AKB-K1', mobile: TO, note: 'K' }] }) });
      const result = await sendMessage(ctx('K'), { from: '919000000001', to: TO, body: 'hi' });
      assert.equal(result.envelope.status, 'OK');
      assert.equal(result.envelope.message, 'OK, Kaleyra took it');
      assert.equal(result.payload[0].id, 'AKB-K1');
      assert.equal(result.payload[0].note, '***', 'a value that is the key itself is still masked');
    });

    it('a read answered 200 with a short key inside the records keeps them whole', async () => {
      rec.reply = () => ({ body: JSON.stringify({ status: '200', message: 'OK', data: { 0: { id: '12K4', mobile: TO, status: 'OK', senttime: '2026-11-01 10:00:00' } } }) });
      const result = await callStatus(ctx('K'), '12K4');
      assert.deepEqual(result.payload.map((r) => [r.id, r.status]), [['12K4', 'OK']]);
    });
  });
});
