'use strict';
// The response decoders on their own (no HTTP): JSON, JSONP, XML, PHP serialize(), the voice APIs'
// plain text; the envelope, the status check and list reading; and a property check that nothing but a
// TransportError BAD_RESPONSE ever escapes toEnvelope, whatever bytes come in.
const assert = require('node:assert/strict');
const { decodeBody, toEnvelope, checkStatus, asList, isRecord } = require('../dist/core/decode');
const { phpUnserialize } = require('../dist/core/php-unserialize');
const { ServiceError, TransportError } = require('../dist/core/errors');
// A seeded generator, so a failing case can be replayed from its seed.
const { mulberry32: prng } = require('../dist/simulator/faults');

/** PHP's serialize() for the shapes the service uses; string lengths in UTF-8 bytes. */
function ser(v) {
  if (v === null) return 'N;';
  if (typeof v === 'boolean') return `b:${v ? 1 : 0};`;
  if (typeof v === 'number') return Number.isInteger(v) ? `i:${v};` : `d:${v};`;
  if (typeof v === 'string') return `s:${Buffer.byteLength(v)}:"${v}";`;
  const entries = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
  return `a:${entries.length}:{${entries.map(([k, x]) => (typeof k === 'number' || /^\d+$/.test(k) ? `i:${k};` : ser(k)) + ser(x)).join('')}}`;
}

function badResponse(body) {
  assert.throws(
    () => toEnvelope(body),
    (err) => {
      assert.ok(err instanceof TransportError, `TransportError expected, got ${err && err.name}: ${err && err.message}`);
      assert.equal(err.code, 'BAD_RESPONSE');
      return true;
    },
    `BAD_RESPONSE expected for ${JSON.stringify(body).slice(0, 80)}`,
  );
}

