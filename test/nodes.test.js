'use strict';
// The four action nodes in the real Node-RED runtime against a real HTTP server on 127.0.0.1:
// outputs, overrides, Catch errors with codes, statuses, and the api key absent everywhere.
const assert = require('node:assert/strict');
const { Recorder } = require('./helpers/recorder');
const { helper, loadNode, logText, statusKey } = require('./helpers/flow');

const KEY = 'TESTKEY0123456789abcdef';

describe('action nodes in the Node-RED runtime', function () {
  let server;
  let urls;

  before(async () => {
    server = new Recorder();
    const base = await server.start();
    urls = { messagingUrl: `${base}/m`, vmnUrl: `${base}/vmn`, obdUrl: `${base}/obd`, voiceUrl: `${base}/voice` };
  });
  after(() => server.stop());
  beforeEach(() => {
    server.requests.length = 0;
    server.reply = () => ({ body: '{"status":"200","message":"OK","data":{}}' });
  });
  afterEach(async () => {
    await helper.unload();
  });

  /** Nothing the runtime produced for the test may contain the key. */
  function assertNoKey(t) {
    const everything = JSON.stringify({ outputs: t.outputs, errors: t.errors, statuses: t.statuses }) + logText();
    assert.ok(!everything.includes(KEY), 'the api key leaked');
  }

  describe('kaleyra-whatsapp', () => {
    const sent = (to = '919812345678') => ({
      body: JSON.stringify({ status: 'OK', message: 'Message Sent Successfully', data: [{ id: 'abc123', mobile: to, customid: '' }] }),
    });

    it('sends a text message and outputs the ids, keeping the rest of the msg', async () => {
      server.reply = () => sent();
      const t = await loadNode('kaleyra-whatsapp', {}, { config: urls });
      const { output, error } = await t.run({ payload: 'hello', to: '919812345678', from: '918000000000', topic: 'keep me' });
      assert.equal(error, undefined);
      assert.deepEqual(output.payload, [{ id: 'abc123', mobile: '919812345678', customid: '' }]);
      assert.equal(output.kaleyra.status, 'OK');
      assert.equal(output.kaleyra.message, 'Message Sent Successfully');
      assert.equal(output.topic, 'keep me');
      const req = server.last;
      assert.equal(req.path, '/m/api/v4/');
      assert.equal(req.fields.method, 'wa');
      assert.equal(req.fields.from, '918000000000');
      assert.equal(req.fields.api_key, KEY);
      assert.deepEqual(JSON.parse(req.fields.body), { type: 'text', text: { message: 'hello' }, to: '919812345678' });
      assert.deepEqual(t.statuses[0], { fill: 'blue', shape: 'dot', text: 'requesting (1)' });
      assert.deepEqual(await t.finalStatus(), { fill: 'green', shape: 'dot', text: 'sent to 1' });
      assertNoKey(t);
    });

    it('node settings win over the message; TypedInputs read msg, flow and env', async () => {
      server.reply = () => sent('917000000001');
      process.env.KALEYRA_TEST_FROM = '918111111111';
      const t = await loadNode(
        'kaleyra-whatsapp',
        { from: 'KALEYRA_TEST_FROM', fromType: 'env', to: 'target', toType: 'msg', callback: 'https://example.test/cb', callbackType: 'str' },
        { config: urls },
      );
      await t.run({ payload: { type: 'text', text: { message: 'hi' }, callback: 'https://ignored.test/' }, from: '919999999999', to: '919999999999', target: '917000000001' });
      const body = JSON.parse(server.last.fields.body);
      assert.equal(server.last.fields.from, '918111111111');
      assert.equal(body.to, '917000000001');
      assert.equal(body.callback, 'https://example.test/cb');
    });

    it('a setting left empty is taken from the message (msg.to, then payload.to)', async () => {
      server.reply = () => sent();
      const t = await loadNode('kaleyra-whatsapp', { from: '918000000000', fromType: 'str', to: '', toType: 'str' }, { config: urls });
      await t.run({ payload: { type: 'text', text: { message: 'x' }, to: ['919812345678', '919812345679'] } });
      assert.deepEqual(JSON.parse(server.last.fields.body).to, ['919812345678', '919812345679']);
    });

    it('bad input goes to Catch with INVALID_INPUT naming the field; nothing is sent or output', async () => {
      const t = await loadNode('kaleyra-whatsapp', {}, { config: urls });
      const { output, error } = await t.run({ payload: 'hello', to: '98-BAD', from: '918000000000', keep: 1 });
      assert.equal(output, undefined);
      assert.equal(error.error.code, 'INVALID_INPUT');
      assert.match(error.error.message, /\bto\b/);
      assert.equal(error.keep, 1, 'the msg reaches Catch with its properties');
      assert.equal(server.requests.length, 0);
      assert.deepEqual(await t.finalStatus(), { fill: 'red', shape: 'ring', text: 'INVALID_INPUT' });
      assertNoKey(t);
    });

    it('spec codes for bad input: E603 for a template without name', async () => {
      const t = await loadNode('kaleyra-whatsapp', {}, { config: urls });
      const { error } = await t.run({ payload: { type: 'template', template: { namespace: 'ns' } }, to: '919812345678', from: '918000000000' });
      assert.equal(error.error.code, 'E603');
      assert.equal(server.requests.length, 0);
    });

    it('a service error reaches Catch with the service code', async () => {
      server.reply = () => ({ body: JSON.stringify({ status: 'A404', message: `Account suspended for ${KEY}` }) });
      const t = await loadNode('kaleyra-whatsapp', {}, { config: urls });
      const { output, error } = await t.run({ payload: 'hello', to: '919812345678', from: '918000000000' });
      assert.equal(output, undefined);
      assert.equal(error.error.code, 'A404');
      assert.match(error.error.message, /Account suspended/);
      assertNoKey(t);
    });

    it('a refused connection reaches Catch with NETWORK, said once with the host; the system code on msg.error.cause; status "NETWORK: refused"', async () => {
      const t = await loadNode('kaleyra-whatsapp', {}, { config: { ...urls, messagingUrl: 'http://127.0.0.1:1', retries: 0 } });
      const { error } = await t.run({ payload: 'hello', to: '919812345678', from: '918000000000' });
      assert.equal(error.error.code, 'NETWORK');
      assert.match(error.error.message, /^TransportError \[NETWORK\]: POST http:\/\/127\.0\.0\.1:1\/api\/v4\/: connection refused by 127\.0\.0\.1:1 \(nothing listens there/);
      assert.ok(!/ECONNREFUSED/.test(error.error.message), 'said once, in words, not "ECONNREFUSED connect ECONNREFUSED 127.0.0.1:1"');
      assert.deepEqual(error.error.cause, { code: 'ECONNREFUSED', host: '127.0.0.1:1' });
      assert.deepEqual(await t.finalStatus(), { fill: 'red', shape: 'ring', text: 'NETWORK: refused' });
      assertNoKey(t);
    });

    it('a TLS failure (https to a plain HTTP port) says so, with the host; status "NETWORK: TLS"', async () => {
      const t = await loadNode('kaleyra-whatsapp', {}, { config: { ...urls, messagingUrl: server.url.replace('http:', 'https:'), retries: 0 } });
      const { error } = await t.run({ payload: 'hello', to: '919812345678', from: '918000000000' });
      assert.equal(error.error.code, 'NETWORK');
      assert.match(error.error.message, new RegExp(`TLS failure with ${server.url.slice(7).replace(/\./g, '\\.')}: `));
      assert.deepEqual(await t.finalStatus(), { fill: 'red', shape: 'ring', text: 'NETWORK: TLS' });
    });

    it('networkFailure: host not found, DNS, unreachable, reset, and anything else, each said in words', () => {
      const { networkFailure } = require('../dist/core/transport');
      const o = 'https://api.example.com:8443';
      assert.deepEqual(networkFailure('ENOTFOUND', o, 'getaddrinfo ENOTFOUND api.example.com'), { reason: 'host not found', text: 'host not found: api.example.com (check the URL; DNS knows no such name)' });
      assert.equal(networkFailure('EAI_AGAIN', o, '').reason, 'DNS');
      assert.equal(networkFailure('EHOSTUNREACH', o, '').text, 'api.example.com:8443 cannot be reached from this machine (no route to it)');
      assert.equal(networkFailure('ECONNRESET', o, 'socket hang up').reason, 'reset');
      assert.deepEqual(networkFailure('CERT_HAS_EXPIRED', o, 'certificate has expired'), { reason: 'TLS', text: 'TLS failure with api.example.com:8443: certificate has expired' });
      assert.deepEqual(networkFailure('', o, 'other \u001b[31m'), { reason: 'failed', text: 'the connection to api.example.com:8443 failed: other \\u001b[31m' });
    });

    it('a slow service reaches Catch with TIMEOUT after the configured timeout', async () => {
      server.reply = () => new Promise((resolve) => setTimeout(() => resolve(sent()), 1500));
      const t = await loadNode('kaleyra-whatsapp', {}, { config: { ...urls, timeout: 1 } });
      const { output, error } = await t.run({ payload: 'hello', to: '919812345678', from: '918000000000' });
      assert.equal(output, undefined);
      assert.equal(error.error.code, 'TIMEOUT');
    });

    it('an account without key fails every message with CONFIG naming apiKey; the node shows "no api key"', async () => {
      const t = await loadNode('kaleyra-whatsapp', {}, { config: urls, apiKey: null });
      const { error } = await t.run({ payload: 'hello', to: '919812345678', from: '918000000000' });
      assert.equal(error.error.code, 'CONFIG');
      assert.match(error.error.message, /apiKey: is missing/);
      assert.equal(server.requests.length, 0);
      assert.deepEqual(await t.finalStatus(), { fill: 'red', shape: 'ring', text: statusKey('noApiKey') });
    });

    it('sends a document from msg.file and msg.filename', async () => {
      server.reply = () => sent();
      const t = await loadNode('kaleyra-whatsapp', {}, { config: urls });
      const file = Buffer.from('%PDF-1.4 test document');
      const { output } = await t.run({ payload: { type: 'document', document: { caption: 'Invoice' } }, file, filename: 'invoice.pdf', to: '919812345678', from: '918000000000' });
      assert.equal(output.payload[0].id, 'abc123');
      assert.deepEqual(server.last.files.file.data, file);
      assert.equal(server.last.files.file.filename, 'invoice.pdf');
    });
    it('a leftover msg.file on a text message is ignored, as the help says (one msg reused for media, then text)', async () => {
      server.reply = () => sent();
      const t = await loadNode('kaleyra-whatsapp', {}, { config: urls });
      const { output, error } = await t.run({ payload: 'and now a text', file: Buffer.from('%PDF-1.4'), filename: 'invoice.pdf', to: '919812345678', from: '918000000000' });
      assert.equal(error, undefined, error && error.error.message);
      assert.equal(output.payload[0].id, 'abc123');
      assert.deepEqual(server.last.files, {}, 'no file part is sent with a text');
      assert.equal(JSON.parse(server.last.fields.body).type, 'text');
    });

    it('an exception while reading the msg (a throwing getter) reaches Catch with INVALID_INPUT', async () => {
      const t = await loadNode('kaleyra-whatsapp', {}, { config: urls });
      const msg = { payload: 'hello', from: '918000000000' };
      let reads = 0;
      // Throws when the node reads it, not when Node-RED or the Catch node copy the msg afterwards.
      Object.defineProperty(msg, 'to', { enumerable: true, configurable: true, get: () => (reads++ === 0 ? (() => { throw new TypeError('boom: to is not readable'); })() : '919812345678') });
      const { output, error } = await t.run(msg);
      assert.equal(output, undefined);
      assert.equal(error.error.code, 'INVALID_INPUT');
      assert.match(error.error.message, /msg: could not be read: boom/);
      assert.equal(server.requests.length, 0);
    });
  });

  describe('kaleyra-inbox', () => {
    const record = (n) => ({ recipient: '9220000000', keyword: 'HELLO', sender: `91980000000${n}`, message: `m${n}`, operator: '', circle: '', response: '', received_time: '2026-11-01 10:00:00' });

    it('reads the inbox with node filters, payload keys filling the empty ones', async () => {
      server.reply = () => ({ body: JSON.stringify({ status: '200', message: 'OK', data: { rows: { inbox: record(1) } } }) });
      const t = await loadNode('kaleyra-inbox', { number: '9220000000', numberType: 'str', limit: '10', limitType: 'num' }, { config: urls });
      const { output, error } = await t.run({ payload: { number: '1111111111', keyword: 'HELLO', page: 2 } });
      assert.equal(error, undefined);
      assert.deepEqual(output.payload, [record(1)], 'a single record becomes an array');
      const q = server.last.query;
      assert.equal(server.last.path, '/vmn/v1/');
      assert.equal(q.method, 'inbox');
      assert.equal(q.number, '9220000000');
      assert.equal(q.keyword, 'HELLO');
      assert.equal(q.limit, '10');
      assert.equal(q.page, '2');
      assert.equal((await t.finalStatus()).text, '1 record');
      assertNoKey(t);
    });

    it('a non-object payload (an inject timestamp) is just a trigger', async () => {
      server.reply = () => ({ body: JSON.stringify({ status: '200', message: 'OK', data: { rows: { inbox: [record(1), record(2)] } } }) });
      const t = await loadNode('kaleyra-inbox', {}, { config: urls });
      const { output } = await t.run({ payload: Date.now() });
      assert.equal(output.payload.length, 2);
    });

    it('an inbox without URL fails with CONFIG naming vmnUrl', async () => {
      const t = await loadNode('kaleyra-inbox', {}, { config: { ...urls, vmnUrl: '' } });
      const { error } = await t.run({ payload: '' });
      assert.equal(error.error.code, 'CONFIG');
      assert.match(error.error.message, /vmnUrl/);
    });
  });

  describe('kaleyra-call-status', () => {
    it('looks up a call id given as the payload string', async () => {
      server.reply = () => ({ body: JSON.stringify({ status: '200', message: 'OK', data: { 0: { id: '123.45-1', mobile: '9198', status: 'COMPLETED', senttime: '2026-11-01 10:00:00' } } }) });
      const t = await loadNode('kaleyra-call-status', { method: 'voice.status' }, { config: urls });
      const { output } = await t.run({ payload: '123.45-1' });
      assert.deepEqual(output.payload, [{ id: '123.45-1', mobile: '9198', status: 'COMPLETED', senttime: '2026-11-01 10:00:00' }]);
      assert.equal(server.last.path, '/obd/api/v1/');
      assert.equal(server.last.query.method, 'voice.status');
      assert.equal(server.last.query.id, '123.45-1');
      assert.equal((await t.finalStatus()).text, 'COMPLETED');
    });

    it('groupStatus and an object payload with mobile', async () => {
      server.reply = () => ({ body: JSON.stringify({ status: '200', message: 'OK', data: [] }) });
      const t = await loadNode('kaleyra-call-status', { method: 'voice.groupStatus' }, { config: urls });
      await t.run({ payload: { id: '777', mobile: '919812345678' } });
      assert.equal(server.last.query.method, 'voice.groupStatus');
      assert.equal(server.last.query.mobile, '919812345678');
    });

    it('A416 from the service reaches Catch', async () => {
      server.reply = () => ({ body: JSON.stringify({ status: 'A416', message: 'Invalid call id / mobile' }) });
      const t = await loadNode('kaleyra-call-status', {}, { config: urls });
      const { output, error } = await t.run({ payload: 'nope' });
      assert.equal(output, undefined);
      assert.equal(error.error.code, 'A416');
    });

    it('a missing id is refused before sending', async () => {
      const t = await loadNode('kaleyra-call-status', {}, { config: urls });
      const { error } = await t.run({ payload: {} });
      assert.equal(error.error.code, 'INVALID_INPUT');
      assert.match(error.error.message, /\bid\b/);
      assert.equal(server.requests.length, 0);
    });
  });

  describe('kaleyra-click2call', () => {
    it('starts a call and outputs its id; arrays are joined; return=1 always', async () => {
      server.reply = () => ({ body: JSON.stringify({ status: '200', message: 'OK', data: { id: 'c2c_42' } }) });
      const t = await loadNode('kaleyra-click2call', { retry: '1', retryType: 'num' }, { config: urls });
      const { output } = await t.run({ payload: { caller: ['9812345678', '9812345679'], receiver: ['9700000001', '9700000002'], retry: 2, custom: 'order42' } });
      assert.deepEqual(output.payload, { id: 'c2c_42' });
      const q = server.last.query;
      assert.equal(server.last.path, '/voice/v1/');
      assert.equal(q.method, 'dial.click2call');
      assert.equal(q.caller, '9812345678-9812345679');
      assert.equal(q.receiver, '9700000001^9700000002');
      assert.equal(q.retry, '1', 'the node setting wins over payload.retry');
      assert.equal(q.custom, 'order42');
      assert.equal(q.return, '1');
      assert.equal((await t.finalStatus()).text, 'call c2c_42');
    });

    it('a missing receiver is E423 before sending', async () => {
      const t = await loadNode('kaleyra-click2call', {}, { config: urls });
      const { error } = await t.run({ payload: { caller: '9812345678' } });
      assert.equal(error.error.code, 'E423');
      assert.equal(server.requests.length, 0);
    });

    it('retry out of range names the field', async () => {
      const t = await loadNode('kaleyra-click2call', {}, { config: urls });
      const { error } = await t.run({ payload: { caller: '9812345678', receiver: '9812345670', retry: 3 } });
      assert.equal(error.error.code, 'INVALID_INPUT');
      assert.match(error.error.message, /retry/);
    });
  });

  it('with several messages in flight each ends exactly once', async () => {
    let n = 0;
    server.reply = () => new Promise((resolve) => setTimeout(() => resolve({ body: JSON.stringify({ status: 'OK', message: 'ok', data: [{ id: `id${++n}`, mobile: '919812345678' }] }) }), 20));
    const t = await loadNode('kaleyra-whatsapp', {}, { config: urls });
    for (let i = 0; i < 20; i++) t.node.receive({ payload: 'x', to: i % 5 === 0 ? 'bad' : '919812345678', from: '918000000000', i });
    const deadline = Date.now() + 5000;
    while (t.outputs.length + t.errors.length < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(t.outputs.length, 16);
    assert.equal(t.errors.length, 4);
    const seen = [...t.outputs, ...t.errors].map((m) => m.i).sort((a, b) => a - b);
    assert.deepEqual(seen, [...Array(20).keys()]);
    assert.equal(server.requests.length, 16);
  });
});
