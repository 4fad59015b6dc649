'use strict';
// Fuzzing the response decoders and every interface's normaliser: whatever bytes the service (or
// something pretending to be it) answers, the only ways out are a value, a TransportError BAD_RESPONSE
// or a ServiceError; phpUnserialize on its own may also throw a SyntaxError (toEnvelope wraps it).
// Seeded, so a failure replays; the failing input is printed as hex. Counts and times are printed,
// never asserted.
const assert = require('node:assert/strict');
const { toEnvelope, checkStatus, isRecord } = require('../dist/core/decode');
const { phpUnserialize } = require('../dist/core/php-unserialize');
const { normaliseSubmission } = require('../dist/core/messaging');
const { normaliseInbox, INBOX_FIELDS } = require('../dist/core/inbox');
const { normaliseCallStatus, CALL_STATUS_FIELDS } = require('../dist/core/call-status');
const { callIdOf, clickToCallCall } = require('../dist/core/click-to-call');
const { ServiceError, TransportError } = require('../dist/core/errors');
// A seeded generator, so a failing case can be replayed from its seed.
const { mulberry32: prng } = require('../dist/simulator/faults');

// ---- tools ----

/** PHP's serialize() for the shapes the service uses; string lengths in UTF-8 bytes. */
function ser(v) {
  if (v === null) return 'N;';
  if (typeof v === 'boolean') return `b:${v ? 1 : 0};`;
  if (typeof v === 'number') return Number.isInteger(v) ? `i:${v};` : `d:${v};`;
  if (typeof v === 'string') return `s:${Buffer.byteLength(v)}:"${v}";`;
  const entries = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
  return `a:${entries.length}:{${entries.map(([k, x]) => (typeof k === 'number' || /^\d+$/.test(k) ? `i:${k};` : ser(k)) + ser(x)).join('')}}`;
}

function hex(input) {
  const buf = Buffer.isBuffer(input) ? input : Buffer.from(String(input), 'utf8');
  const shown = buf.subarray(0, 256).toString('hex');
  return `${shown}${buf.length > 256 ? `… (${buf.length} bytes)` : ` (${buf.length} bytes)`}`;
}

function describeError(err) {
  return `${err && err.constructor && err.constructor.name} ${err && err.code}: ${err && err.message && err.message.slice(0, 200)}`;
}

// ---- fixtures: real answers of each interface in each format ----

const inboxRecord = (n) => ({ recipient: '9220000000', keyword: 'HELLO', sender: `91980000000${n}`, message: `héllo ${n} 😀`, operator: '', circle: 'KA', response: '', received_time: '2026-11-01 10:00:00' });
const callRecord = (n) => ({ id: `1234-5678.9${n}`, mobile: `91981234567${n}`, status: 'COMPLETED', senttime: '2024-01-02 10:11:12' });
const xmlRecord = (tag, r) => `<${tag}>${Object.entries(r).map(([k, v]) => `<${k}>${v.replace(/&/g, '&amp;')}</${k}>`).join('')}</${tag}>`;
const long = 'L'.repeat(5000);
const nestJson = (depth) => `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`;
const nestXml = (depth) => `${'<n>'.repeat(depth)}x${'</n>'.repeat(depth)}`;
const nestPhp = (depth) => {
  let v = 's:1:"x";';
  for (let i = 0; i < depth; i++) v = `a:1:{i:0;${v}}`;
  return v;
};