describe('core/decode: response decoders', function () {
  describe('JSON and JSONP', function () {
    it('decodes a JSON envelope as is', function () {
      const env = toEnvelope('{"status":"OK","message":"Message submitted successfully","data":[{"id":"a1","mobile":"919812345678"}],"code":"200"}');
      assert.deepEqual(env, { status: 'OK', message: 'Message submitted successfully', data: [{ id: 'a1', mobile: '919812345678' }], code: '200' });
    });

    it('tolerates surrounding whitespace and a BOM-free CRLF body', function () {
      assert.equal(toEnvelope('\r\n  {"status":"200","message":"OK"}\r\n').status, '200');
    });

    it('drops __proto__ keys at any depth without touching any prototype', function () {
      const value = decodeBody('{"status":"OK","__proto__":{"polluted":1},"data":{"__proto__":{"polluted":2},"x":1}}');
      assert.equal(Object.getPrototypeOf(value), Object.prototype);
      assert.ok(!Object.prototype.hasOwnProperty.call(value, '__proto__'));
      assert.equal(value.polluted, undefined);
      assert.deepEqual(value.data, { x: 1 });
      assert.equal(Object.getPrototypeOf(value.data), Object.prototype);
      assert.equal({}.polluted, undefined);
    });

    it('decodes JSONP with any callback name, with or without a semicolon', function () {
      for (const body of [
        'cb({"status":"200","message":"OK","data":{"0":{"id":"1"}}})',
        'callback({"status":"200","message":"OK","data":{"0":{"id":"1"}}});',
        'jQuery3710_1700000000({"status":"200","message":"OK","data":{"0":{"id":"1"}}}) ;',
        'window.handlers.cb_1 ( {"status":"200","message":"OK","data":{"0":{"id":"1"}}} )\n',
      ]) {
        assert.deepEqual(toEnvelope(body), { status: '200', message: 'OK', data: { 0: { id: '1' } } }, body);
      }
    });

    it('JSONP drops __proto__ too', function () {
      const env = toEnvelope('cb({"status":"200","message":"OK","__proto__":{"polluted":1}})');
      assert.equal(env.polluted, undefined);
      assert.equal({}.polluted, undefined);
    });

    it('broken JSON and JSONP are BAD_RESPONSE', function () {
      for (const body of ['{"status":"OK"', '{status:"OK"}', '{"status":"OK"}}', 'cb({"status":"OK")', 'cb({"status":"OK"}', '[1,2', '{"a":1e}']) badResponse(body);
    });
  });

  describe('XML', function () {
    it('reads the root element children as the envelope; ids and numbers stay strings', function () {
      const env = toEnvelope(
        '<?xml version="1.0" encoding="UTF-8"?>\n<api>\n  <status>200</status>\n  <message>OK</message>\n' +
          '  <data><voice><id>0091-2233.44</id><mobile>0091981234</mobile><status>COMPLETED</status><senttime>2024-01-02 10:11:12</senttime></voice></data>\n</api>',
      );
      assert.deepEqual(env, {
        status: '200',
        message: 'OK',
        data: { voice: { id: '0091-2233.44', mobile: '0091981234', status: 'COMPLETED', senttime: '2024-01-02 10:11:12' } },
      });
    });

    it('a single element is an object, repeated elements are an array; asList reads both', function () {
      const one = toEnvelope('<api><status>OK</status><message>x</message><data><entry><id>1</id><mobile>0091</mobile></entry></data></api>');
      assert.ok(isRecord(one.data.entry));
      assert.deepEqual(asList(one.data.entry), [{ id: '1', mobile: '0091' }]);
      const two = toEnvelope('<api><status>OK</status><message>x</message><data><entry><id>1</id></entry><entry><id>2</id></entry></data></api>');
      assert.ok(Array.isArray(two.data.entry));
      assert.deepEqual(asList(two.data.entry), [{ id: '1' }, { id: '2' }]);
    });

    it('decodes the predefined entities and character references, once', function () {
      const env = toEnvelope(
        '<api><status>OK</status><message>Tom &amp; Jerry &lt;3&gt; &quot;q&quot; &apos;a&apos; caf&#233; &#x1F600; &amp;lt;</message></api>',
      );
      assert.equal(env.message, 'Tom & Jerry <3> "q" \'a\' café 😀 &lt;');
    });

    it('leaves unknown and out-of-range references as written', function () {
      assert.equal(toEnvelope('<api><status>OK</status><message>&nbsp;&copy;&#99999999;</message></api>').message, '&nbsp;&copy;&#99999999;');
    });

    it('does NOT expand a DOCTYPE internal entity', function () {
      const env = toEnvelope(
        '<?xml version="1.0"?><!DOCTYPE api [<!ENTITY xxe "EXPANDED">]><api><status>OK</status><message>&xxe;</message></api>',
      );
      assert.equal(env.status, 'OK');
      assert.equal(env.message, '&xxe;');
      assert.ok(!JSON.stringify(env).includes('EXPANDED'));
    });

    it('an entity "billion laughs" stays unexpanded (and small)', function () {
      let doctype = '<!DOCTYPE api [<!ENTITY l0 "lol">';
      for (let i = 1; i < 10; i++) doctype += `<!ENTITY l${i} "${`&l${i - 1};`.repeat(10)}">`;
      doctype += ']>';
      let env;
      try {
        env = toEnvelope(`${doctype}<api><status>OK</status><message>&l9;</message></api>`);
      } catch (err) {
        assert.ok(err instanceof TransportError && err.code === 'BAD_RESPONSE', String(err));
        return;
      }
      assert.equal(env.message, '&l9;');
    });

    it('ignores attributes, comments and processing instructions', function () {
      const env = toEnvelope('<?xml version="1.0"?><!-- c --><api version="4"><status code="x">OK</status><?pi x?><message lang="en">hi</message></api>');
      assert.equal(env.status, 'OK');
      assert.equal(env.message, 'hi');
    });

    it('an empty element is an empty string', function () {
      const env = toEnvelope('<api><status>OK</status><message/><data></data></api>');
      assert.equal(env.message, '');
      assert.deepEqual(asList(env.data), []);
    });

    it('elements named __proto__ or constructor are refused (BAD_RESPONSE) without pollution', function () {
      badResponse('<api><__proto__><status>OK</status><polluted>1</polluted></__proto__></api>');
      badResponse('<api><status>OK</status><constructor><prototype><polluted>1</polluted></prototype></constructor></api>');
      assert.equal({}.polluted, undefined);
      assert.equal({}.status, undefined);
    });

    it('an element named toString is no trap for the message text', function () {
      const env = toEnvelope('<api><status>OK</status><message><toString>x</toString><valueOf>y</valueOf></message></api>');
      assert.equal(typeof env.message, 'string');
    });

    it('malformed XML, several roots and a text-only root are BAD_RESPONSE', function () {
      for (const body of [
        '<api><status>OK</status>',
        '<api><status>OK</message></api>',
        '<api><status>OK</status></api><api></api>',
        '<api>OK</api>',
        '<',
        '<>',
        '<!DOCTYPE html><html><body>Bad gateway</body></html>',
        '<html><body><p>Error<br></p></body></html>',
      ]) {
        badResponse(body);
      }
    });
  });

  describe('PHP serialize()', function () {
    it('reads strings whose declared length is in UTF-8 bytes', function () {
      assert.equal(phpUnserialize('s:4:"😀";'), '😀');
      assert.equal(phpUnserialize('s:6:"héllo";'), 'héllo');
      assert.equal(phpUnserialize('s:0:"";'), '');
      assert.equal(phpUnserialize('s:7:"a";b:1;";'), 'a";b:1;', 'quotes and semicolons inside are data');
      assert.equal(phpUnserialize(Buffer.from('s:9:"नमस";', 'utf8')), 'नमस');
      assert.throws(() => phpUnserialize('s:1:"é";'), SyntaxError, 'a character length is not a byte length');
      assert.throws(() => phpUnserialize('s:5:"héllo";'), SyntaxError);
    });

    it('reads ints, floats, booleans and null', function () {
      assert.equal(phpUnserialize('i:42;'), 42);
      assert.equal(phpUnserialize('i:-7;'), -7);
      assert.equal(phpUnserialize('d:0.5;'), 0.5);
      assert.equal(phpUnserialize('d:-1.5E-7;'), -1.5e-7);
      assert.equal(phpUnserialize('d:3;'), 3);
      assert.equal(phpUnserialize('b:1;'), true);
      assert.equal(phpUnserialize('b:0;'), false);
      assert.equal(phpUnserialize('N;'), null);
    });

    it('reads nested arrays keyed as PHP keyed them', function () {
      const text = ser({ status: '200', message: 'OK', data: [{ id: '1234-5678.90', mobile: '919812345678', status: 'COMPLETED', senttime: '2024-01-02 10:11:12' }, { id: 'x', n: 1, f: 1.25, ok: true, none: null }] });
      assert.deepEqual(phpUnserialize(text), {
        status: '200',
        message: 'OK',
        data: {
          0: { id: '1234-5678.90', mobile: '919812345678', status: 'COMPLETED', senttime: '2024-01-02 10:11:12' },
          1: { id: 'x', n: 1, f: 1.25, ok: true, none: null },
        },
      });
      assert.deepEqual(phpUnserialize('a:0:{}'), {});
      assert.deepEqual(phpUnserialize('a:2:{i:0;a:1:{i:0;a:0:{}}i:1;s:1:"x";}'), { 0: { 0: {} }, 1: 'x' });
    });

    it('reads an O:8:"stdClass" object as keyed data', function () {
      const body = 'O:8:"stdClass":3:{s:6:"status";s:3:"200";s:7:"message";s:2:"OK";s:4:"data";O:8:"stdClass":1:{s:2:"id";s:8:"c2c_1234";}}';
      assert.deepEqual(phpUnserialize(body), { status: '200', message: 'OK', data: { id: 'c2c_1234' } });
      assert.deepEqual(toEnvelope(body), { status: '200', message: 'OK', data: { id: 'c2c_1234' } });
    });

    it('drops a __proto__ key without touching any prototype', function () {
      const value = phpUnserialize('a:2:{s:9:"__proto__";a:1:{s:8:"polluted";b:1;}s:6:"status";s:3:"200";}');
      assert.deepEqual(value, { status: '200' });
      assert.equal(Object.getPrototypeOf(value), Object.prototype);
      assert.equal({}.polluted, undefined);
    });

    it('a PHP envelope goes through toEnvelope; data keyed by index reads as a list', function () {
      const env = toEnvelope(ser({ status: 200, message: 'OK', data: [{ id: 'a' }, { id: 'b' }] }));
      assert.equal(env.status, '200', 'an int status becomes a string');
      assert.deepEqual(asList(env.data), [{ id: 'a' }, { id: 'b' }]);
    });

    it('truncated or garbage data is a SyntaxError, and BAD_RESPONSE through toEnvelope', function () {
      const good = ser({ status: '200', message: 'OK', data: [{ id: '1', mobile: '919812345678' }] });
      const bad = [
        'a:1:{s:6:"status";',
        'a:1:{s:6:"status";s:3:"20',
        'a:1:{s:60:"status";s:3:"200";}',
        'a:1:{s:6:"status"s:3:"200";}',
        'a:1:{x:1;}',
        'a:1:{a:0:{}i:1;}',
        'a:1:{s:1:"a";i:1;}trailing',
        'a:2:{s:1:"a";i:1;}',
        'a:1:{s:1:"a";i:abc;}',
        'a:1:{s:1:"a";b:2;}',
        'a:1:{s:1:"a";d:;}',
        'a:1:{s:1:"a";d:x;}',
        'a:1:{s:1:"a";i:12345678901234567890;}',
        'a:1:{s:1:"a";s:-1:"";}',
        'a:1:{s:1:"a";r:1;}',
        'O:8:"stdClass:1:{}',
        'a:x:{}',
        `${'a:1:{i:0;'.repeat(100)}N;${'}'.repeat(100)}`,
      ];
      for (let i = 1; i < good.length; i++) bad.push(good.slice(0, i));
      for (const text of bad) {
        assert.throws(() => phpUnserialize(text), SyntaxError, text);
        if (/^[aO]:\d+:/.test(text)) badResponse(text);
      }
    });
  });

  describe('plain text (voice APIs without format)', function () {
    it('reads `key: value` lines; dotted keys nest', function () {
      const env = toEnvelope('status: 200\nmessage: Call status\ndata.0.id: 1234-5678.90\ndata.0.mobile: 919812345678\ndata.0.status: COMPLETED\ndata.0.senttime: 2024-01-02 10:11:12\n');
      assert.deepEqual(env, {
        status: '200',
        message: 'Call status',
        data: { 0: { id: '1234-5678.90', mobile: '919812345678', status: 'COMPLETED', senttime: '2024-01-02 10:11:12' } },
      });
      assert.deepEqual(asList(env.data), [env.data[0]]);
    });

    it('reads CRLF lines, `key=value` lines and blank lines', function () {
      assert.deepEqual(toEnvelope('status=200\r\n\r\nmessage = OK \r\ndata.id=c2c_123\r\n'), { status: '200', message: 'OK', data: { id: 'c2c_123' } });
    });

    it('reads a single `key=value&...` line, URL-decoded', function () {
      assert.deepEqual(toEnvelope('status=200&message=Call+placed%20ok&data.id=c2c_99%2B1'), { status: '200', message: 'Call placed ok', data: { id: 'c2c_99+1' } });
    });

    it('keeps %, + and & in a single `key: value` line', function () {
      assert.deepEqual(toEnvelope('status: 50% & +1'), { status: '50% & +1', message: '' });
    });

    it('ignores __proto__ in any position of a dotted key', function () {
      const env = toEnvelope('status: 200\n__proto__.polluted: yes\ndata.__proto__.polluted: yes\nconstructor.prototype.polluted: yes\nmessage: OK');
      assert.equal({}.polluted, undefined);
      assert.equal(env.status, '200');
      assert.equal(Object.getPrototypeOf(env), Object.prototype);
      const q = toEnvelope('status=200&__proto__.polluted=1&a.__proto__=1');
      assert.equal(q.polluted, undefined);
      assert.equal({}.polluted, undefined);
    });

    it('a later dotted key turns a scalar into an object rather than failing', function () {
      assert.deepEqual(toEnvelope('status: 200\ndata: \ndata.id: x').data, { id: 'x' });
    });

    it('text that is not key/value lines is BAD_RESPONSE', function () {
      for (const body of ['Internal Server Error', 'status 200', 'null', '42', '"OK"', 'ok\nstatus: 200', 'status=200&message=%E0%A4%A', 'a b: c']) badResponse(body);
    });
  });

  describe('toEnvelope', function () {
    it('makes status a trimmed string and message a string', function () {
      assert.deepEqual(toEnvelope('{"status":200}'), { status: '200', message: '' });
      assert.deepEqual(toEnvelope('{"status":" OK ","message":null}'), { status: 'OK', message: '' });
      assert.deepEqual(toEnvelope('{"status":"A404","message":42}'), { status: 'A404', message: '42' });
    });

    it('a message that is an object becomes text, never a TypeError', function () {
      for (const body of [
        '{"status":"OK","message":{"toString":1}}',
        '{"status":"OK","message":{"toString":null,"valueOf":null}}',
        '{"status":"OK","message":[{"toString":1}]}',
        '{"status":"OK","message":{"text":"hi"}}',
      ]) {
        const env = toEnvelope(body);
        assert.equal(typeof env.message, 'string', body);
      }
      assert.equal(toEnvelope('{"status":"OK","message":{"text":"hi"}}').message, '{"text":"hi"}');
    });

    it('every non-envelope is a TransportError BAD_RESPONSE', function () {
      for (const body of [
        '',
        '   \n\t ',
        '[]',
        '[{"status":"OK"}]',
        '{}',
        '{"message":"ok"}',
        '{"status":null,"message":"x"}',
        '{"status":true}',
        '{"status":["OK"]}',
        '{"status":{"code":"OK"}}',
        'true',
        '\u0000\u0001\u0002',
        '\uFFFD\uFFFD',
        '{'.repeat(100000),
        '['.repeat(100000),
        `cb(${'['.repeat(100000)})`,
        '<a>'.repeat(5000),
        'a:1000000000:{',
      ]) {
        badResponse(body);
      }
    });

    it('the error text quotes a short snippet of the answer', function () {
      try {
        toEnvelope(`<html>${'x'.repeat(500)}`);
        assert.fail('should throw');
      } catch (err) {
        assert.ok(err instanceof TransportError);
        assert.ok(err.message.length < 400, err.message);
        assert.ok(err.message.includes('<html>'));
      }
    });
  });

  describe('checkStatus', function () {
    it('passes the success status of each interface, in any case', function () {
      const ok = toEnvelope('{"status":"OK","message":"ok"}');
      assert.equal(checkStatus(ok, 'OK'), ok);
      assert.equal(checkStatus(toEnvelope('{"status":"ok"}'), 'OK').status, 'ok');
      assert.equal(checkStatus(toEnvelope('{"status":200,"message":"OK"}'), '200').status, '200');
    });

    it('anything else is a ServiceError carrying the code, message and envelope', function () {
      for (const [body, success, code] of [
        ['{"status":"A404","message":"Account suspended"}', 'OK', 'A404'],
        ['{"status":"200","message":"OK"}', 'OK', '200'],
        ['{"status":"OK","message":"ok"}', '200', 'OK'],
        ['{"status":"A416","message":"Invalid id"}', '200', 'A416'],
        ['<api><status>E423</status><message>receiver value not provided</message></api>', '200', 'E423'],
        [ser({ status: 'A416', message: 'Invalid call id' }), '200', 'A416'],
        ['status: E423\nmessage: receiver value not provided', '200', 'E423'],
        ['{"status":"","message":"?"}', 'OK', 'SERVICE_ERROR'],
      ]) {
        const env = toEnvelope(body);
        assert.throws(
          () => checkStatus(env, success),
          (err) => {
            assert.ok(err instanceof ServiceError);
            assert.equal(err.code, code);
            assert.equal(err.envelope, env);
            if (env.message) assert.ok(err.message.includes(env.message));
            return true;
          },
          body,
        );
      }
    });
  });

  describe('asList', function () {
    it('reads nothing, arrays, index-keyed objects in numeric order, and one record', function () {
      assert.deepEqual(asList(undefined), []);
      assert.deepEqual(asList(null), []);
      assert.deepEqual(asList(''), []);
      assert.deepEqual(asList('text'), []);
      assert.deepEqual(asList(7), []);
      assert.deepEqual(asList({}), [{}]);
      assert.deepEqual(asList([{ a: 1 }, 'x', null, [1], { b: 2 }]), [{ a: 1 }, { b: 2 }]);
      const keyed = {};
      for (const i of [10, 2, 0, 1]) keyed[i] = { i };
      assert.deepEqual(asList(keyed), [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 10 }]);
      assert.deepEqual(asList({ 0: { a: 1 }, 1: 'scalar' }), [{ a: 1 }]);
      assert.deepEqual(asList({ id: 'x', mobile: '1' }), [{ id: 'x', mobile: '1' }]);
    });
  });

  describe('property check: nothing but BAD_RESPONSE escapes toEnvelope', function () {

    const FIXTURES = [
      '{"status":"OK","message":"Message submitted successfully","data":[{"id":"a1b2","customid":"","mobile":"919812345678","status":"AWAITED-DLR"},{"id":"c3","mobile":"919812345679"}]}',
      '{"status":"A404","message":"Account suspended"}',
      'cb({"status":"200","message":"OK","data":{"0":{"id":"1234-5678","mobile":"919812345678","status":"COMPLETED","senttime":"2024-01-02 10:11:12"}}});',
      '<?xml version="1.0" encoding="UTF-8"?><api><status>OK</status><message>Tom &amp; Jerry &#233; &#x1F600;</message><data><entry><id>0091</id><mobile>919812345678</mobile></entry><entry><id>2</id><mobile>919812345679</mobile></entry></data></api>',
      '<!DOCTYPE api [<!ENTITY xxe "EXPANDED">]><api><status>200</status><message>&xxe;</message><data><rows><inbox><recipient>9190000</recipient><message>héllo</message></inbox></rows></data></api>',
      ser({ status: '200', message: 'OK', data: [{ id: '1234-5678.90', mobile: '919812345678', status: 'COMPLETED', senttime: '2024-01-02 10:11:12', text: 'नमस्ते 😀' }] }),
      'O:8:"stdClass":2:{s:6:"status";s:3:"200";s:7:"message";s:2:"OK";}',
      'status: 200\nmessage: OK\ndata.0.id: 1234\ndata.0.status: COMPLETED\n',
      'status=200&message=Call+placed&data.id=c2c_1%2B2',
    ];
    const STRUCTURAL = Buffer.from('{}[]()<>"\':;,=&.%+#\\/\n\r\t !?-aOsidbN0123456789_xX&;');

    function check(body, label) {
      let env;
      try {
        env = toEnvelope(body);
      } catch (err) {
        if (!(err instanceof TransportError) || err.code !== 'BAD_RESPONSE') {
          assert.fail(`${label}: ${err && err.name} ${err && err.code}: ${err && err.message} for ${JSON.stringify(body).slice(0, 200)}`);
        }
        return 'error';
      }
      assert.ok(isRecord(env), label);
      assert.equal(typeof env.status, 'string', label);
      assert.equal(typeof env.message, 'string', label);
      // What callers do next must not throw either.
      asList(env.data);
      try {
        checkStatus(env, 'OK');
      } catch (err) {
        assert.ok(err instanceof ServiceError, label);
      }
      return 'envelope';
    }

    it('5,000 random byte strings', function () {
      const rand = prng(0x5eed);
      const seen = { error: 0, envelope: 0 };
      for (let i = 0; i < 5000; i++) {
        const len = Math.floor(rand() * 300);
        const bytes = Buffer.alloc(len);
        const structural = rand() < 0.5;
        for (let j = 0; j < len; j++) bytes[j] = structural && rand() < 0.8 ? STRUCTURAL[Math.floor(rand() * STRUCTURAL.length)] : Math.floor(rand() * 256);
        const body = rand() < 0.5 ? bytes.toString('utf8') : bytes.toString('latin1');
        seen[check(body, `random #${i}`)]++;
      }
      assert.equal(seen.error + seen.envelope, 5000);
      assert.equal({}.polluted, undefined);
    });

    it('5,000 random mutations (byte flips, truncations, insertions, deletions) of valid answers', function () {
      const rand = prng(0xc0ffee);
      const pick = (n) => Math.floor(rand() * n);
      for (const f of FIXTURES) assert.equal(check(f, 'fixture'), 'envelope', `fixture decodes: ${f.slice(0, 60)}`);
      const seen = { error: 0, envelope: 0 };
      for (let i = 0; i < 5000; i++) {
        let bytes = Buffer.from(FIXTURES[i % FIXTURES.length], 'utf8');
        const edits = 1 + pick(4);
        for (let e = 0; e < edits && bytes.length > 0; e++) {
          const at = pick(bytes.length);
          switch (pick(5)) {
            case 0: // flip one bit
              bytes = Buffer.from(bytes);
              bytes[at] ^= 1 << pick(8);
              break;
            case 1: // random byte
              bytes = Buffer.from(bytes);
              bytes[at] = pick(256);
              break;
            case 2: // truncate
              bytes = bytes.subarray(0, at);
              break;
            case 3: // insert a structural character
              bytes = Buffer.concat([bytes.subarray(0, at), STRUCTURAL.subarray(pick(STRUCTURAL.length)).subarray(0, 1), bytes.subarray(at)]);
              break;
            default: // delete a run
              bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(Math.min(bytes.length, at + 1 + pick(8)))]);
          }
        }
        seen[check(bytes.toString('utf8'), `mutation #${i}`)]++;
      }
      assert.equal(seen.error + seen.envelope, 5000);
      assert.ok(seen.envelope > 0 && seen.error > 0, `both outcomes met: ${JSON.stringify(seen)}`);
      assert.equal({}.polluted, undefined);
    });

    it('phpUnserialize alone throws only SyntaxError on mutated input', function () {
      const rand = prng(42);
      const base = Buffer.from(FIXTURES[5], 'utf8');
      for (let i = 0; i < 2000; i++) {
        const bytes = Buffer.from(base);
        for (let e = 0; e < 1 + Math.floor(rand() * 3); e++) bytes[Math.floor(rand() * bytes.length)] = STRUCTURAL[Math.floor(rand() * STRUCTURAL.length)];
        const cut = rand() < 0.3 ? bytes.subarray(0, Math.floor(rand() * bytes.length)) : bytes;
        try {
          phpUnserialize(cut);
        } catch (err) {
          assert.ok(err instanceof SyntaxError, `${err && err.name}: ${err && err.message}`);
        }
      }
    });
  });
});
