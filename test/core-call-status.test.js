'use strict';
// Interface C (spec 4.3, 2.4): the exact request each valid input produces, every refused input, and
// every response format (JSON, JSONP, XML, PHP serialize, plain text) and failure, over real HTTP.
const assert = require('node:assert/strict');
const { coreSuite } = require('./helpers/core-call');
const { ServiceError } = require('../dist/core/errors');
const { callStatusParams, normaliseCallStatus, CALL_STATUS_FIELDS } = require('../dist/core/call-status');

const KEY = 'kEyCaLlStAtUs4mX8pR2';

const R1 = { id: '1234.5678-90ab', mobile: '9876543210', status: 'COMPLETED', senttime: '2024-05-06 07:08:09' };
const R2 = { id: '1234.5678-90ac', mobile: '9812345678', status: 'NOANSWER', senttime: '2024-05-06 07:10:00' };

const json = (data) => JSON.stringify({ status: '200', message: 'OK', data });
const xmlVoice = (r) => `<voice>${Object.entries(r).map(([k, val]) => `<${k}>${val}</${k}>`).join('')}</voice>`;
const textLines = (records) =>
  ['status: 200', 'message: OK', ...records.flatMap((r, i) => Object.entries(r).map(([k, val]) => `data.${i}.${k}: ${val}`))].join('\n');

// Hand-written PHP serialize() output (string lengths in bytes).
const PHP_R1 = 'a:4:{s:2:"id";s:14:"1234.5678-90ab";s:6:"mobile";s:10:"9876543210";s:6:"status";s:9:"COMPLETED";s:8:"senttime";s:19:"2024-05-06 07:08:09";}';
const PHP_R2 = 'a:4:{s:2:"id";s:14:"1234.5678-90ac";s:6:"mobile";i:9812345678;s:6:"status";s:8:"NOANSWER";s:8:"senttime";s:19:"2024-05-06 07:10:00";}';
const php = (data) => `a:3:{s:6:"status";s:3:"200";s:7:"message";s:2:"OK";s:4:"data";${data}}`;