const FIXTURES = [
  // A: messaging
  JSON.stringify({ status: 'OK', message: 'Message Sent Successfully', data: [{ id: 'a1b2', customid: '', mobile: '919812345678', status: 'AWAITED-DLR' }, { id: 'c3', mobile: '919812345679' }] }),
  JSON.stringify({ status: 'A404', message: 'Account suspended' }),
  JSON.stringify({ status: 'E504', message: 'File size exceeds 64 MB', data: null }),
  `<?xml version="1.0" encoding="UTF-8"?><api><status>OK</status><message>Tom &amp; Jerry &#233; &#x1F600;</message><data><entry><id>0091</id><mobile>919812345678</mobile></entry><entry><id>2</id><mobile>919812345679</mobile></entry></data></api>`,
  `<api><status>A402</status><message>Insufficient credits</message></api>`,
  // B: inbox
  JSON.stringify({ status: '200', message: 'OK', data: { rows: { inbox: inboxRecord(1) } } }),
  JSON.stringify({ status: '200', message: 'OK', data: { rows: { inbox: [inboxRecord(1), inboxRecord(2)] } } }),
  JSON.stringify({ status: '200', message: 'OK', data: { rows: [{ inbox: inboxRecord(1) }, { inbox: inboxRecord(2) }] } }),
  JSON.stringify({ status: '200', message: 'OK', data: { rows: { inbox: { 0: inboxRecord(1), 1: inboxRecord(2) } } } }),
  `<api><status>200</status><message>OK</message><data><rows>${xmlRecord('inbox', inboxRecord(1))}${xmlRecord('inbox', inboxRecord(2))}</rows></data></api>`,
  ser({ status: '200', message: 'OK', data: { rows: { inbox: [inboxRecord(1), inboxRecord(2)] } } }),
  // C: call status
  JSON.stringify({ status: '200', message: 'OK', data: { 0: callRecord(1), 1: callRecord(2) } }),
  `cb({"status":"200","message":"OK","data":{"0":${JSON.stringify(callRecord(1))}}});`,
  `jQuery3710_1700000000(${JSON.stringify({ status: '200', message: 'OK', data: [callRecord(1), callRecord(2)] })})`,
  `<?xml version="1.0"?><api><status>200</status><message>OK</message><data>${xmlRecord('voice', callRecord(1))}${xmlRecord('voice', callRecord(2))}</data></api>`,
  ser({ status: '200', message: 'OK', data: [callRecord(1), callRecord(2)] }),
  'O:8:"stdClass":3:{s:6:"status";s:4:"A416";s:7:"message";s:24:"Invalid call id / mobile";s:4:"data";N;}',
  'status: 200\nmessage: OK\ndata.0.id: 1234-5678\ndata.0.mobile: 919812345678\ndata.0.status: COMPLETED\ndata.0.senttime: 2024-01-02 10:11:12\n',
  // D: click-to-call
  JSON.stringify({ status: '200', message: 'Call placed', data: { id: 'c2c_5f2a9b' } }),
  JSON.stringify({ status: 'E423', message: 'receiver value not provided' }),
  '<api><status>200</status><message>OK</message><data><id>c2c_77</id></data></api>',
  'status: 200\r\nmessage: Call placed\r\ndata.id: c2c_1\r\n',
  'status=200&message=Call+placed&data.id=c2c_1%2B2',
  // deep nesting and long strings
  `{"status":"200","message":"OK","data":{"rows":{"inbox":{"message":${nestJson(40)},"sender":"${long}"}}}}`,
  `<api><status>200</status><message>${long}</message><data>${nestXml(60)}</data></api>`,
  `a:3:{s:6:"status";s:3:"200";s:7:"message";s:${long.length}:"${long}";s:4:"data";${nestPhp(40)}}`,
  `{"status":"OK","message":"${'é'.repeat(3000)}","data":[${Array.from({ length: 50 }, (_, i) => `{"id":"${i}","mobile":"91980000${i}"}`).join(',')}]}`,
];

