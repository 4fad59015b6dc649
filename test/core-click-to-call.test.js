'use strict';
// Interface D (spec 4.4, 2.5, 6.2): the exact request each valid input produces (callback URL encoded
// exactly once), every refused input (E423 for a missing receiver), every response format and failure.
const assert = require('node:assert/strict');
const { coreSuite } = require('./helpers/core-call');
const { InputError, ServiceError, TransportError } = require('../dist/core/errors');
const { clickToCallParams, buildCallbackUrl, CALLBACK_VARIABLES } = require('../dist/core/click-to-call');

const KEY = 'kEyClIcK2cAlLVq5nT8';
const A = '9876543210';
const B = '9812345678';
const C = '9123456789';

const ok = (data) => JSON.stringify({ status: '200', message: 'Call initiated', data });

describe('core/click-to-call (spec 4.4, 2.5, 6.2)', function () {
  const { rec, client, answer, noKey, refused: refusedBy, serviceRefused, failsOnGarbage } = coreSuite(KEY, ok({ id: 'c2c_1' }));
  const refused = (input, field, code = 'INVALID_INPUT') => refusedBy(() => client().startClickToCall(input), field, code);

  async function sent(input, c = client()) {
    rec.requests.length = 0;
    const result = await c.startClickToCall(input);
    assert.equal(rec.requests.length, 1);
    assert.equal(rec.last.method, 'GET');
    assert.equal(rec.last.path, '/v1/');
    return { query: rec.last.query, result };
  }

  const base = { method: 'dial.click2call', format: 'JSON', return: '1', api_key: KEY };

  describe('request (spec 4.4)', function () {
    it('caller and receiver: method, format=JSON, return=1, api key; nothing else', async function () {
      const { query, result } = await sent({ caller: A, receiver: B });
      assert.deepEqual(query, { ...base, caller: A, receiver: B });
      assert.deepEqual(result.payload, { id: 'c2c_1' });
    });

    it('numbers given as numbers', async function () {
      const { query } = await sent({ caller: Number(A), receiver: Number(B), caller_id: Number(C) });
      assert.deepEqual(query, { ...base, caller: A, receiver: B, caller_id: C });
    });

    it('several callers: an array or a -joined string, sent joined with -', async function () {
      assert.equal((await sent({ caller: [A, Number(B), C], receiver: B })).query.caller, `${A}-${B}-${C}`);
      assert.equal((await sent({ caller: `${A}-${B}`, receiver: B })).query.caller, `${A}-${B}`);
      assert.equal((await sent({ caller: ` ${A} - ${B} `, receiver: B })).query.caller, `${A}-${B}`);
      assert.equal((await sent({ caller: Array(10).fill(A), receiver: B })).query.caller, Array(10).fill(A).join('-'));
    });

    it('several receivers: an array or a ^-joined string, sent joined with ^', async function () {
      assert.equal((await sent({ caller: A, receiver: [B, C] })).query.receiver, `${B}^${C}`);
      assert.equal((await sent({ caller: A, receiver: `${B}^${C}` })).query.receiver, `${B}^${C}`);
      assert.ok(rec.last.rawQuery.includes(`receiver=${B}%5E${C}`), rec.last.rawQuery);
    });

    it('an IVR receiver: ivr:<id>', async function () {
      assert.equal((await sent({ caller: A, receiver: 'ivr:123' })).query.receiver, 'ivr:123');
      assert.equal((await sent({ caller: A, receiver: ['ivr:Main_menu-2'] })).query.receiver, 'ivr:Main_menu-2');
    });

    it('every optional parameter, exactly', async function () {
      const callback = 'https://hooks.example.com/c2c?ref=a%20b&caller={caller}&status={status}&rec={recordpath}';
      const { query } = await sent({
        caller: A,
        receiver: B,
        retry: 2,
        delay: '30',
        caller_id: C,
        meta: { order: 'A-17', items: [1, 2], note: 'x & y' },
        custom: 'ref123',
        callback,
      });
      assert.deepEqual(query, {
        ...base,
        caller: A,
        receiver: B,
        retry: '2',
        delay: '30',
        caller_id: C,
        meta: '{"order":"A-17","items":[1,2],"note":"x & y"}',
        custom: 'ref123',
        callback,
      });
      // Encoded exactly once: braces as %7B/%7D, the URL's own %20 as %2520 (its % encoded once).
      const raw = rec.last.rawQuery;
      assert.ok(raw.includes('%7Bcaller%7D'), raw);
      assert.ok(!raw.includes('%257B'), raw);
      assert.ok(raw.includes('ref%3Da%2520b'), raw);
    });

    it('retry 0 and delay 0 are sent, not dropped', async function () {
      const { query } = await sent({ caller: A, receiver: B, retry: 0, delay: 0 });
      assert.equal(query.retry, '0');
      assert.equal(query.delay, '0');
      assert.equal((await sent({ caller: A, receiver: B, delay: 86400 })).query.delay, '86400');
    });

    it('meta given as a string is sent as is', async function () {
      assert.equal((await sent({ caller: A, receiver: B, meta: ' key=value&x=1 ' })).query.meta, ' key=value&x=1 ');
      assert.equal((await sent({ caller: A, receiver: B, meta: [1, 'a'] })).query.meta, '[1,"a"]');
    });

    it('callerId is an alias of caller_id', async function () {
      assert.equal((await sent({ caller: A, receiver: B, callerId: C })).query.caller_id, C);
      assert.equal((await sent({ caller: A, receiver: B, callerId: C, caller_id: C })).query.caller_id, C);
      assert.ok(!('callerId' in rec.last.query));
    });

    it('ignores keys the spec does not name and empty optional parameters', async function () {
      const { query } = await sent({
        caller: A,
        receiver: B,
        retry: '',
        meta: null,
        custom: undefined,
        callback: '',
        foo: 'bar',
        return: '0',
        api_key: 'other',
        method: 'x',
        format: 'XML',
      });
      assert.deepEqual(query, { ...base, caller: A, receiver: B });
    });

    it('asks for XML when the client asks for it, for plain text by leaving format out, JSON for PHP', async function () {
      answer('<api><status>200</status><message>OK</message><data><id>c2c_2</id></data></api>');
      assert.equal((await sent({ caller: A, receiver: B }, client({ format: 'xml' }))).query.format, 'XML');
      answer('status: 200\nmessage: OK\ndata.id: c2c_3');
      const { query } = await sent({ caller: A, receiver: B }, client({ format: 'text' }));
      assert.deepEqual(query, { method: 'dial.click2call', caller: A, receiver: B, return: '1', api_key: KEY });
      answer(ok({ id: 'c2c_4' }));
      assert.equal((await sent({ caller: A, receiver: B }, client({ format: 'php' }))).query.format, 'JSON');
    });

    it('clickToCallParams returns the query without format and api_key', function () {
      assert.deepEqual(JSON.parse(JSON.stringify(clickToCallParams({ caller: [A, B], receiver: 'ivr:9', retry: '1' }))), {
        method: 'dial.click2call',
        caller: `${A}-${B}`,
        receiver: 'ivr:9',
        retry: '1',
        return: '1',
      });
    });
  });

  describe('callback URL (spec 6.2)', function () {
    it('CALLBACK_VARIABLES are the 11 variables of spec 6.2', function () {
      assert.deepEqual(
        [...CALLBACK_VARIABLES],
        ['caller', 'receiver', 'starttime', 'endtime', 'duration', 'billsec', 'status', 'status1', 'status2', 'recordpath', 'callerid'],
      );
    });

    it('buildCallbackUrl appends name={name} for every variable, braces literal, then extra parameters', function () {
      const url = buildCallbackUrl('https://nr.example.com/kaleyra/cb', { token: 's3cr&t', node: 'n 1' });
      assert.equal(
        url,
        'https://nr.example.com/kaleyra/cb?caller={caller}&receiver={receiver}&starttime={starttime}&endtime={endtime}' +
          '&duration={duration}&billsec={billsec}&status={status}&status1={status1}&status2={status2}' +
          '&recordpath={recordpath}&callerid={callerid}&token=s3cr%26t&node=n%201',
      );
      assert.ok(!url.includes('%7B'));
    });

    it('keeps an existing query and fragment, and does not repeat a parameter already there', function () {
      const url = buildCallbackUrl('http://127.0.0.1:1880/cb?status=fixed#frag', { caller: 'me' });
      assert.ok(url.startsWith('http://127.0.0.1:1880/cb?status=fixed&receiver={receiver}&'), url);
      assert.ok(url.endsWith('&callerid={callerid}&caller=me#frag'), url);
      assert.ok(!url.includes('status={status}&'), url);
      assert.ok(!url.includes('caller={caller}'), url);
      assert.ok(url.includes('status1={status1}'), url);
      assert.equal(buildCallbackUrl('http://h/cb?').split('?')[1].split('&')[0], 'caller={caller}');
    });

    it('refuses a base that is not an http(s) URL', function () {
      for (const bad of ['', 'ftp://h/cb', 'not a url', 'javascript:alert(1)']) {
        assert.throws(() => buildCallbackUrl(bad), (err) => err instanceof InputError && err.field === 'callback' && err.code === 'INVALID_INPUT');
      }
    });

    it('a built callback reaches the service intact, encoded once', async function () {
      const callback = buildCallbackUrl('https://nr.example.com/kaleyra/cb?x=1', { token: 'a b/c' });
      const { query } = await sent({ caller: A, receiver: B, callback });
      assert.equal(query.callback, callback);
      const back = new URL(query.callback);
      for (const name of CALLBACK_VARIABLES) assert.equal(back.searchParams.get(name), `{${name}}`);
      assert.equal(back.searchParams.get('token'), 'a b/c');
      assert.equal(back.searchParams.get('x'), '1');
    });
  });

  describe('refused inputs (nothing sent)', function () {
    it('an input that is not an object', async function () {
      await refused('call me', 'request');
      await refused([A, B], 'request');
      await refused(42, 'request');
    });

    it('a prototype key', async function () {
      await refused(JSON.parse(`{"caller":"${A}","receiver":"${B}","__proto__":{"retry":9}}`), 'request.__proto__');
    });

    it('a missing caller', async function () {
      for (const caller of [undefined, null, '', '   ', []]) await refused({ caller, receiver: B }, 'caller');
      await refused(undefined, 'caller');
      await refused({ receiver: B }, 'caller');
    });

    it('a caller that is not 10 digits', async function () {
      await refused({ caller: '987654321', receiver: B }, 'caller');
      await refused({ caller: '98765432101', receiver: B }, 'caller');
      await refused({ caller: '+919876543210', receiver: B }, 'caller');
      await refused({ caller: '98765abcde', receiver: B }, 'caller');
      await refused({ caller: 987654321, receiver: B }, 'caller');
      await refused({ caller: `${A}--${B}`, receiver: B }, 'caller[1]');
      await refused({ caller: `${A},${B}`, receiver: B }, 'caller');
      await refused({ caller: [A, '123'], receiver: B }, 'caller[1]');
      await refused({ caller: [A, { n: B }], receiver: B }, 'caller[1]');
      await refused({ caller: { n: A }, receiver: B }, 'caller');
    });

    it('more than 10 callers', async function () {
      await refused({ caller: Array(11).fill(A), receiver: B }, 'caller');
      await refused({ caller: Array(11).fill(A).join('-'), receiver: B }, 'caller');
    });

    it('a missing receiver is E423 (receiver value not provided)', async function () {
      for (const receiver of [undefined, null, '', '  ', []]) await refused({ caller: A, receiver }, 'receiver', 'E423');
      await refused({ caller: A }, 'receiver', 'E423');
    });

    it('a receiver that is not 10 digits nor ivr:<id>', async function () {
      await refused({ caller: A, receiver: '12345' }, 'receiver');
      await refused({ caller: A, receiver: `${B}-${C}` }, 'receiver');
      await refused({ caller: A, receiver: [B, '1'] }, 'receiver[1]');
      await refused({ caller: A, receiver: 'ivr:' }, 'receiver');
      await refused({ caller: A, receiver: 'ivr:a b' }, 'receiver');
      await refused({ caller: A, receiver: 'ivr:a/b' }, 'receiver');
      await refused({ caller: A, receiver: `ivr:${'x'.repeat(51)}` }, 'receiver');
      await refused({ caller: A, receiver: 'IVR:12' }, 'receiver');
      await refused({ caller: A, receiver: Array(11).fill(B) }, 'receiver');
    });

    it('an IVR combined with numbers', async function () {
      await refused({ caller: A, receiver: ['ivr:1', B] }, 'receiver');
      await refused({ caller: A, receiver: `${B}^ivr:1` }, 'receiver');
    });

    it('retry outside 0 to 2, delay outside 0 to 86400', async function () {
      for (const retry of [3, -1, 1.5, 'twice', true]) await refused({ caller: A, receiver: B, retry }, 'retry');
      for (const delay of [-1, 86401, 'soon', 0.5]) await refused({ caller: A, receiver: B, delay }, 'delay');
    });

    it('a caller id that is not 10 digits, or two that differ', async function () {
      await refused({ caller: A, receiver: B, caller_id: '123' }, 'caller_id');
      await refused({ caller: A, receiver: B, callerId: 'abcdefghij' }, 'callerId');
      await refused({ caller: A, receiver: B, caller_id: B, callerId: C }, 'caller_id');
      await refused({ caller: A, receiver: B, caller_id: [C] }, 'caller_id');
    });

    it('meta that is not an object or a string, cannot be JSON, or is too long', async function () {
      await refused({ caller: A, receiver: B, meta: 5 }, 'meta');
      await refused({ caller: A, receiver: B, meta: true }, 'meta');
      const circular = {};
      circular.self = circular;
      await refused({ caller: A, receiver: B, meta: circular }, 'meta');
      await refused({ caller: A, receiver: B, meta: { n: 10n } }, 'meta');
      await refused({ caller: A, receiver: B, meta: 'm'.repeat(2001) }, 'meta');
      await refused({ caller: A, receiver: B, meta: { text: 'm'.repeat(1990) } }, 'meta');
    });

    it('custom that is not alphanumeric or longer than 50', async function () {
      for (const custom of ['ab-c', 'a b', 'ref_1', 'réf1', 'x'.repeat(51), { id: 1 }]) await refused({ caller: A, receiver: B, custom }, 'custom');
    });

    it('a callback that is not an http(s) URL', async function () {
      for (const callback of ['ftp://h/cb', 'not a url', 'javascript:alert(1)', '/relative?x={status}', 5, { url: 'http://h' }]) {
        await refused({ caller: A, receiver: B, callback }, 'callback');
      }
    });
  });

  describe('responses (spec 2.5, 7)', function () {
    async function gotId(reply, id, format) {
      answer(reply);
      const { payload, envelope } = await client({ format }).startClickToCall({ caller: A, receiver: B });
      assert.deepEqual(payload, { id });
      assert.equal(envelope.status, '200');
      return envelope;
    }

    it('JSON data.id, with the whole envelope beside it', async function () {
      const env = await gotId(ok({ id: 'c2c_5f3a9b' }), 'c2c_5f3a9b');
      assert.deepEqual(env, { status: '200', message: 'Call initiated', data: { id: 'c2c_5f3a9b' } });
    });

    it('JSON with a numeric status and a numeric id', async function () {
      await gotId('{"status":200,"message":"OK","data":{"id":98765}}', '98765');
    });

    it('JSON data as the id itself, or as a list of one record', async function () {
      await gotId(ok('c2c_str'), 'c2c_str');
      await gotId(ok([{ id: 'c2c_list' }]), 'c2c_list');
      await gotId(ok({ 0: { id: 'c2c_idx' } }), 'c2c_idx');
    });

    it('XML <data><id>', async function () {
      await gotId(
        { headers: { 'content-type': 'application/xml' }, body: '<?xml version="1.0"?>\n<api><status>200</status><message>Call initiated</message><data><id>c2c_xml</id></data></api>' },
        'c2c_xml',
        'xml',
      );
    });

    it('plain text data.id line', async function () {
      await gotId({ headers: { 'content-type': 'text/plain' }, body: 'status: 200\nmessage: Call initiated\ndata.id: c2c_1\n' }, 'c2c_1', 'text');
      await gotId('status=200&message=Call+initiated&data.id=c2c_amp', 'c2c_amp', 'text');
    });

    it('a success without a call id is BAD_RESPONSE', async function () {
      for (const body of ['{"status":"200","message":"OK"}', ok({}), ok(''), ok({ id: '' }), ok({ id: null }), ok([]), 'status: 200\nmessage: OK', '<api><status>200</status><message>OK</message><data/></api>']) {
        rec.requests.length = 0;
        answer(body);
        await assert.rejects(client().startClickToCall({ caller: A, receiver: B }), (err) => {
          assert.ok(err instanceof TransportError, `${body}: ${err.name}: ${err.message}`);
          assert.equal(err.code, 'BAD_RESPONSE');
          assert.match(err.message, /call id/);
          noKey(err);
          return true;
        });
        assert.equal(rec.requests.length, 1);
      }
    });

    describe('A404 and E423 surface as ServiceErrors with the envelope, in every format', function () {
      const errors = [
        ['A404', 'Account suspended'],
        ['E423', 'receiver value not provided'],
      ];
      const bodies = {
        JSON: (c, m) => ['json', JSON.stringify({ status: c, message: m })],
        XML: (c, m) => ['xml', `<api><status>${c}</status><message>${m}</message></api>`],
        text: (c, m) => ['text', `status: ${c}\nmessage: ${m}\n`],
      };
      for (const [code, message] of errors) {
        for (const [name, make] of Object.entries(bodies)) {
          it(`${code} as ${name}`, async function () {
            const [format, body] = make(code, message);
            answer(body);
            await serviceRefused(client({ format }).startClickToCall({ caller: A, receiver: B }), code, message);
          });
        }
      }

      it('the key is redacted when the service echoes it in its message', async function () {
        answer(`<api><status>A404</status><message>Api Key ${KEY} suspended</message></api>`);
        await assert.rejects(client({ format: 'xml' }).startClickToCall({ caller: A, receiver: B }), (err) => {
          assert.ok(err instanceof ServiceError);
          noKey(err);
          return true;
        });
      });
    });

    describe('answers that are not the service\'s surface as TransportErrors', function () {
      failsOnGarbage(['json', 'text'], (format) => client({ format }).startClickToCall({ caller: A, receiver: B }), 777);
    });
  });
});