describe('core/call-status (spec 4.3, 2.4)', function () {
  const { rec, client, answer, noKey, refused: refusedBy, serviceRefused, failsOnGarbage } = coreSuite(KEY, json({ 0: R1 }));
  const refused = (input, field, method, code = 'INVALID_INPUT') => refusedBy(() => client().callStatus(input, method), field, code);

  async function sent(input, method, c = client()) {
    rec.requests.length = 0;
    const result = await c.callStatus(input, method);
    assert.equal(rec.requests.length, 1);
    assert.equal(rec.last.method, 'GET');
    assert.equal(rec.last.path, '/api/v1/');
    return { query: rec.last.query, result };
  }

  describe('request (spec 4.3)', function () {
    it('a call id string: method=voice.status, format=JSON, id, api key; nothing else', async function () {
      const { query } = await sent('1234.5678-90ab');
      assert.deepEqual(query, { method: 'voice.status', format: 'JSON', id: '1234.5678-90ab', api_key: KEY });
    });

    it('ids with every allowed symbol travel intact', async function () {
      const { query } = await sent('ab_12.34:56+78-9Z');
      assert.equal(query.id, 'ab_12.34:56+78-9Z');
      assert.ok(rec.last.rawQuery.includes('id=ab_12.34%3A56%2B78-9Z'), rec.last.rawQuery);
    });

    it('a number id, and surrounding spaces trimmed', async function () {
      assert.equal((await sent(123456789)).query.id, '123456789');
      assert.equal((await sent('  777 ')).query.id, '777');
    });

    it('an object { id, mobile }', async function () {
      const { query } = await sent({ id: '777', mobile: '919812345678' });
      assert.deepEqual(query, { method: 'voice.status', format: 'JSON', id: '777', mobile: '919812345678', api_key: KEY });
      assert.equal((await sent({ id: 777, mobile: 919812345678 })).query.mobile, '919812345678');
    });

    it('ignores keys the spec does not name and empty mobile', async function () {
      const { query } = await sent({ id: '9', mobile: '', foo: 1, api_key: 'other', method: 'x' });
      assert.deepEqual(query, { method: 'voice.status', format: 'JSON', id: '9', api_key: KEY });
    });

    it('method voice.groupStatus; empty method is voice.status', async function () {
      assert.equal((await sent('1', 'voice.groupStatus')).query.method, 'voice.groupStatus');
      assert.equal((await sent('1', '')).query.method, 'voice.status');
      assert.equal((await sent('1', undefined)).query.method, 'voice.status');
    });

    it('asks for XML or PHP when the client asks for it, and for plain text by leaving format out', async function () {
      answer(`<api><status>200</status><message>OK</message><data>${xmlVoice(R1)}</data></api>`);
      assert.equal((await sent('1', undefined, client({ format: 'xml' }))).query.format, 'XML');
      answer(php(`a:1:{i:0;${PHP_R1}}`));
      assert.equal((await sent('1', undefined, client({ format: 'php' }))).query.format, 'PHP');
      answer(textLines([R1]));
      const { query } = await sent('1', undefined, client({ format: 'text' }));
      assert.ok(!('format' in query), JSON.stringify(query));
      assert.deepEqual(query, { method: 'voice.status', id: '1', api_key: KEY });
    });

    it('callStatusParams returns the query without format and api_key', function () {
      assert.deepEqual(JSON.parse(JSON.stringify(callStatusParams({ id: 'x1', mobile: '9876543210' }, 'voice.groupStatus'))), {
        method: 'voice.groupStatus',
        id: 'x1',
        mobile: '9876543210',
      });
    });
  });

  describe('refused inputs (nothing sent)', function () {
    it('a missing id', async function () {
      for (const input of [undefined, null, '', '   ', {}, { id: '' }, { id: null }, { mobile: '9876543210' }]) {
        await refused(input, 'id');
      }
    });

    it('an id with whitespace inside', async function () {
      await refused('12 34', 'id');
      await refused('12\t34', 'id');
      await refused({ id: 'a\nb' }, 'id');
    });

    it('an id with symbols other than . _ : + -', async function () {
      for (const id of ['a/b', 'a&b', 'a?b', 'a#b', 'a%20b', 'ä1', '<1>']) await refused(id, 'id');
    });

    it('an id longer than 100 characters', async function () {
      await refused('9'.repeat(101), 'id');
    });

    it('an id that is not a string or a whole number', async function () {
      for (const id of [1.5, -3, Number.NaN, Number.POSITIVE_INFINITY, true, ['1'], { id: ['1'] }, { id: { x: 1 } }]) {
        await refused(id, 'id');
      }
    });

    it('a mobile that is not digits', async function () {
      await refused({ id: '1', mobile: 'abc' }, 'mobile');
      await refused({ id: '1', mobile: '+919876543210' }, 'mobile');
      await refused({ id: '1', mobile: '123' }, 'mobile');
      await refused({ id: '1', mobile: '98765 43210' }, 'mobile');
    });

    it('a method other than voice.status and voice.groupStatus', async function () {
      await refused('1', 'method', 'voice.foo');
      await refused('1', 'method', 'VOICE.STATUS');
      await refused('1', 'method', 5);
    });

    it('a prototype key', async function () {
      await refused(JSON.parse('{"id":"1","__proto__":{"x":1}}'), 'input.__proto__');
    });
  });

  describe('responses (spec 2.4, 7)', function () {
    const expectRecords = async (c, expected) => {
      const { payload, envelope } = await c.callStatus('1');
      assert.deepEqual(payload, expected);
      assert.equal(envelope.status, '200');
      for (const r of payload) for (const f of CALL_STATUS_FIELDS) assert.equal(typeof r[f], 'string', f);
      return envelope;
    };

    it('exports the spec fields in order', function () {
      assert.deepEqual([...CALL_STATUS_FIELDS], ['id', 'mobile', 'status', 'senttime']);
    });

    it('JSON keyed by index: one record, several records', async function () {
      const env = await expectRecords(client(), [R1]);
      assert.deepEqual(env.data, { 0: R1 });
      answer(json({ 1: R2, 0: R1 }));
      await expectRecords(client(), [R1, R2]);
    });

    it('JSON as a list, and as one record', async function () {
      answer(json([R1, R2]));
      await expectRecords(client(), [R1, R2]);
      answer(json(R2));
      await expectRecords(client(), [R2]);
    });

    it('fills missing fields with "", turns numbers into strings, passes unknown statuses and fields through', async function () {
      answer(json({ 0: { id: 42, status: 'DNDNUMB', duration: 17, leg: { a: 1 } } }));
      await expectRecords(client(), [{ id: '42', mobile: '', status: 'DNDNUMB', senttime: '', duration: 17, leg: { a: 1 } }]);
    });

    it('no records: empty or absent data', async function () {
      for (const body of [json({}), json([]), json(''), json(null), '{"status":"200","message":"OK"}']) {
        answer(body);
        assert.deepEqual((await client().callStatus('1')).payload, [], body);
      }
    });

    it('JSONP: one record, several records', async function () {
      answer({ headers: { 'content-type': 'application/javascript' }, body: `callback(${json({ 0: R1 })});` });
      await expectRecords(client(), [R1]);
      answer(`jQuery123_456(${json({ 0: R1, 1: R2 })})`);
      await expectRecords(client(), [R1, R2]);
    });

    it('XML: one <voice> element, several <voice> elements', async function () {
      answer({
        headers: { 'content-type': 'application/xml' },
        body: `<?xml version="1.0" encoding="UTF-8"?>\n<api>\n  <status>200</status>\n  <message>OK</message>\n  <data>${xmlVoice(R1)}</data>\n</api>`,
      });
      await expectRecords(client({ format: 'xml' }), [R1]);
      answer(`<api><status>200</status><message>OK</message><data>${xmlVoice(R1)}${xmlVoice(R2)}</data></api>`);
      await expectRecords(client({ format: 'xml' }), [R1, R2]);
    });

    it('XML: no records', async function () {
      answer('<api><status>200</status><message>OK</message><data/></api>');
      assert.deepEqual((await client({ format: 'xml' }).callStatus('1')).payload, []);
    });

    it('PHP serialize: one record, several records', async function () {
      answer(php(`a:1:{i:0;${PHP_R1}}`));
      await expectRecords(client({ format: 'php' }), [R1]);
      answer(php(`a:2:{i:0;${PHP_R1}i:1;${PHP_R2}}`));
      await expectRecords(client({ format: 'php' }), [R1, R2]);
    });

    it('plain text: one record, several records, and a bare data.id record', async function () {
      answer({ headers: { 'content-type': 'text/plain' }, body: textLines([R1]) });
      await expectRecords(client({ format: 'text' }), [R1]);
      answer(textLines([R1, R2]) + '\n');
      await expectRecords(client({ format: 'text' }), [R1, R2]);
      answer(['status: 200', 'message: OK', ...Object.entries(R2).map(([k, val]) => `data.${k}: ${val}`)].join('\r\n'));
      await expectRecords(client({ format: 'text' }), [R2]);
    });

    describe('A404 and A416 surface as ServiceErrors with the envelope, in every format', function () {
      const errors = [
        ['A404', 'Account suspended'],
        ['A416', 'Invalid call id / mobile'],
      ];
      const bodies = {
        JSON: (c, m) => ['json', JSON.stringify({ status: c, message: m })],
        JSONP: (c, m) => ['json', `cb(${JSON.stringify({ status: c, message: m })});`],
        XML: (c, m) => ['xml', `<?xml version="1.0"?><api><status>${c}</status><message>${m}</message></api>`],
        PHP: (c, m) => ['php', `a:2:{s:6:"status";s:4:"${c}";s:7:"message";s:${Buffer.byteLength(m)}:"${m}";}`],
        text: (c, m) => ['text', `status: ${c}\nmessage: ${m}`],
      };
      // The PHP lengths above are computed; check them against hand counts once.
      it('(hand-counted PHP lengths agree)', function () {
        assert.equal(bodies.PHP('A404', 'Account suspended')[1], 'a:2:{s:6:"status";s:4:"A404";s:7:"message";s:17:"Account suspended";}');
        assert.equal(bodies.PHP('A416', 'Invalid call id / mobile')[1], 'a:2:{s:6:"status";s:4:"A416";s:7:"message";s:24:"Invalid call id / mobile";}');
      });
      for (const [code, message] of errors) {
        for (const [name, make] of Object.entries(bodies)) {
          it(`${code} as ${name}`, async function () {
            const [format, body] = make(code, message);
            answer(body);
            await serviceRefused(client({ format }).callStatus({ id: 'nope-1', mobile: '9876543210' }), code, message);
          });
        }
      }

      it('the key is redacted when the service echoes it in its message', async function () {
        answer(`status: A416\nmessage: no call 1 for ${KEY}`);
        await assert.rejects(client({ format: 'text' }).callStatus('1'), (err) => {
          assert.ok(err instanceof ServiceError);
          assert.equal(err.code, 'A416');
          noKey(err);
          return true;
        });
      });
    });

    describe('answers that are not the service\'s surface as TransportErrors', function () {
      failsOnGarbage(['json', 'text'], (format) => client({ format }).callStatus('1'), 4242);
    });
  });

  describe('normaliseCallStatus', function () {
    it('reads envelopes directly', function () {
      const env = (data) => ({ status: '200', message: 'OK', data });
      assert.deepEqual(normaliseCallStatus(env({ voice: R1 })), [R1]);
      assert.deepEqual(normaliseCallStatus(env({ voice: [R1, R2] })), [R1, R2]);
      assert.deepEqual(normaliseCallStatus(env({ voice: { 0: R1, 1: R2 } })), [R1, R2]);
      assert.deepEqual(normaliseCallStatus(env([{ voice: R1 }, { voice: R2 }])), [R1, R2]);
      assert.deepEqual(normaliseCallStatus(env({ 0: R1, 1: 'junk', 2: R2 })), [R1, R2]);
      assert.deepEqual(normaliseCallStatus(env('nothing')), []);
      assert.deepEqual(normaliseCallStatus(env(undefined)), []);
    });
  });
});
