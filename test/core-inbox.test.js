'use strict';
// Interface B (spec 4.2, 2.3): the exact request each valid input produces, every refused input, and
// every response format and failure, over real HTTP against the recording server.
const assert = require('node:assert/strict');
const { coreSuite } = require('./helpers/core-call');
const { ServiceError } = require('../dist/core/errors');
const { inboxParams, normaliseInbox, INBOX_FIELDS } = require('../dist/core/inbox');

const KEY = 'kEyInBoX9f3Qz7W1';
const FIELDS = ['recipient', 'keyword', 'sender', 'message', 'operator', 'circle', 'response', 'received_time'];

const REC1 = {
  recipient: '9220592205',
  keyword: 'SALE',
  sender: '919876543210',
  message: 'SALE please',
  operator: 'Airtel',
  circle: 'Delhi',
  response: '',
  received_time: '2024-05-06 07:08:09',
};
const REC2 = {
  recipient: '9220592205',
  keyword: 'INFO',
  sender: '919812345678',
  message: 'INFO about plans',
  operator: '',
  circle: '',
  response: 'Thanks',
  received_time: '2024-05-06 08:00:00',
};

const json = (data) => JSON.stringify({ status: '200', message: 'OK', data });
const xmlRecord = (r) => `<inbox>${FIELDS.map((f) => (r[f] === '' ? `<${f}/>` : `<${f}>${r[f]}</${f}>`)).join('')}</inbox>`;

