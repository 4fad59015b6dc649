'use strict';
// A corpus of bad inputs for the four action nodes, run in the real Node-RED runtime. Every case must
// reach the Catch node with a stable code (INVALID_INPUT, or the spec's E603/E616/E617/E504/E423) and a
// message naming the field, produce no output, and send nothing: the recording server behind all four
// base URLs must not see a single request across the whole corpus.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Recorder } = require('./helpers/recorder');
const { helper, loadNode, logText } = require('./helpers/flow');

const TO = '919812345678';
const FROM = '918000000000';
const MB64 = 64 * 1024 * 1024;

const W = 'kaleyra-whatsapp';
const I = 'kaleyra-inbox';
const C = 'kaleyra-call-status';
const D = 'kaleyra-click2call';

/** A whatsapp msg with valid addressing around `payload` (and any overrides). */
const wa = (payload, extra = {}) => ({ payload, to: TO, from: FROM, ...extra });
const text = (extra = {}) => ({ type: 'text', text: { message: 'hi' }, ...extra });
const doc = (extra = {}) => wa({ type: 'document' }, { filename: 'a.pdf', ...extra });
const c2c = (extra = {}) => ({ payload: { caller: '9812345678', receiver: '9812345679', ...extra } });

const circular = { a: 1 };
circular.self = circular;

/**
 * Each case: [label, node type, node settings, msg (or a function of the temp paths), code, field regex].
 * Settings `{}` leave every TypedInput empty, so the msg fills them.
 */
