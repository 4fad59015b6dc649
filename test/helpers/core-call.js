'use strict';
// What the tests of the core read and voice interfaces (inbox, call status, click-to-call) share: a
// recording server around the suite, the KaleyraClient to call with (one attempt per call), the api-key
// leak check, "refused before any request", and the answers no decoder may accept.
const assert = require('node:assert/strict');
const { Recorder } = require('./recorder');
const { KaleyraClient } = require('../../dist/core/client');
const { InputError, ServiceError, TransportError } = require('../../dist/core/errors');

/**
 * Call inside a describe(). `key` is the account's api key (letters and digits, at least 8: the client
 * checks it). `reply` is the answer each test starts with (answer() changes it). Returns
 * { rec, client, answer, noKey, refused, serviceRefused, failsOnGarbage }.
 */
function coreSuite(key, reply) {
  const rec = new Recorder();
  const clients = new Map();
  /** The recorder's answer: a reply, or a function of the request giving one. */
  const answer = (r) => {
    rec.reply = typeof r === 'function' ? r : () => r;
  };
  before(() => rec.start());
  after(async () => {
    await Promise.all([...clients.values()].map((c) => c.close()));
    clients.clear();
    await rec.stop();
  });
  beforeEach(() => {
    rec.requests.length = 0;
    answer(reply);
  });

  /**
   * The client for the recorder: every base URL is `baseUrl` (the recorder's unless given), answers are
   * asked in `format`, and a call is attempted once (no retry), so a test sees each request it caused.
   * One client per { baseUrl, format }, closed after the suite.
   */
  const client = ({ baseUrl = rec.url, format } = {}) => {
    const id = `${format} ${baseUrl}`;
    let made = clients.get(id);
    if (!made) {
      const urls = { messagingUrl: baseUrl, vmnUrl: baseUrl, obdUrl: baseUrl, voiceUrl: baseUrl };
      made = new KaleyraClient({ apiKey: key, ...urls, format, timeout: 60_000, readRetry: { retries: 0 }, sendRetry: { retries: 0 } });
      clients.set(id, made);
    }
    return made;
  };

  function noKey(err) {
    assert.ok(!err.message.includes(key), `the api key leaked into: ${err.message}`);
    assert.ok(!String(err.stack).includes(key), 'the api key leaked into the stack');
  }

  /** call() fails with an InputError naming `field` first in its message, and nothing is sent. */
  async function refused(call, field, code = 'INVALID_INPUT') {
    await assert.rejects(call(), (err) => {
      assert.ok(err instanceof InputError, `expected an InputError, got ${err && err.name}: ${err && err.message}`);
      assert.equal(err.code, code);
      assert.equal(err.field, field);
      assert.ok(err.message.startsWith(`${field}: `), err.message);
      noKey(err);
      return true;
    });
    assert.equal(rec.requests.length, 0, 'nothing may be sent for a refused input');
  }

  /** The service's own refusal: a ServiceError with its code and message, the envelope kept. */
  async function serviceRefused(promise, code, message) {
    await assert.rejects(promise, (err) => {
      assert.ok(err instanceof ServiceError, `${err.name}: ${err.message}`);
      assert.equal(err.code, code);
      assert.equal(err.envelope.status, code);
      assert.equal(err.envelope.message, message);
      assert.equal(err.message, message);
      assert.equal(String(err), `ServiceError [${code}]: ${message}`);
      noKey(err);
      return true;
    });
  }

  /** One test per garbage answer: call(format) sends once and fails with that answer's TransportError code. */
  function failsOnGarbage(formats, call, seed) {
    for (const format of formats) {
      for (const [name, r, code] of garbage(seed)) {
        it(`${name} → ${code} (format ${format})`, async function () {
          answer(r);
          await assert.rejects(call(format), (err) => {
            assert.ok(err instanceof TransportError, `expected a TransportError, got ${err && err.name}: ${err && err.message}`);
            assert.equal(err.code, code, err.message);
            noKey(err);
            return true;
          });
          assert.equal(rec.requests.length, 1);
        });
      }
    }
  }

  return { rec, client, answer, noKey, refused, serviceRefused, failsOnGarbage };
}

/** Bodies and faults no decoder may accept, whatever the format asked: [name, recorder reply, expected code]. */
function garbage(seed) {
  const random = Buffer.alloc(512);
  for (let i = 0; i < random.length; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    random[i] = (seed >> 16) & 0xff;
  }
  const html = { 'content-type': 'text/html' };
  return [
    ['an HTML page', { headers: html, body: '<html><head><title>Oops</title></head><body><h1>Service unavailable</h1></body></html>' }, 'BAD_RESPONSE'],
    ['a malformed HTML page', { headers: html, body: '<!DOCTYPE html>\n<html><body>Bad gateway<br></body></html>' }, 'BAD_RESPONSE'],
    ['truncated JSON', '{"status":"200","message":"OK","data":{"0":{"id":"12', 'BAD_RESPONSE'],
    ['truncated JSONP', 'callback({"status":"200","message":"OK","data":{"0":{"id":"12', 'BAD_RESPONSE'],
    ['truncated PHP', 'a:3:{s:6:"status";s:3:"200";s:7:"message";s:2:"OK";s:4:"data";a:1:{i:0;a:4:{s:2:"id";s:14:"1234', 'BAD_RESPONSE'],
    ['PHP with a wrong string length', 'a:2:{s:6:"status";s:4:"200";s:7:"message";s:2:"OK";}', 'BAD_RESPONSE'],
    ['random bytes', { headers: { 'content-type': 'application/octet-stream' }, body: random }, 'BAD_RESPONSE'],
    ['an empty body', '', 'BAD_RESPONSE'],
    ['JSON without status', '{"message":"OK","data":{"0":{"id":"1"}}}', 'BAD_RESPONSE'],
    ['a JSON array', '[{"status":"200"}]', 'BAD_RESPONSE'],
    ['a JSON string', '"200"', 'BAD_RESPONSE'],
    ['plain text without status', 'message: OK\ndata.0.id: 1', 'BAD_RESPONSE'],
    ['a sentence', 'Something went wrong, please try again later.', 'BAD_RESPONSE'],
    ['HTTP 500 (even with a success body)', { status: 500, body: '{"status":"200","message":"OK","data":{}}' }, 'HTTP_STATUS'],
    ['HTTP 502 with an HTML page', { status: 502, headers: html, body: '<html><body>Bad gateway</body></html>' }, 'HTTP_STATUS'],
    ['HTTP 403', { status: 403, body: 'Forbidden: source IP not allowed' }, 'HTTP_STATUS'],
    ['HTTP 404', { status: 404, body: 'Not found' }, 'HTTP_STATUS'],
    ['a connection reset', 'reset', 'NETWORK'],
  ];
}

module.exports = { coreSuite };