/** Bytes that shape every format: mutations insert them more often than random bytes. */
const TOKENS = [
  '{', '}', '[', ']', '"', ':', ',', '<', '>', '</', '/>', '&', ';', '&amp;', '&#x1F600;', '&#99999999;', '&lol;',
  '<!DOCTYPE a [<!ENTITY e "x">]>', '<![CDATA[', ']]>', '<?x ?>', '<!--', '-->',
  '__proto__', '"__proto__":', '<__proto__>', 's:9:"__proto__";', 'constructor', 'toString', '"toString":1,', 'valueOf',
  'a:1:{', 'a:99999:{', 'i:0;', 'N;', 'b:1;', 'd:1.5;', 'd:NAN;', 's:999999999:"', 'O:8:"stdClass":',
  '\n', '\r\n', 'data.0.id: ', 'data.id=', '.', '=', '%', '%zz', '%F0%9F', '+', '(', ')', 'cb(', '\\u0000', '\\ud800', '\\',
  'null', 'true', '1e999', '-0', '\u0000', '\uffff', '\ud800', '😀', 'status', '"status":', '<status>', '200', 'OK',
];
const TOKEN_BYTES = TOKENS.map((t) => Buffer.from(t, 'utf8'));
const PRINTABLE = Buffer.from(' !"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\n\t');

// ---- the property ----

const c2cNormalise = clickToCallCall({ caller: '9812345678', receiver: '9812345679' }).normalise;

/** One input through toEnvelope, checkStatus and every normaliser. Returns 'envelope' or 'bad'; throws on a break. */
function check(body) {
  let env;
  try {
    env = toEnvelope(body);
  } catch (err) {
    if (err instanceof TransportError && err.code === 'BAD_RESPONSE') return 'bad';
    throw new Error(`toEnvelope threw ${describeError(err)}`);
  }
  if (!isRecord(env) || typeof env.status !== 'string' || typeof env.message !== 'string') throw new Error('toEnvelope returned no envelope');
  for (const success of ['OK', '200']) {
    try {
      checkStatus(env, success);
    } catch (err) {
      if (!(err instanceof ServiceError) || typeof err.code !== 'string' || !err.code) throw new Error(`checkStatus threw ${describeError(err)}`);
    }
  }
  // Every normaliser sees every envelope, whatever its status: none may break on another interface's shape.
  const run = (name, fn, shape) => {
    let value;
    try {
      value = fn(env);
    } catch (err) {
      if ((err instanceof TransportError && err.code === 'BAD_RESPONSE') || err instanceof ServiceError) return;
      throw new Error(`${name} threw ${describeError(err)}`);
    }
    const why = shape(value);
    if (why) throw new Error(`${name} returned a bad value: ${why}`);
  };
  const records = (fields) => (value) => {
    if (!Array.isArray(value)) return 'not an array';
    for (const r of value) {
      if (!isRecord(r) || Object.getPrototypeOf(r) !== Object.prototype) return 'an entry is not a plain object';
      for (const f of fields) if (typeof r[f] !== 'string') return `${f} is ${typeof r[f]}`;
    }
    return undefined;
  };
  run('normaliseSubmission', normaliseSubmission, records(['id', 'mobile']));
  run('normaliseInbox', normaliseInbox, records(INBOX_FIELDS));
  run('normaliseCallStatus', normaliseCallStatus, records(CALL_STATUS_FIELDS));
  run('callIdOf', callIdOf, (id) => (id === undefined || (typeof id === 'string' && id.trim() !== '') ? undefined : `id ${JSON.stringify(id)}`));
  run('click-to-call result', c2cNormalise, (r) => (isRecord(r) && typeof r.id === 'string' && r.id !== '' ? undefined : 'no id'));
  return 'envelope';
}

// ---- generators ----

function randomBytes(rand) {
  const len = Math.floor(rand() * 400);
  const out = Buffer.alloc(len);
  for (let i = 0; i < len; i++) out[i] = Math.floor(rand() * 256);
  return out;
}

function randomPrintable(rand) {
  const parts = [];
  const n = Math.floor(rand() * 60);
  // Start like one of the formats half of the time, so the decoders get past their first byte.
  if (rand() < 0.5) parts.push(Buffer.from(['{', '[', '<', 'a:', 'O:', 'cb(', 'status: ', 'status='][Math.floor(rand() * 8)]));
  for (let i = 0; i < n; i++) {
    if (rand() < 0.4) parts.push(TOKEN_BYTES[Math.floor(rand() * TOKEN_BYTES.length)]);
    else {
      const run = Buffer.alloc(1 + Math.floor(rand() * 8));
      for (let j = 0; j < run.length; j++) run[j] = PRINTABLE[Math.floor(rand() * PRINTABLE.length)];
      parts.push(run);
    }
  }
  return Buffer.concat(parts);
}