function corpus(tmp) {
  return [
    // ---- kaleyra-whatsapp: wrong types ----
    ['payload is a number', W, {}, wa(42), 'INVALID_INPUT', /^payload: /],
    ['payload is a boolean', W, {}, wa(true), 'INVALID_INPUT', /^payload: /],
    ['payload is an array', W, {}, wa([text()]), 'INVALID_INPUT', /^payload: /],
    ['payload is null', W, {}, wa(null), 'INVALID_INPUT', /^payload: /],
    ['to is an object', W, {}, wa(text(), { to: { number: TO } }), 'INVALID_INPUT', /^to: /],
    ['from is an object', W, {}, wa(text(), { from: { number: FROM } }), 'INVALID_INPUT', /^from: /],
    ['to is a boolean', W, {}, wa(text(), { to: true }), 'INVALID_INPUT', /^to: /],
    ['type is a number', W, {}, wa({ type: 5, text: { message: 'x' } }), 'INVALID_INPUT', /^type: /],
    // ---- missing fields ----
    ['from missing', W, {}, wa(text(), { from: undefined }), 'INVALID_INPUT', /^from: .*required/],
    ['to missing everywhere', W, {}, wa(text(), { to: undefined }), 'INVALID_INPUT', /^to: .*required/],
    ['type missing', W, {}, wa({ text: { message: 'x' } }), 'INVALID_INPUT', /^type: .*required/],
    ['text message empty', W, {}, wa({ type: 'text', text: { message: '' } }), 'INVALID_INPUT', /^text\.message: .*required/],
    ['text part missing', W, {}, wa({ type: 'text' }), 'INVALID_INPUT', /^text\.message: .*required/],
    // ---- numbers with letters, lists ----
    ['to with letters', W, {}, wa(text(), { to: '91981234abcd' }), 'INVALID_INPUT', /^to: /],
    ['from with letters', W, {}, wa(text(), { from: '91800000000x' }), 'INVALID_INPUT', /^from: /],
    ['to with a letter among several', W, {}, wa(text(), { to: `${TO},91981234567O` }), 'INVALID_INPUT', /^to\[1\]: /],
    ['to is an empty array', W, {}, wa(text(), { to: [] }), 'INVALID_INPUT', /^to: .*empty/],
    ['to has 1001 recipients', W, {}, wa(text(), { to: Array.from({ length: 1001 }, (_, i) => String(919800000000 + i)) }), 'INVALID_INPUT', /^to: .*1001/],
    ['to holds an object', W, {}, wa(text(), { to: [{ n: TO }] }), 'INVALID_INPUT', /^to\[0\]: /],
    ['to holds a negative number', W, {}, wa(text(), { to: [-919812345678] }), 'INVALID_INPUT', /^to\[0\]: /],
    // ---- prototype pollution keys ----
    ['__proto__ in payload (JSON.parse)', W, {}, wa(JSON.parse('{"type":"text","text":{"message":"x"},"__proto__":{"polluted":1}}')), 'INVALID_INPUT', /^payload\.__proto__: /],
    ['constructor in text (JSON.parse)', W, {}, wa(JSON.parse('{"type":"text","text":{"message":"x","constructor":{"prototype":{"polluted":1}}}}')), 'INVALID_INPUT', /^payload\.text\.constructor: /],
    ['prototype in template', W, {}, wa({ type: 'template', template: { template_name: 't', prototype: {} } }), 'INVALID_INPUT', /^payload\.template\.prototype: /],
    ['__proto__ deep in contacts (JSON.parse)', W, {}, wa(JSON.parse('{"type":"contacts","contacts":[{"name":{"__proto__":{"x":1}}}]}')), 'INVALID_INPUT', /^payload\.contacts\[0\]\.name\.__proto__: /],
    // ---- NaN / Infinity / ranges ----
    ['latitude NaN', W, {}, wa({ type: 'location', location: { latitude: NaN, longitude: 77 } }), 'INVALID_INPUT', /location\.latitude: /],
    ['longitude Infinity', W, {}, wa({ type: 'location', location: { latitude: 12, longitude: Infinity } }), 'INVALID_INPUT', /location\.longitude: /],
    ['latitude 91', W, {}, wa({ type: 'location', location: { latitude: 91, longitude: 77 } }), 'INVALID_INPUT', /^location\.latitude: .*between/],
    ['latitude with letters', W, {}, wa({ type: 'location', location: { latitude: '12.9x', longitude: 77 } }), 'INVALID_INPUT', /^location\.latitude: /],
    ['latitude missing (E616)', W, {}, wa({ type: 'location', location: { longitude: 77 } }), 'E616', /^location\.latitude: /],
    ['longitude missing (E617)', W, {}, wa({ type: 'location', location: { latitude: 12 } }), 'E617', /^location\.longitude: /],
    // ---- strings over limits ----
    ['text of 4097 characters', W, {}, wa({ type: 'text', text: { message: 'x'.repeat(4097) } }), 'INVALID_INPUT', /^text\.message: .*4097/],
    ['text payload string of 4097 emoji', W, {}, wa('😀'.repeat(4097)), 'INVALID_INPUT', /^text\.message: .*4097/],
    ['image caption of 1025 characters', W, {}, wa({ type: 'image', image: { caption: 'c'.repeat(1025) } }, { file: Buffer.from('x'), filename: 'a.png' }), 'INVALID_INPUT', /^image\.caption: /],
    ['callback URL of 2049 characters', W, {}, wa(text({ callback: `https://example.test/${'a'.repeat(2049 - 21)}` })), 'INVALID_INPUT', /^callback: .*2049/],
    ['filename of 256 characters', W, {}, doc({ file: Buffer.from('x'), filename: `${'f'.repeat(252)}.pdf` }), 'INVALID_INPUT', /^filename: /],
    // ---- bad URLs ----
    ['callback ftp:', W, {}, wa(text({ callback: 'ftp://example.test/cb' })), 'INVALID_INPUT', /^callback: .*ftp:/],
    ['callback javascript:', W, {}, wa(text({ callback: 'javascript:alert(1)' })), 'INVALID_INPUT', /^callback: .*javascript:/],
    ['callback not a URL', W, {}, wa(text({ callback: 'not a url' })), 'INVALID_INPUT', /^callback: /],
    // ---- template ----
    ['template without name (E603)', W, {}, wa({ type: 'template', template: { namespace: 'ns' } }), 'E603', /^template\.template_name: /],
    ['template missing (E603)', W, {}, wa({ type: 'template' }), 'E603', /^template\.template_name: /],
    ['template ttl 86399', W, {}, wa({ type: 'template', template: { template_name: 't', ttl: 86399 } }), 'INVALID_INPUT', /^template\.ttl: .*between/],
    ['template ttl 2592001', W, {}, wa({ type: 'template', template: { template_name: 't', ttl: '2592001' } }), 'INVALID_INPUT', /^template\.ttl: .*between/],
    ['template ttl with letters', W, {}, wa({ type: 'template', template: { template_name: 't', ttl: '1 day' } }), 'INVALID_INPUT', /^template\.ttl: /],
    ['template params not an array', W, {}, wa({ type: 'template', template: { template_name: 't', params: 'a,b' } }), 'INVALID_INPUT', /^template\.params: /],
    ['template bad lang_code', W, {}, wa({ type: 'template', template: { template_name: 't', lang_code: 'english' } }), 'INVALID_INPUT', /^template\.lang_code: /],
    ['template bad policy', W, {}, wa({ type: 'template', template: { template_name: 't', policy: 'random' } }), 'INVALID_INPUT', /^template\.policy: /],
    ['ttl on a text message', W, {}, wa(text({ ttl: '86400' })), 'INVALID_INPUT', /^ttl: /],
    ['template part on a text message', W, {}, wa(text({ template: { template_name: 't' } })), 'INVALID_INPUT', /^template: /],
    // ---- type specifics ----
    ['unknown type', W, {}, wa({ type: 'video', video: {} }), 'INVALID_INPUT', /^type: .*video/],
    ['preview_url on image', W, {}, wa({ type: 'image', preview_url: true }, { file: Buffer.from('x'), filename: 'a.png' }), 'INVALID_INPUT', /^preview_url: .*image/],
    ['preview_url not a boolean', W, {}, wa(text({ preview_url: 'yes' })), 'INVALID_INPUT', /^preview_url: /],
    ['audio part a string', W, {}, wa({ type: 'audio', audio: 'loud' }, { file: Buffer.from('x'), filename: 'a.mp3' }), 'INVALID_INPUT', /^audio: /],
    ['contacts empty', W, {}, wa({ type: 'contacts', contacts: [] }), 'INVALID_INPUT', /^contacts: /],
    ['contacts 101', W, {}, wa({ type: 'contacts', contacts: Array.from({ length: 101 }, () => ({})) }), 'INVALID_INPUT', /^contacts: .*101/],
    ['contact bad birthday', W, {}, wa({ type: 'contacts', contacts: [{ birthday: '31/12/1990' }] }), 'INVALID_INPUT', /^contacts\[0\]\.birthday: /],
    ['contact bad e-mail', W, {}, wa({ type: 'contacts', contacts: [{ emails: [{ email: 'not-an-address', type: 'HOME' }] }] }), 'INVALID_INPUT', /^contacts\[0\]\.emails\[0\]\.email: /],
    ['payload nested 20 deep', W, {}, wa(text({ extra: JSON.parse(`${'{"a":'.repeat(20)}1${'}'.repeat(20)}`) })), 'INVALID_INPUT', /^payload\.extra.*nested too deeply/],
    // ---- files ----
    ['image without a file', W, {}, wa({ type: 'image' }), 'INVALID_INPUT', /^file: .*required/],
    ['file path does not exist', W, {}, () => doc({ file: path.join(tmp.dir, 'missing.pdf') }), 'INVALID_INPUT', /^file: .*ENOENT/, { hidden: tmp.dir }],
    ['file path is a directory', W, {}, () => doc({ file: tmp.subdir }), 'INVALID_INPUT', /^file: .*not a file/, { hidden: tmp.dir }],
    ['file path is a directory (trailing slash)', W, {}, () => doc({ file: `${tmp.subdir}/` }), 'INVALID_INPUT', /^file: .*not a file/, { hidden: tmp.dir }],
    ['file is a number', W, {}, doc({ file: 12345 }), 'INVALID_INPUT', /^file: .*12345/],
    ['file is a plain object', W, {}, doc({ file: { data: [1, 2, 3] } }), 'INVALID_INPUT', /^file: .*an object/],
    ['file is an array', W, {}, doc({ file: [1, 2, 3] }), 'INVALID_INPUT', /^file: .*an array/],
    ['file is a boolean', W, {}, doc({ file: true }), 'INVALID_INPUT', /^file: .*boolean/],
    ['Buffer without filename', W, {}, doc({ file: Buffer.from('%PDF'), filename: undefined }), 'INVALID_INPUT', /^filename: .*required/],
    ['Buffer with an .exe name', W, {}, doc({ file: Buffer.from('MZ'), filename: 'a.exe' }), 'INVALID_INPUT', /^filename: .*a\.exe/],
    ['image file named .pdf', W, {}, wa({ type: 'image' }, { file: Buffer.from('x'), filename: 'a.pdf' }), 'INVALID_INPUT', /^filename: /],
    ['file path over 64 MB (E504)', W, {}, () => doc({ file: tmp.big }), 'E504', /^file: .*67108865/],
    ['Buffer over 64 MB (E504)', W, {}, () => doc({ file: Buffer.alloc(MB64 + 1) }), 'E504', /^file: /],
    // ---- whatsapp TypedInput settings ----
    ['setting to: str with letters', W, { to: '91abc', toType: 'str' }, wa(text()), 'INVALID_INPUT', /^to: /],
    ['setting from: num with letters', W, { from: 'abc', fromType: 'num' }, wa(text()), 'INVALID_INPUT', /^from: /],
    ['setting callback: str ftp:', W, { callback: 'ftp://x.test/', callbackType: 'str' }, wa(text()), 'INVALID_INPUT', /^callback: /],
    ['setting from: msg property holding an object', W, { from: 'sender', fromType: 'msg' }, wa(text(), { sender: { n: 1 } }), 'INVALID_INPUT', /^from: /],

    // ---- kaleyra-inbox ----
    ['limit 0', I, {}, { payload: { limit: 0 } }, 'INVALID_INPUT', /^limit: .*between/],
    ['limit NaN', I, {}, { payload: { limit: NaN } }, 'INVALID_INPUT', /^limit: /],
    ['limit Infinity', I, {}, { payload: { limit: Infinity } }, 'INVALID_INPUT', /^limit: /],
    ['limit 1001', I, {}, { payload: { limit: 1001 } }, 'INVALID_INPUT', /^limit: .*between/],
    ['limit with letters', I, {}, { payload: { limit: '10abc' } }, 'INVALID_INPUT', /^limit: /],
    ['limit an array', I, {}, { payload: { limit: [10] } }, 'INVALID_INPUT', /^limit: /],
    ['page 0', I, {}, { payload: { page: 0 } }, 'INVALID_INPUT', /^page: .*between/],
    ['page -1', I, {}, { payload: { page: -1 } }, 'INVALID_INPUT', /^page: /],
    ['page 1.5', I, {}, { payload: { page: 1.5 } }, 'INVALID_INPUT', /^page: /],
    ['keyword of 161 characters', I, {}, { payload: { keyword: 'k'.repeat(161) } }, 'INVALID_INPUT', /^keyword: .*161/],
    ['keyword an object', I, {}, { payload: { keyword: { k: 1 } } }, 'INVALID_INPUT', /^keyword: /],
    ['fromdate an invalid Date', I, {}, { payload: { fromdate: new Date('not a date') } }, 'INVALID_INPUT', /^fromdate: /],
    ['fromdate an object', I, {}, { payload: { fromdate: { y: 2024 } } }, 'INVALID_INPUT', /^fromdate: /],
    ['fromdate negative epoch', I, {}, { payload: { fromdate: -1 } }, 'INVALID_INPUT', /^fromdate: /],
    ['fromdate NaN', I, {}, { payload: { fromdate: NaN } }, 'INVALID_INPUT', /^fromdate: /],
    ['todate a fraction', I, {}, { payload: { todate: 20261101.5 } }, 'INVALID_INPUT', /^todate: /],
    ['fromdate a string of 65 characters', I, {}, { payload: { fromdate: '2'.repeat(65) } }, 'INVALID_INPUT', /^fromdate: /],
    ['todate before fromdate', I, {}, { payload: { fromdate: new Date('2024-02-01T00:00:00Z'), todate: new Date('2024-01-01T00:00:00Z') } }, 'INVALID_INPUT', /^todate: .*before/],
    ['number with letters', I, {}, { payload: { number: '92200abc' } }, 'INVALID_INPUT', /^number: /],
    ['mobile with letters', I, {}, { payload: { mobile: '9198123x5678' } }, 'INVALID_INPUT', /^mobile: /],
    ['mobile an object', I, {}, { payload: { mobile: { n: 1 } } }, 'INVALID_INPUT', /^mobile: /],
    ['setting limit: num 0', I, { limit: '0', limitType: 'num' }, { payload: {} }, 'INVALID_INPUT', /^limit: /],
    ['setting keyword: json unparsable', I, { keyword: '{bad', keywordType: 'json' }, { payload: {} }, 'INVALID_INPUT', /^keyword: /],
    ['setting page: num with letters', I, { page: 'two', pageType: 'num' }, { payload: {} }, 'INVALID_INPUT', /^page: /],

    // ---- kaleyra-call-status ----
    ['id missing', C, {}, { payload: {} }, 'INVALID_INPUT', /^id: .*required/],
    ['payload a boolean', C, {}, { payload: true }, 'INVALID_INPUT', /^id: /],
    ['id with whitespace', C, {}, { payload: { id: '123 456' } }, 'INVALID_INPUT', /^id: .*whitespace/],
    ['id with a slash', C, {}, { payload: '123/../456' }, 'INVALID_INPUT', /^id: /],
    ['id of 101 characters', C, {}, { payload: '1'.repeat(101) }, 'INVALID_INPUT', /^id: .*101/],
    ['id an object', C, {}, { payload: { id: { x: 1 } } }, 'INVALID_INPUT', /^id: /],
    ['id an array', C, {}, { payload: { id: [1, 2] } }, 'INVALID_INPUT', /^id: /],
    ['id negative', C, {}, { payload: -5 }, 'INVALID_INPUT', /^id: /],
    ['id a fraction', C, {}, { payload: 1.5 }, 'INVALID_INPUT', /^id: /],
    ['id NaN', C, {}, { payload: NaN }, 'INVALID_INPUT', /^id: /],
    ['mobile with +', C, {}, { payload: { id: '123', mobile: '+919812345678' } }, 'INVALID_INPUT', /^mobile: /],
    ['mobile with letters', C, {}, { payload: { id: '123', mobile: '98abc12345' } }, 'INVALID_INPUT', /^mobile: /],
    ['id only on the prototype (JSON.parse __proto__)', C, {}, { payload: JSON.parse('{"__proto__":{"id":"123"}}') }, 'INVALID_INPUT', /^id: .*required/],
    ['bad method', C, { method: 'voice.bogus' }, { payload: '123' }, 'INVALID_INPUT', /^method: .*voice\.bogus/],
    ['setting callId: str with a space', C, { callId: 'has space', callIdType: 'str' }, { payload: '123' }, 'INVALID_INPUT', /^id: /],

    // ---- kaleyra-click2call ----
    ['nothing given', D, {}, { payload: {} }, 'INVALID_INPUT', /^caller: .*required/],
    ['caller of 9 digits', D, {}, c2c({ caller: '981234567' }), 'INVALID_INPUT', /^caller: .*10-digit/],
    ['caller with letters', D, {}, c2c({ caller: '98123abcde' }), 'INVALID_INPUT', /^caller: /],
    ['caller 11 numbers', D, {}, c2c({ caller: Array.from({ length: 11 }, (_, i) => String(9812345600 + i)) }), 'INVALID_INPUT', /^caller: .*11/],
    ['caller an object', D, {}, c2c({ caller: { n: '9812345678' } }), 'INVALID_INPUT', /^caller: /],
    ['receiver missing (E423)', D, {}, { payload: { caller: '9812345678' } }, 'E423', /^receiver: /],
    ['receiver an empty array (E423)', D, {}, c2c({ receiver: [] }), 'E423', /^receiver: /],
    ['receiver only on the prototype (E423)', D, {}, { payload: JSON.parse('{"caller":"9812345678","__proto__":{"receiver":"9812345679"}}') }, 'E423', /^receiver: /],
    ["receiver 'ivr:' with no id", D, {}, c2c({ receiver: 'ivr:' }), 'INVALID_INPUT', /^receiver: .*ivr/],
    ['receiver ivr id with a space', D, {}, c2c({ receiver: 'ivr:my ivr' }), 'INVALID_INPUT', /^receiver: /],
    ['receiver ivr combined with a number', D, {}, c2c({ receiver: 'ivr:1^9812345679' }), 'INVALID_INPUT', /^receiver: .*combined/],
    ['retry 3', D, {}, c2c({ retry: 3 }), 'INVALID_INPUT', /^retry: .*between 0 and 2/],
    ['retry -1', D, {}, c2c({ retry: -1 }), 'INVALID_INPUT', /^retry: /],
    ['retry NaN', D, {}, c2c({ retry: NaN }), 'INVALID_INPUT', /^retry: /],
    ['retry Infinity', D, {}, c2c({ retry: Infinity }), 'INVALID_INPUT', /^retry: /],
    ['retry with letters', D, {}, c2c({ retry: '1x' }), 'INVALID_INPUT', /^retry: /],
    ['delay -1', D, {}, c2c({ delay: -1 }), 'INVALID_INPUT', /^delay: /],
    ['delay over a day', D, {}, c2c({ delay: 86401 }), 'INVALID_INPUT', /^delay: /],
    ['delay a fraction', D, {}, c2c({ delay: 1.5 }), 'INVALID_INPUT', /^delay: /],
    ['caller_id of 9 digits', D, {}, c2c({ caller_id: '981234567' }), 'INVALID_INPUT', /^caller_id: /],
    ['callerId of 11 digits', D, {}, c2c({ callerId: '98123456789' }), 'INVALID_INPUT', /^callerId: /],
    ['caller_id and callerId that differ', D, {}, c2c({ caller_id: '9812345678', callerId: '9812345679' }), 'INVALID_INPUT', /^caller_id: and callerId are both given and differ/],
    ['custom of 51 characters', D, {}, c2c({ custom: 'c'.repeat(51) }), 'INVALID_INPUT', /^custom: .*51/],
    ['custom not alphanumeric', D, {}, c2c({ custom: 'order-42' }), 'INVALID_INPUT', /^custom: /],
    ['meta of 2001 characters', D, {}, c2c({ meta: 'm'.repeat(2001) }), 'INVALID_INPUT', /^meta: .*2001/],
    ['meta a number', D, {}, c2c({ meta: 5 }), 'INVALID_INPUT', /^meta: /],
    ['meta circular', D, {}, c2c({ meta: circular }), 'INVALID_INPUT', /^meta: .*JSON/],
    ['callback ftp:', D, {}, c2c({ callback: 'ftp://example.test/' }), 'INVALID_INPUT', /^callback: /],
    ['callback javascript:', D, {}, c2c({ callback: 'javascript:alert(1)' }), 'INVALID_INPUT', /^callback: /],
    ['callback of 2049 characters', D, {}, c2c({ callback: `http://example.test/${'a'.repeat(2049 - 20)}` }), 'INVALID_INPUT', /^callback: .*2049/],
    ['setting retry: num 5', D, { retry: '5', retryType: 'num' }, c2c(), 'INVALID_INPUT', /^retry: .*5/],
    ['setting caller: str of 5 digits', D, { caller: '12345', callerType: 'str' }, c2c(), 'INVALID_INPUT', /^caller: /],
    ['setting meta: json unparsable', D, { meta: '{bad', metaType: 'json' }, c2c(), 'INVALID_INPUT', /^meta: /],
    ['setting delay: env not a number', D, { delay: 'KALEYRA_BAD_INPUT_DELAY', delayType: 'env' }, c2c(), 'INVALID_INPUT', /^delay: /],
    ['setting receiver: jsonata syntax error', D, { receiver: '$$$(', receiverType: 'jsonata' }, c2c(), 'INVALID_INPUT', /^receiver: /],
    ['setting custom: msg property of a bad path', D, { custom: 'a..b[', customType: 'msg' }, c2c(), 'INVALID_INPUT', /^custom: /],
  ];
}

