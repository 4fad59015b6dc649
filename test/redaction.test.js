'use strict';
// The api key and hostile answers: what an answer quotes into an error is masked before it is cut (no
// run of 6 of the key's characters survives at any cut), property names are masked as well as values,
// control characters are escaped, and masking never changes what the status check or a msg sees (a
// piece of the key inside "OK" or inside an id is not the key).
const assert = require('node:assert/strict');
const { Recorder } = require('./helpers/recorder');
const { quote, redactDeep, escapeControl } = require('../dist/core/redact');
const { KaleyraClient } = require('../dist/core/client');
const { ConfigError } = require('../dist/core/errors');
const { helper, loadNode, logText } = require('./helpers/flow');
const { until } = require('./helpers/http-node');

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
  const clients = new Map();
  /** The client of `apiKey` for the recorder (sends and call status), each call attempted once (no retry). */
  const clientOf = (apiKey = KEY) => {
    if (!clients.has(apiKey)) {
      clients.set(apiKey, new KaleyraClient({ apiKey, messagingUrl: rec.url, obdUrl: rec.url, timeout: 60_000, readRetry: { retries: 0 }, sendRetry: { retries: 0 } }));
    }
    return clients.get(apiKey);
  };
  before(() => rec.start());
  after(async () => {
    await Promise.all([...clients.values()].map((c) => c.close()));
    await rec.stop();
  });

  describe('part of the key in a quoted answer (a proxy page echoing the request)', () => {
    // The quote is cut at 120 characters: put the key across every cut position, and at the page's own edges.
    for (let at = 100; at <= 121; at++) {
      it(`200 with an undecodable page, the key starting at character ${at}: no 6 characters of it in the error`, async () => {
        const page = `${'p'.repeat(at - 8)}api_key=${KEY}&from=919000000001 and more of the page`;
        rec.reply = () => ({ headers: { 'content-type': 'text/html' }, body: page });
        await assert.rejects(clientOf().sendMessage({ from: '919000000001', to: TO, body: 'hi' }), (err) => {
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
        await assert.rejects(clientOf().sendMessage({ from: '919000000001', to: TO, body: 'hi' }), (err) => {
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
      const result = await clientOf().sendMessage({ from: '919000000001', to: TO, body: 'hi' });
      const text = JSON.stringify(result);
      assert.ok(!text.includes(KEY), text);
      assert.equal(result.payload[0].id, 'm1');
      assert.equal(result.payload[0]['***'], '***');
      assert.deepEqual(result.envelope['***'], { 'k_***': 'v' });
    });

    it('a service error carrying the key in names and values keeps it out of its message and envelope', async () => {
      rec.reply = () => ({ body: JSON.stringify({ status: 'A404', message: `account of ${KEY} suspended`, [KEY]: 1 }) });
      await assert.rejects(clientOf().sendMessage({ from: '919000000001', to: TO, body: 'hi' }), (err) => {
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
      await assert.rejects(clientOf().sendMessage({ from: '919000000001', to: TO, body: 'hi' }), (err) => {
        assert.equal(err.code, 'BAD_RESPONSE');
        assert.ok(!CONTROL.test(err.message) && !/[\u202a-\u202e]/.test(err.message), JSON.stringify(err.message));
        assert.ok(err.message.includes('\\u001b[2J') && err.message.includes('\\u0007') && err.message.includes('\\u0000'), err.message);
        return true;
      });
    });

    it("a service error's message and status are escaped too; a status that is no code becomes SERVICE_ERROR", async () => {
      rec.reply = () => ({ body: JSON.stringify({ status: 'A4\u001b[31m04', message: hostile }) });
      await assert.rejects(clientOf().callStatus('c1'), (err) => {
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

  // Issue 19, item 7: a status that looks like a code but is a cut of the key (a hostile or broken answer
  // echoing part of the request) was taken as err.code, unmasked, and reached msg.error, the node's status,
  // the log and Check account. A code is treated as any quoted text: no run of 6 of the key's characters.
  describe('part of the key as the status of an answer', () => {
    const CUTS = [
      ['its first 20 characters', KEY.slice(0, 20)],
      ['its last 12 characters', KEY.slice(-12)],
    ];
    /** Everything of an error that can reach a msg, a log or a screen, as one text. */
    const exposed = (err) => [err.code, err.message, String(err.stack), String(err), JSON.stringify(err)].join('\n');

    for (const [what, cut] of CUTS) {
      it(`core client, ${what} as the status of a send's and of a read's answer: no 6 characters of the key in the error`, async () => {
        const client = new KaleyraClient({ apiKey: KEY, messagingUrl: rec.url, obdUrl: rec.url, readRetry: { retries: 0 } });
        try {
          rec.reply = () => ({ body: JSON.stringify({ status: cut, message: 'x' }) });
          const calls = [() => client.sendMessage({ from: '919000000001', to: TO, body: 'hi' }), () => client.callStatus({ id: 'c1' })];
          for (const call of calls) {
            await assert.rejects(call(), (err) => {
              assert.deepEqual(keyRuns(exposed(err)), [], exposed(err));
              assert.equal(err.code, 'SERVICE_ERROR', 'the code of a status that is no code');
              assert.equal(err.message, 'x (status "***")');
              return true;
            });
          }
        } finally {
          await client.close();
        }
      });
    }

    it('a status that is a code is still the code, and one that merely shares 5 characters with the key too', async () => {
      for (const status of ['A404', 'E423', KEY.slice(0, 5), `${KEY.slice(0, 5)}_${KEY.slice(5, 10)}`]) {
        rec.reply = () => ({ body: JSON.stringify({ status, message: 'refused' }) });
        await assert.rejects(clientOf().callStatus('c1'), (err) => {
          assert.deepEqual([err.code, err.message], [status, 'refused']);
          return true;
        });
      }
    });

    describe('through the nodes in the runtime', () => {
      afterEach(() => helper.unload());

      for (const [what, cut] of CUTS) {
        it(`whatsapp, ${what} as the status: Catch gets SERVICE_ERROR, and no 6 characters of the key in msg.error, the status or the log`, async () => {
          rec.reply = () => ({ body: JSON.stringify({ status: cut, message: 'x' }) });
          const t = await loadNode('kaleyra-whatsapp', { from: '919000000001', to: TO }, { config: { messagingUrl: rec.url }, apiKey: KEY });
          const { output, error } = await t.run({ payload: 'hi' });
          assert.equal(output, undefined);
          assert.equal(error.error.code, 'SERVICE_ERROR', error.error.message);
          assert.match(error.error.message, /x \(status "\*\*\*"\)/);
          const shown = [JSON.stringify(error.error), JSON.stringify(await t.finalStatus()), logText()].join('\n');
          assert.deepEqual(keyRuns(shown), [], shown);
        });
      }

      it('call status watch: a read answered with the key\'s first 20 characters as the status ends the watch with SERVICE_ERROR, masked', async () => {
        let reads = 0;
        rec.reply = () =>
          ++reads === 1
            ? { body: JSON.stringify({ status: '200', message: 'OK', data: [{ id: 'c1', mobile: '9812345678', status: 'INPROGRESS', senttime: '2026-11-24 10:00:00' }] }) }
            : { body: JSON.stringify({ status: KEY.slice(0, 20), message: 'x' }) };
        const t = await loadNode('kaleyra-call-status', { watch: true, watchInterval: 2 }, { config: { obdUrl: rec.url }, apiKey: KEY });
        t.node.receive({ payload: 'c1', ref: 'ticket-1' });
        await until(() => t.errors.length === 1, 'the watch to end with an error on Catch', 60_000);
        const [error] = t.errors;
        assert.equal(error.ref, 'ticket-1', 'the watch\'s own msg');
        assert.equal(error.error.code, 'SERVICE_ERROR', error.error.message);
        const shown = [JSON.stringify(error.error), logText()].join('\n');
        assert.deepEqual(keyRuns(shown), [], shown);
      });
    });
  });

  describe('a short key does not change answers', () => {
    // The client takes no key under 8 characters (checkAccount), so the shortest key a request carries has
    // 8. Pieces of it inside an answer ("OK", "K1", "12") are not the key: statuses are checked and records
    // returned as they came; only the key itself is masked.
    const SHORT = 'OKAKBK12';

    it('a key under 8 characters never reaches a request: the client refuses it (ConfigError apiKey)', () => {
      for (const apiKey of ['K', 'OKAKBK1']) {
        assert.throws(() => new KaleyraClient({ apiKey, messagingUrl: rec.url, obdUrl: rec.url }), (err) => err instanceof ConfigError && err.setting === 'apiKey' && /at least 8/.test(err.message));
      }
    });

    it(`with the key "${SHORT}" a send answered OK succeeds, and ids and texts containing pieces of it are kept`, async () => {
      rec.reply = () => ({ body: JSON.stringify({ status: 'OK', message: 'OK, Kaleyra took it', data: [{ id: 'AKB-K1', mobile: TO, note: SHORT }] }) });
      const result = await clientOf(SHORT).sendMessage({ from: '919000000001', to: TO, body: 'hi' });
      assert.equal(result.envelope.status, 'OK');
      assert.equal(result.envelope.message, 'OK, Kaleyra took it');
      assert.equal(result.payload[0].id, 'AKB-K1');
      assert.equal(result.payload[0].note, '***', 'a value that is the key itself is still masked');
    });

    it('a read answered 200 with pieces of the key inside the records keeps them whole', async () => {
      rec.reply = () => ({ body: JSON.stringify({ status: '200', message: 'OK', data: { 0: { id: '12K4', mobile: TO, status: 'OK', senttime: '2026-11-01 10:00:00', note: SHORT } } }) });
      const result = await clientOf(SHORT).callStatus('12K4');
      assert.deepEqual(result.payload.map((r) => [r.id, r.status, r.note]), [['12K4', 'OK', '***']]);
    });

    it('a secret under 8 characters (a Redis password; never a client key) is masked only where it stands alone', () => {
      const answer = { status: 'OK', message: 'OK, Kaleyra took it', data: [{ id: 'AKB-K1', mobile: TO, note: 'K' }, { id: '12K4', status: 'OK' }] };
      assert.deepEqual(redactDeep(answer, 'K'), { status: 'OK', message: 'OK, Kaleyra took it', data: [{ id: 'AKB-K1', mobile: TO, note: '***' }, { id: '12K4', status: 'OK' }] });
    });
  });
});