function mutate(rand, base) {
  let bytes = base;
  const pick = (n) => Math.floor(rand() * n);
  const edits = 1 + pick(5);
  for (let e = 0; e < edits; e++) {
    const at = pick(bytes.length + 1);
    switch (pick(8)) {
      case 0: // flip a bit
        if (bytes.length === 0) break;
        bytes = Buffer.from(bytes);
        bytes[Math.min(at, bytes.length - 1)] ^= 1 << pick(8);
        break;
      case 1: // a random byte
        if (bytes.length === 0) break;
        bytes = Buffer.from(bytes);
        bytes[Math.min(at, bytes.length - 1)] = pick(256);
        break;
      case 2: // insert a token
        bytes = Buffer.concat([bytes.subarray(0, at), TOKEN_BYTES[pick(TOKEN_BYTES.length)], bytes.subarray(at)]);
        break;
      case 3: // insert random bytes
        bytes = Buffer.concat([bytes.subarray(0, at), randomBytes(rand).subarray(0, 1 + pick(6)), bytes.subarray(at)]);
        break;
      case 4: // delete a run
        bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(Math.min(bytes.length, at + 1 + pick(12)))]);
        break;
      case 5: // truncate
        bytes = bytes.subarray(0, at);
        break;
      case 6: {
        // duplicate a slice somewhere else
        const from = pick(bytes.length + 1);
        const slice = bytes.subarray(from, Math.min(bytes.length, from + 1 + pick(64)));
        bytes = Buffer.concat([bytes.subarray(0, at), slice, bytes.subarray(at)]);
        break;
      }
      default: {
        // splice in the middle of another fixture
        const other = Buffer.from(FIXTURES[pick(FIXTURES.length)], 'utf8');
        const from = pick(other.length);
        bytes = Buffer.concat([bytes.subarray(0, at), other.subarray(from, from + 1 + pick(80)), bytes.subarray(at)]);
      }
    }
  }
  return bytes;
}