describe('bad input corpus: the four action nodes refuse it in the runtime, sending nothing', function () {
  this.timeout(600_000); // CPU-bound: a busy machine needs several times a quiet one's minute
  let server;
  let urls;
  const tmp = {};

  before(async () => {
    server = new Recorder();
    const base = await server.start();
    urls = { messagingUrl: `${base}/m`, vmnUrl: `${base}/vmn`, obdUrl: `${base}/obd`, voiceUrl: `${base}/voice` };
    tmp.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kaleyra-private-'));
    tmp.subdir = path.join(tmp.dir, 'invoices.pdf');
    fs.mkdirSync(tmp.subdir);
    tmp.big = path.join(tmp.dir, 'big.pdf');
    fs.writeFileSync(tmp.big, '');
    fs.truncateSync(tmp.big, MB64 + 1); // sparse: no 64 MB written
    process.env.KALEYRA_BAD_INPUT_DELAY = 'soon';
  });
  after(async () => {
    delete process.env.KALEYRA_BAD_INPUT_DELAY;
    fs.rmSync(tmp.dir, { recursive: true, force: true });
    await server.stop();
  });
  afterEach(() => helper.unload());

  it('every case reaches Catch with its code and field; no output, no request', async function () {
    const cases = corpus(tmp);
    assert.ok(cases.length >= 50);
    // One flow per (node type, settings); its cases run one after the other.
    const groups = new Map();
    cases.forEach((c, i) => {
      const key = `${c[1]} ${JSON.stringify(c[2])}`;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(i);
    });
    const failures = [];
    for (const indices of groups.values()) {
      const [, type, props] = cases[indices[0]];
      const t = await loadNode(type, props, { config: urls });
      for (const i of indices) {
        const [label, , , given, code, field, opts = {}] = cases[i];
        const msg = typeof given === 'function' ? given() : given;
        msg.caseNo = i;
        const before = t.errors.length;
        const sent = server.requests.length;
        let error;
        try {
          ({ error } = await t.run(msg));
        } catch (err) {
          failures.push(`#${i} ${type} ${label}: ${err.message}`);
          continue;
        }
        const problems = [];
        if (t.outputs.length > 0) problems.push(`an output was sent: ${JSON.stringify(t.outputs[0].payload).slice(0, 100)}`);
        if (t.errors.length !== before + 1) problems.push(`${t.errors.length - before} Catch messages`);
        if (!error || error.caseNo !== i) problems.push('the Catch message is not this msg');
        else {
          if (error.error.code !== code) problems.push(`code ${error.error.code}, expected ${code}`);
          // Node-RED writes the error as err.toString(): "InputError [CODE]: <field>: <what is wrong>".
          const text = error.error.message.replace(/^\w*Error \[\w+\]: /, '');
          if (!field.test(text)) problems.push(`message "${error.error.message.slice(0, 160)}" does not match ${field}`);
          if (opts.hidden) {
            const shown = JSON.stringify(error.error) + logText();
            if (shown.includes(opts.hidden)) problems.push('the error reveals the directory path');
          }
        }
        if (server.requests.length > sent) problems.push(`a request was sent: ${server.last.method} ${server.last.path}`);
        if (problems.length > 0) failures.push(`#${i} ${type} ${label}: ${problems.join('; ')}`);
        t.outputs.length = 0;
      }
      await helper.unload();
    }
    console.log(`      bad-input corpus: ${cases.length} cases over ${groups.size} flows`);
    assert.deepEqual(failures, []);
    assert.equal(server.requests.length, 0, 'the service received no request across the whole corpus');
    assert.equal({}.polluted, undefined, 'no prototype was polluted');
  });
});