describe('core/inbox (spec 4.2, 2.3)', function () {
  const { rec, client, answer, noKey, refused: refusedBy, failsOnGarbage } = coreSuite(KEY, json({ rows: { inbox: REC1 } }));
  const refused = (q, field, code = 'INVALID_INPUT') => refusedBy(() => client().readInbox(q), field, code);

  async function sent(q, c = client()) {
    const result = await c.readInbox(q);
    assert.equal(rec.requests.length, 1);
    assert.equal(rec.last.method, 'GET');
    return { query: rec.last.query, path: rec.last.path, result };
  }

  describe('request (spec 4.2)', function () {
    it('without filters sends method=inbox, format=JSON and the api key, nothing else', async function () {
      const { query, path } = await sent(undefined);
      assert.equal(path, '/v1/');
      assert.deepEqual(query, { method: 'inbox', format: 'JSON', api_key: KEY });
    });

    it('null and an empty object also mean no filters', async function () {
      for (const q of [null, {}]) {
        rec.requests.length = 0;
        const { query } = await sent(q);
        assert.deepEqual(query, { method: 'inbox', format: 'JSON', api_key: KEY });
      }
    });

    it('sends every filter given as strings, exactly', async function () {
      const q = {
        fromdate: '2024-01-01',
        todate: '31/01/2024 23:59',
        number: '+919220592205',
        keyword: 'SALE & more',
        mobile: '+919876543210',
        limit: '25',
        page: '3',
      };
      const { query } = await sent(q);
      assert.deepEqual(query, { method: 'inbox', format: 'JSON', ...q, api_key: KEY });
      assert.ok(rec.last.rawQuery.includes('keyword=SALE+%26+more'), rec.last.rawQuery);
      assert.ok(rec.last.rawQuery.includes('number=%2B919220592205'), rec.last.rawQuery);
    });

    it('sends numbers as strings', async function () {
      const { query } = await sent({ number: 9220592205, mobile: 919876543210, limit: 1000, page: 1, keyword: 42 });
      assert.deepEqual(query, {
        method: 'inbox',
        format: 'JSON',
        number: '9220592205',
        mobile: '919876543210',
        limit: '1000',
        page: '1',
        keyword: '42',
        api_key: KEY,
      });
    });

    it('sends a Date as YYYY-MM-DD HH:mm:ss from its UTC fields', async function () {
      const { query } = await sent({
        fromdate: new Date(Date.UTC(2024, 0, 2, 3, 4, 5)),
        todate: new Date(Date.UTC(2024, 11, 31, 23, 59, 59, 999)),
      });
      assert.equal(query.fromdate, '2024-01-02 03:04:05');
      assert.equal(query.todate, '2024-12-31 23:59:59');
    });

    it('sends a number as its digits, as the help says ("the value is passed as text"), not as an epoch date', async function () {
      const { query } = await sent({ fromdate: 20261101, todate: 1704164645 });
      assert.equal(query.fromdate, '20261101');
      assert.equal(query.todate, '1704164645');
    });

    it('keeps a date string as given (any date format), trimmed', async function () {
      const { query } = await sent({ fromdate: '  yesterday ', todate: '2024-01-02T03:04:05+05:30' });
      assert.equal(query.fromdate, 'yesterday');
      assert.equal(query.todate, '2024-01-02T03:04:05+05:30');
    });

    it('leaves out empty filters and ignores keys the spec does not name', async function () {
      const { query } = await sent({ keyword: '', mobile: null, limit: undefined, foo: 'bar', api_key: 'other', method: 'x', format: 'XML' });
      assert.deepEqual(query, { method: 'inbox', format: 'JSON', api_key: KEY });
    });

    it('asks for XML or PHP when the client asks for it; JSON for plain text (B has no text form)', async function () {
      await sent({}, client({ format: 'xml' }));
      assert.equal(rec.last.query.format, 'XML');
      answer(() => 'a:3:{s:6:"status";s:3:"200";s:7:"message";s:2:"OK";s:4:"data";a:0:{}}');
      await client({ format: 'php' }).readInbox({});
      assert.equal(rec.last.query.format, 'PHP');
      answer(json({ rows: [] }));
      await client({ format: 'text' }).readInbox({});
      assert.equal(rec.last.query.format, 'JSON');
    });

    it('puts /v1/ below a base URL that has a path', async function () {
      await client({ baseUrl: `${rec.url}/vmn/` }).readInbox({});
      assert.equal(rec.last.path, '/vmn/v1/');
    });

    it('inboxParams returns the query without format and api_key', function () {
      assert.deepEqual(JSON.parse(JSON.stringify(inboxParams({ limit: 5, page: '2' }))), { method: 'inbox', limit: '5', page: '2' });
    });
  });

  describe('refused inputs (nothing sent)', function () {
    it('a query that is not an object', async function () {
      await refused('SALE', 'query');
      await refused(['SALE'], 'query');
      await refused(42, 'query');
      await refused(Buffer.from('x'), 'query');
    });

    it('a prototype key', async function () {
      await refused(JSON.parse('{"__proto__":{"limit":5}}'), 'query.__proto__');
    });

    it('fromdate and todate that are not dates', async function () {
      await refused({ fromdate: {} }, 'fromdate');
      await refused({ fromdate: true }, 'fromdate');
      await refused({ fromdate: new Date('not a date') }, 'fromdate');
      await refused({ fromdate: -1 }, 'fromdate');
      await refused({ fromdate: 1.5 }, 'fromdate');
      await refused({ fromdate: Number.NaN }, 'fromdate');
      await refused({ todate: 'x'.repeat(65) }, 'todate');
      await refused({ todate: [2024, 1, 1] }, 'todate');
    });

    it('todate before fromdate (when both are Dates)', async function () {
      await refused({ fromdate: new Date(Date.UTC(2024, 1, 1)), todate: new Date(Date.UTC(2024, 0, 1)) }, 'todate');
    });

    it('a VMN number that is not digits', async function () {
      await refused({ number: 'VMN1' }, 'number');
      await refused({ number: '12' }, 'number');
      await refused({ number: '92205 92205' }, 'number');
      await refused({ number: '1'.repeat(16) }, 'number');
      await refused({ number: { n: 1 } }, 'number');
    });

    it('a sender mobile that is not a phone number', async function () {
      await refused({ mobile: '12345' }, 'mobile');
      await refused({ mobile: 'abcdefg' }, 'mobile');
      await refused({ mobile: '++919876543210' }, 'mobile');
      await refused({ mobile: 1e21 }, 'mobile');
    });

    it('a keyword too long or not text', async function () {
      await refused({ keyword: 'k'.repeat(161) }, 'keyword');
      await refused({ keyword: ['a'] }, 'keyword');
    });

    it('limit and page out of range or not whole numbers', async function () {
      await refused({ limit: 0 }, 'limit');
      await refused({ limit: 1001 }, 'limit');
      await refused({ limit: 'ten' }, 'limit');
      await refused({ limit: 2.5 }, 'limit');
      await refused({ page: 0 }, 'page');
      await refused({ page: -1 }, 'page');
      await refused({ page: 1_000_001 }, 'page');
      await refused({ page: '1e3' }, 'page');
    });
  });

  describe('responses (spec 2.3, 7)', function () {
    const expectRecords = (payload, expected) => {
      assert.ok(Array.isArray(payload));
      assert.deepEqual(payload, expected);
      for (const r of payload) for (const f of FIELDS) assert.equal(typeof r[f], 'string', f);
    };

    it('exports the spec fields in order', function () {
      assert.deepEqual([...INBOX_FIELDS], FIELDS);
    });

    it('JSON, one record object', async function () {
      const { payload, envelope } = await client().readInbox({});
      expectRecords(payload, [REC1]);
      assert.equal(envelope.status, '200');
      assert.equal(envelope.message, 'OK');
      assert.deepEqual(envelope.data, { rows: { inbox: REC1 } });
    });

    it('JSON, an array of records', async function () {
      answer(json({ rows: { inbox: [REC1, REC2] } }));
      expectRecords((await client().readInbox({})).payload, [REC1, REC2]);
    });

    it('JSON, records keyed by index', async function () {
      answer(json({ rows: { inbox: { 1: REC2, 0: REC1 } } }));
      expectRecords((await client().readInbox({})).payload, [REC1, REC2]);
    });

    it('JSON, rows as a list of { inbox } objects or of records', async function () {
      answer(json({ rows: [{ inbox: REC1 }, { inbox: REC2 }] }));
      expectRecords((await client().readInbox({})).payload, [REC1, REC2]);
      answer(json({ rows: [REC2, REC1] }));
      expectRecords((await client().readInbox({})).payload, [REC2, REC1]);
    });

    it('fills missing spec fields with "", turns numbers into strings, keeps unknown fields', async function () {
      answer(json({ rows: { inbox: { recipient: 9220592205, sender: '919876543210', message: 'hi', operator: null, id: 77, extra: { a: 1 } } } }));
      const { payload } = await client().readInbox({});
      assert.deepEqual(payload, [
        {
          recipient: '9220592205',
          keyword: '',
          sender: '919876543210',
          message: 'hi',
          operator: '',
          circle: '',
          response: '',
          received_time: '',
          id: 77,
          extra: { a: 1 },
        },
      ]);
    });

    it('no records: empty or absent rows', async function () {
      const bodies = [
        json({ rows: { inbox: [] } }),
        json({ rows: { inbox: {} } }),
        json({ rows: { inbox: '' } }),
        json({ rows: [] }),
        json({ rows: {} }),
        json({}),
        json([]),
        json(''),
        json(null),
        '{"status":"200","message":"OK"}',
        '{"status":200,"message":"No records"}',
      ];
      for (const body of bodies) {
        answer(body);
        assert.deepEqual((await client().readInbox({})).payload, [], body);
      }
    });

    it('XML, one <inbox> element', async function () {
      answer(() => ({
        headers: { 'content-type': 'application/xml' },
        body: `<?xml version="1.0" encoding="UTF-8"?>\n<api><status>200</status><message>OK</message><data><rows>${xmlRecord(REC1)}</rows></data></api>`,
      }));
      const { payload, envelope } = await client({ format: 'xml' }).readInbox({});
      expectRecords(payload, [REC1]);
      assert.equal(envelope.status, '200');
    });

    it('XML, repeated <inbox> elements, entities decoded, numbers kept as text', async function () {
      const r2 = { ...REC2, message: 'A &amp; B &lt;3', recipient: '0091922' };
      answer(() => `<api><status>200</status><message>OK</message><data><rows>${xmlRecord(REC1)}${xmlRecord(r2)}</rows></data></api>`);
      expectRecords((await client({ format: 'xml' }).readInbox({})).payload, [REC1, { ...REC2, message: 'A & B <3', recipient: '0091922' }]);
    });

    it('XML, no records', async function () {
      for (const data of ['<data><rows/></data>', '<data><rows></rows></data>', '<data/>', '']) {
        answer(() => `<api><status>200</status><message>OK</message>${data}</api>`);
        assert.deepEqual((await client({ format: 'xml' }).readInbox({})).payload, [], data);
      }
    });

    // Hand-written PHP serialize() output; string lengths are in bytes ("café ₹5": é is 2 bytes, ₹ is 3).
    const PHP_REC1 =
      'a:8:{s:9:"recipient";s:10:"9220592205";s:7:"keyword";s:4:"SALE";s:6:"sender";s:12:"919876543210";' +
      's:7:"message";s:15:"SALE café ₹5";s:8:"operator";s:6:"Airtel";s:6:"circle";s:5:"Delhi";' +
      's:8:"response";s:0:"";s:13:"received_time";s:19:"2024-05-06 07:08:09";}';
    const PHP_REC2 =
      'a:8:{s:9:"recipient";i:9220592205;s:7:"keyword";s:4:"INFO";s:6:"sender";s:12:"919812345678";' +
      's:7:"message";s:16:"INFO about plans";s:8:"operator";s:0:"";s:6:"circle";N;' +
      's:8:"response";s:6:"Thanks";s:13:"received_time";s:19:"2024-05-06 08:00:00";}';

    it('PHP serialize, one record', async function () {
      answer(() => ({
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: `a:3:{s:6:"status";s:3:"200";s:7:"message";s:2:"OK";s:4:"data";a:1:{s:4:"rows";a:1:{s:5:"inbox";${PHP_REC1}}}}`,
      }));
      expectRecords((await client({ format: 'php' }).readInbox({})).payload, [{ ...REC1, message: 'SALE café ₹5' }]);
    });

    it('PHP serialize, several records keyed by index', async function () {
      answer(() => `a:3:{s:6:"status";s:3:"200";s:7:"message";s:2:"OK";s:4:"data";a:1:{s:4:"rows";a:1:{s:5:"inbox";a:2:{i:0;${PHP_REC1}i:1;${PHP_REC2}}}}}`);
      expectRecords((await client({ format: 'php' }).readInbox({})).payload, [{ ...REC1, message: 'SALE café ₹5' }, REC2]);
    });

    describe('A404 (account suspended) surfaces as a ServiceError with the envelope', function () {
      const cases = {
        JSON: ['json', '{"status":"A404","message":"Account suspended"}'],
        XML: ['xml', '<?xml version="1.0"?><api><status>A404</status><message>Account suspended</message></api>'],
        PHP: ['php', 'a:2:{s:6:"status";s:4:"A404";s:7:"message";s:17:"Account suspended";}'],
      };
      for (const [name, [format, body]] of Object.entries(cases)) {
        it(name, async function () {
          answer(() => body);
          await assert.rejects(client({ format }).readInbox({}), (err) => {
            assert.ok(err instanceof ServiceError, `${err.name}: ${err.message}`);
            assert.equal(err.code, 'A404');
            assert.equal(err.envelope.status, 'A404');
            assert.equal(err.envelope.message, 'Account suspended');
            assert.equal(String(err), "ServiceError [A404]: Account suspended");
            noKey(err);
            return true;
          });
        });
      }

      it('the key is redacted when the service echoes it in its message', async function () {
        answer(() => JSON.stringify({ status: 'A404', message: `Account suspended for key ${KEY}` }));
        await assert.rejects(client().readInbox({}), (err) => {
          assert.ok(err instanceof ServiceError);
          noKey(err);
          return true;
        });
      });
    });

    describe('answers that are not the service\'s surface as TransportErrors', function () {
      failsOnGarbage(['json', 'xml'], (format) => client({ format }).readInbox({ keyword: 'x' }), 12345);
    });
  });

  describe('normaliseInbox', function () {
    it('reads envelopes directly', function () {
      assert.deepEqual(normaliseInbox({ status: '200', message: 'OK', data: { rows: { inbox: REC1 } } }), [REC1]);
      assert.deepEqual(normaliseInbox({ status: '200', message: 'OK', data: { rows: { inbox: [REC1, 'junk', 5, REC2] } } }), [REC1, REC2]);
      assert.deepEqual(normaliseInbox({ status: '200', message: 'OK', data: 'no data' }), []);
      assert.deepEqual(normaliseInbox({ status: '200', message: 'OK', data: { rows: { unrelated: 1 } } }), []);
    });
  });
});