describe('fuzz: the decoders and normalisers only ever return a value or a typed error', function () {
  this.timeout(600_000); // CPU-bound: a busy machine needs several times a quiet one's minute
  const totals = { cases: 0, ms: 0 };
  after(() => console.log(`      fuzz total: ${totals.cases} cases in ${(totals.ms / 1000).toFixed(1)} s`));

  /** Runs `n` generated inputs through check(); fails with the first breaking input, in hex. */
  function campaign(label, seed, n, generate) {
    const rand = prng(seed);
    const seen = { envelope: 0, bad: 0 };
    let slowest = { ms: 0, at: -1 };
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const bytes = generate(rand, i);
      const body = rand() < 0.85 ? bytes.toString('utf8') : bytes.toString('latin1');
      const t0 = process.hrtime.bigint();
      try {
        seen[check(body)]++;
      } catch (err) {
        assert.fail(`${label} #${i} (seed ${seed}): ${err.message}\n        input: ${hex(body)}`);
      }
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (ms > slowest.ms) slowest = { ms, at: i };
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    totals.cases += n;
    totals.ms += ms;
    console.log(`      ${label}: ${n} cases in ${ms.toFixed(0)} ms (${seen.envelope} envelopes, ${seen.bad} BAD_RESPONSE; slowest #${slowest.at} ${slowest.ms.toFixed(1)} ms)`);
    assert.equal({}.polluted, undefined, 'no prototype was polluted');
    assert.equal(Object.prototype.toString.call({}), '[object Object]');
    return seen;
  }

  it('the fixtures themselves decode to envelopes', function () {
    for (const f of FIXTURES) assert.equal(check(f), 'envelope', f.slice(0, 80));
  });

  it('random bytes', function () {
    campaign('random bytes', 0x5eed1, 25_000, (rand) => randomBytes(rand));
  });

  it('random printable strings made of format tokens', function () {
    campaign('random printable', 0x5eed2, 25_000, (rand) => randomPrintable(rand));
  });

  it('mutated real answers of every interface and format', function () {
    const bases = FIXTURES.map((f) => Buffer.from(f, 'utf8'));
    const seen = campaign('mutated fixtures', 0x5eed3, 60_000, (rand, i) => mutate(rand, bases[i % bases.length]));
    assert.ok(seen.envelope > 0 && seen.bad > 0, `both outcomes met: ${JSON.stringify(seen)}`);
  });

  it('phpUnserialize alone: a value or a SyntaxError', function () {
    const bases = FIXTURES.filter((f) => /^[aO]:\d+:/.test(f)).map((f) => Buffer.from(f, 'utf8'));
    const rand = prng(0x5eed4);
    const n = 15_000;
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const bytes = i % 5 === 0 ? randomPrintable(rand) : mutate(rand, bases[i % bases.length]);
      try {
        phpUnserialize(rand() < 0.5 ? bytes : bytes.toString('latin1'));
      } catch (err) {
        if (!(err instanceof SyntaxError)) assert.fail(`phpUnserialize #${i}: ${describeError(err)}\n        input: ${hex(bytes)}`);
      }
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    totals.cases += n;
    totals.ms += ms;
    console.log(`      phpUnserialize alone: ${n} cases in ${ms.toFixed(0)} ms`);
  });

  describe('hand-made adversarial answers', function () {
    function bad(body) {
      assert.throws(
        () => toEnvelope(body),
        (err) => err instanceof TransportError && err.code === 'BAD_RESPONSE',
      );
      assert.equal(check(body), 'bad');
    }

    it('XML entity expansion (billion laughs, quadratic blowup, external entity) does not expand', function () {
      let laughs = '<?xml version="1.0"?><!DOCTYPE api [<!ENTITY l0 "lol">';
      for (let i = 1; i < 10; i++) laughs += `<!ENTITY l${i} "${`&l${i - 1};`.repeat(10)}">`;
      laughs += ']><api><status>200</status><message>&l9;</message><data><id>&l9;</id></data></api>';
      const quadratic = `<!DOCTYPE api [<!ENTITY q "${'q'.repeat(50_000)}">]><api><status>200</status><message>${'&q;'.repeat(50_000)}</message></api>`;
      const external = '<!DOCTYPE api [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><api><status>200</status><message>&xxe;</message></api>';
      for (const body of [laughs, quadratic, external]) {
        let env;
        try {
          env = toEnvelope(body);
        } catch (err) {
          assert.ok(err instanceof TransportError && err.code === 'BAD_RESPONSE', describeError(err));
          continue;
        }
        const size = JSON.stringify(env).length;
        assert.ok(size <= body.length, `the answer grew from ${body.length} to ${size} characters`);
        assert.ok(!/lollol|root:/.test(JSON.stringify(env)), 'an entity was expanded');
        check(body);
      }
    });

    it('PHP with a huge declared length or count is BAD_RESPONSE at once', function () {
      bad('a:1:{s:6:"status";s:999999999999999:"x";}');
      bad('a:3:{s:6:"status";s:3:"200";s:7:"message";s:2147483647:"OK";}');
      bad('a:999999999999999:{s:6:"status";s:3:"200";}');
      bad(`a:1:{s:6:"status";s:-1:"";}`);
      bad(`${'a:1:{i:0;'.repeat(200)}N;${'}'.repeat(200)}`);
      assert.throws(() => phpUnserialize('s:99999999999999999999:"x";'), SyntaxError);
    });

    it('a 1 MB JSON string decodes, and normalises', function () {
      const message = 'x'.repeat(1 << 20);
      const env = toEnvelope(JSON.stringify({ status: '200', message, data: { rows: { inbox: { message } }, id: message } }));
      assert.equal(env.message.length, 1 << 20);
      assert.equal(normaliseInbox(env)[0].message.length, 1 << 20);
      assert.equal(callIdOf(env).length, 1 << 20);
      assert.equal(check(JSON.stringify({ status: 'OK', data: [{ id: message, mobile: message }] })), 'envelope');
    });

    it('JSON, JSONP, XML, PHP and text nested 100,000 deep are BAD_RESPONSE, not a RangeError', function () {
      const D = 100_000;
      bad(`{"status":"200","data":${'['.repeat(D)}${']'.repeat(D)}}`);
      bad(`{"status":"200","data":${'{"a":'.repeat(D)}1${'}'.repeat(D)}}`);
      bad(`cb({"status":"200","data":${'['.repeat(D)}${']'.repeat(D)}})`);
      bad(`<api><status>200</status><data>${nestXml(D)}</data></api>`);
      bad(`a:2:{s:6:"status";s:3:"200";s:4:"data";${nestPhp(D)}}`);
      // The plain-text form nests by dotted keys: a key of 100,000 parts must not build that depth.
      bad(`status: 200\ndata.rows.inbox.message.${Array(D).fill('a').join('.')}: x\n`);
      bad(`status: 200\ndata.0.status.${Array(D).fill('a').join('.')}: x\n`);
      bad(`status=OK&data.0.id.${Array(D).fill('a').join('.')}=x`);
    });

    it('the deepest JSON that decodes still normalises (no stack overflow later)', function () {
      // Find, by halving, roughly the deepest JSON that toEnvelope accepts here, and normalise it.
      let lo = 1;
      let hi = 100_000;
      const body = (d) => `{"status":"200","message":"OK","data":{"rows":{"inbox":{"message":${'['.repeat(d)}${']'.repeat(d)}}},"0":{"status":${'['.repeat(d)}${']'.repeat(d)}},"id":${'['.repeat(d)}${']'.repeat(d)}}}`;
      while (hi - lo > 16) {
        const mid = (lo + hi) >> 1;
        try {
          toEnvelope(body(mid));
          lo = mid;
        } catch {
          hi = mid;
        }
      }
      assert.equal(check(body(lo)), 'envelope');
      console.log(`      deepest JSON accepted: about ${lo} levels`);
    });

    it('regex-unfriendly answers stay linear: long runs without the expected delimiter', function () {
      const N = 1 << 20;
      for (const body of [
        `cb(${')'.repeat(N)}x`,
        `a${'.'.repeat(N)}(`,
        `status${' '.repeat(N)}x`,
        `status=${'%'.repeat(N)}`,
        `${'a'.repeat(N)}:`,
        `status: 200\n${'\n'.repeat(N)}message: ok`,
        `<api><status>200</status>${'<x/>'.repeat(N / 4)}</api>`,
        `{"status":"200","data":{${Array.from({ length: 50_000 }, (_, i) => `"${i}":{"id":"${i}"}`).join(',')}}}`,
      ]) {
        check(body);
      }
    });

    it('answers that name prototype keys pollute nothing', function () {
      for (const body of [
        '{"status":"OK","__proto__":{"polluted":1},"data":[{"__proto__":{"polluted":1},"id":"1","mobile":"2"}]}',
        '{"status":"200","data":{"rows":{"inbox":{"constructor":{"prototype":{"polluted":1}},"message":"m"}}}}',
        'status: 200\n__proto__.polluted: 1\nconstructor.prototype.polluted: 1\ndata.0.__proto__.polluted: 1\n',
        'a:2:{s:6:"status";s:3:"200";s:9:"__proto__";a:1:{s:8:"polluted";i:1;}}',
        '<api><status>200</status><constructor><prototype><polluted>1</polluted></prototype></constructor></api>',
        '{"status":"OK","data":[{"id":{"toString":1,"valueOf":2},"mobile":{"toString":"x"}}]}',
      ]) {
        check(body);
      }
      assert.equal({}.polluted, undefined);
    });
  });
});
