'use strict';
// The service simulator over real HTTP on 127.0.0.1 (spec/service-api.md, interfaces A–D).
const assert = require('node:assert/strict');
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');
const { createHash } = require('node:crypto');
const { spawn } = require('node:child_process');
const { PassThrough } = require('node:stream');
const { request } = require('undici');
const FormData = require('form-data');
const { XMLParser } = require('fast-xml-parser');
const { Simulator, DEMO_KEY } = require('../dist/simulator');

const KEY = DEMO_KEY;
const xmlParser = new XMLParser({ parseTagValue: false });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function get(base, suffix, params) {
  const res = await request(`${base}${suffix}?${new URLSearchParams(params)}`);
  return { statusCode: res.statusCode, headers: res.headers, text: await res.body.text() };
}
async function getJson(base, suffix, params) {
  const res = await get(base, suffix, { format: 'json', ...params });
  assert.equal(res.statusCode, 200);
  return JSON.parse(res.text);
}
/**
 * Multipart POST built with form-data, as the client sends it. Piped through a PassThrough: handed to
 * undici directly, form-data's legacy stream leaves 'drain'/'error' listeners on the keep-alive socket.
 */
async function postForm(url, fields, file) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  if (file) form.append('file', file.data, { filename: file.filename });
  const headers = { ...form.getHeaders(), 'content-length': String(form.getLengthSync()) }; // before piping consumes the parts
  const res = await request(url, { method: 'POST', body: form.pipe(new PassThrough()), headers });
  return { statusCode: res.statusCode, text: await res.body.text() };
}
/** A small server standing in for the flow's callback endpoints; records every hit's raw URL. */
async function startReceiver() {
  const hits = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    hits.push({ method: req.method, url: req.url, path: u.pathname, query: Object.fromEntries(u.searchParams), at: Date.now() });
    res.end('ok');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    hits,
    /** Waits for `count` hits; the deadline is a safety net on a busy machine, not a timing check. */
    async until(count, ms = 60_000) {
      const end = Date.now() + ms;
      while (hits.length < count) {
        if (Date.now() > end) throw new Error(`expected ${count} callbacks, got ${hits.length}`);
        await sleep(10);
      }
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

describe('simulator', function () {
  let sim;
  let urls;
  const A = () => `${urls.messagingUrl}/api/v4/`;
  const send = (fields, file) => postForm(A(), { method: 'wa', api_key: KEY, from: '+919900000001', ...fields }, file);
  const sendJson = async (body, extra = {}, file) => {
    const res = await send({ body, ...extra }, file);
    assert.equal(res.statusCode, 200);
    return JSON.parse(res.text);
  };
  const textBody = (to = '919800000001', extra = {}) => ({ to, type: 'text', text: { message: 'hello' }, ...extra });

  before(async () => {
    sim = new Simulator({ keys: { [KEY]: 'active', 'susp-key': 'suspended', 'poor-key': 'nocredit' } });
    urls = await sim.start();
  });
  after(() => sim.stop());
  beforeEach(() => {
    sim.clear();
    sim.setFaults('all', {});
    sim.vmnTriggerUrl = undefined;
  });

  describe('lifecycle', () => {
    it('serves the four interfaces under distinct base URLs on 127.0.0.1', () => {
      const bases = Object.values(urls);
      assert.equal(new Set(bases).size, 4);
      for (const b of bases) assert.match(b, /^http:\/\/127\.0\.0\.1:\d+\/(messaging|vmn|obd|voice)$/);
    });

    it('stop() closes the server and its sockets, and urls then throws', async () => {
      const own = new Simulator();
      const { vmnUrl } = await own.start();
      assert.equal((await getJson(vmnUrl, '/v1/', { method: 'inbox', api_key: KEY })).status, '200');
      await own.stop();
      assert.throws(() => own.urls, /not started/);
      const port = Number(new URL(vmnUrl).port);
      await assert.rejects(
        new Promise((resolve, reject) => net.connect(port, '127.0.0.1').once('connect', resolve).once('error', reject)),
        { code: 'ECONNREFUSED' },
      );
    });

    it('stop() leaves no handle behind: a process with pending callbacks, stalls and timers exits by itself', async function () {
      this.timeout(90_000);
      const script = `
        const { Simulator } = require(${JSON.stringify(path.resolve(__dirname, '../dist/simulator'))});
        const { request } = require('undici');
        (async () => {
          const sim = new Simulator({ deliveryDelaysMs: [300000, 300000, 300000], vmnTriggerUrl: 'http://127.0.0.1:9/vmn' });
          const u = await sim.start();
          sim.setFaults('vmn', { stallRate: 1, stallMs: 600000 });
          const body = JSON.stringify({ to: '919800000001', type: 'text', text: { message: 'x' }, callback: 'http://127.0.0.1:9/cb' });
          await request(u.messagingUrl + '/api/v4/?' + new URLSearchParams({ method: 'wa', api_key: 'simulatorkey', from: '1', body })).then((r) => r.body.text());
          await request(u.voiceUrl + '/v1/?' + new URLSearchParams({ method: 'dial.click2call', api_key: 'simulatorkey', caller: '9876543210', receiver: '9876543219', delay: '100', callback: 'http://127.0.0.1:9/c' })).then((r) => r.body.text());
          const stalled = request(u.vmnUrl + '/v1/?method=inbox&api_key=simulatorkey').catch(() => 'reset');
          sim.injectSms({ from: '1', message: 'x' });
          await new Promise((r) => setTimeout(r, 100));
          await sim.stop();
          console.log('stopped', await stalled);
        })();`;
      const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      // Its timers run for minutes: a process still alive after 60 s was kept alive by one (a busy machine
      // needs seconds to start and stop it, not a minute).
      const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const [code, signal] = await new Promise((r) => child.once('exit', (c, s) => r([c, s])));
      clearTimeout(killer);
      assert.equal(signal, null, 'the process had to be killed: something kept it alive');
      assert.equal(code, 0);
      assert.match(out, /stopped reset/);
    });

    it('the CLI prints the four URLs and the demo key, serves, and stops on SIGTERM', async () => {
      const child = spawn(process.execPath, [path.resolve(__dirname, '../dist/simulator/cli.js'), '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      await new Promise((resolve, reject) => {
        child.stdout.on('data', (d) => {
          out += d;
          if (/voiceUrl.*\n/.test(out) && /add call/.test(out)) resolve();
        });
        child.once('exit', () => reject(new Error(`exited early: ${out}`)));
      });
      for (const name of ['messagingUrl', 'vmnUrl', 'obdUrl', 'voiceUrl']) assert.match(out, new RegExp(`${name}\\s+http://127\\.0\\.0\\.1:\\d+/`));
      assert.match(out, /api key\s+simulatorkey/);
      const voiceUrl = /voiceUrl\s+(\S+)/.exec(out)[1];
      const res = await getJson(voiceUrl, '/v1/', { method: 'dial.click2call', api_key: KEY, caller: '9876543210', receiver: '9876543219' });
      assert.equal(res.status, '200');
      const exited = new Promise((r) => child.once('exit', (c) => r(c)));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    });
  });

  describe('A: send message', () => {
    it('accepts a text message: JSON envelope with one entry per recipient', async () => {
      const res = await sendJson(textBody());
      assert.deepEqual(Object.keys(res), ['status', 'message', 'code', 'data']);
      assert.equal(res.status, 'OK');
      assert.equal(res.message, 'Message Sent Successfully');
      assert.equal(res.code, '200');
      assert.equal(res.data.length, 1);
      const [entry] = res.data;
      assert.match(entry.id, /^[A-Za-z0-9]+$/);
      assert.deepEqual({ ...entry, id: 'x' }, { id: 'x', customid: '', customid1: '', customid2: '', mobile: '919800000001', status: 'AWAITED-DLR' });
    });

    it('generates one id per recipient, accepting numbers as strings or bare JSON numbers', async () => {
      const res = await sendJson(textBody(['+919800000001', 919800000002, '919800000003']));
      assert.deepEqual(res.data.map((d) => d.mobile), ['+919800000001', '919800000002', '919800000003']);
      assert.equal(new Set(res.data.map((d) => d.id)).size, 3);
      assert.deepEqual(sim.messages[0].recipients, res.data.map(({ id, mobile }) => ({ id, mobile })));
    });

    it('answers in XML (format case-insensitive): <api> with repeated <entry>', async () => {
      const res = await send({ body: textBody(['919800000001', '919800000002']), format: 'XML' });
      assert.match(res.text, /^<\?xml/);
      const { api } = xmlParser.parse(res.text);
      assert.equal(api.status, 'OK');
      assert.equal(api.message, 'Message Sent Successfully');
      assert.equal(api.data.entry.length, 2);
      assert.equal(api.data.entry[1].mobile, '919800000002');
      assert.match(api.data.entry[0].id, /^[A-Za-z0-9]+$/);
    });

    it('answers errors in XML too, escaping text', async () => {
      const res = await send({ body: '{not json', format: 'xml' });
      const { api } = xmlParser.parse(res.text);
      assert.equal(api.status, 'E400');
      assert.match(api.message, /body/);
    });

    it('accepts the GET query-string form', async () => {
      const res = await getJson(urls.messagingUrl, '/api/v4/', { method: 'wa', api_key: KEY, from: '919900000001', body: JSON.stringify(textBody()) });
      assert.equal(res.status, 'OK');
      assert.equal(sim.requests.at(-1).method, 'GET');
    });

    it('rejects a wrong method with an error envelope', async () => {
      const res = await sendJson(textBody(), { method: 'sms' });
      assert.deepEqual(res, { status: 'E400', message: 'method must be wa' });
    });

    it('A401 "Api Key not found" for a missing or unknown key, never echoing the key', async () => {
      for (const api_key of ['', 'who-knows-this-key']) {
        const res = await send({ api_key, body: textBody() });
        assert.deepEqual(JSON.parse(res.text), { status: 'A401', message: 'Api Key not found' });
        assert.ok(!res.text.includes('who-knows'));
      }
    });

    it('A404 for a suspended account and A402 "Insufficient credits" for one without credit', async () => {
      assert.equal((await sendJson(textBody(), { api_key: 'susp-key' })).status, 'A404');
      assert.deepEqual(await sendJson(textBody(), { api_key: 'poor-key' }), { status: 'A402', message: 'Insufficient credits' });
    });

    it('E601 "Missing message" for a text message without text; E400 naming the field over 4096 characters', async () => {
      assert.deepEqual(await sendJson({ to: '919800000001', type: 'text', text: {} }), { status: 'E601', message: 'Missing message' });
      const ok = await sendJson(textBody('919800000001', { text: { message: '€'.repeat(4096) } }));
      assert.equal(ok.status, 'OK');
      const long = await sendJson(textBody('919800000001', { text: { message: 'x'.repeat(4097) } }));
      assert.equal(long.status, 'E400');
      assert.match(long.message, /body\.text\.message/);
    });

    it('E400 naming the field for a bad from, body, type, to or callback', async () => {
      const cases = [
        [{ from: 'abc', body: textBody() }, /from/],
        [{ body: '{not json' }, /body/],
        [{ body: '[1]' }, /body/],
        [{ body: { to: '919800000001', type: 'fax' } }, /body\.type/],
        [{ body: { type: 'text', text: { message: 'x' } } }, /body\.to/],
        [{ body: textBody('91-98') }, /body\.to/],
        [{ body: textBody('919800000001', { callback: 'ftp://x' }) }, /body\.callback/],
        [{ body: textBody('919800000001', { preview_url: 'yes' }) }, /preview_url/],
      ];
      for (const [fields, pattern] of cases) {
        const res = JSON.parse((await send(fields)).text);
        assert.equal(res.status, 'E400', JSON.stringify(fields));
        assert.match(res.message, pattern);
      }
    });

    it('E400 for a multipart body that cannot be parsed', async () => {
      const res = await request(`${A()}?api_key=${KEY}&method=wa`, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=xyz' }, body: 'garbage' });
      assert.deepEqual(await res.body.json(), { status: 'E400', message: 'the multipart body could not be parsed' });
    });

    it('E603 for a template without template name; accepts a complete template', async () => {
      const template = { namespace: 'ns', template_name: 'welcome', policy: 'deterministic', lang_code: 'en_US', params: ['a'], ttl: '86400' };
      assert.equal((await sendJson({ to: '919800000001', type: 'template', template: { ...template, template_name: '' } })).status, 'E603');
      assert.equal((await sendJson({ to: '919800000001', type: 'template' })).status, 'E603');
      assert.equal((await sendJson({ to: '919800000001', type: 'template', template })).status, 'OK');
      const ttl = await sendJson({ to: '919800000001', type: 'template', template: { ...template, ttl: '60' } });
      assert.equal(ttl.status, 'E400');
      assert.match(ttl.message, /ttl/);
    });

    it('E616 without latitude, E617 without longitude; location and contacts need `to` as an array', async () => {
      const loc = (location, to = ['919800000001']) => sendJson({ to, type: 'location', location });
      assert.deepEqual(await loc({ longitude: 77.5 }), { status: 'E616', message: 'latitude missing' });
      assert.deepEqual(await loc({ latitude: 12.9 }), { status: 'E617', message: 'longitude missing' });
      assert.equal((await loc({ latitude: '12.9', longitude: 77.5, name: 'HQ' })).status, 'OK');
      assert.equal((await loc({ latitude: 120, longitude: 77.5 })).status, 'E400');
      assert.match((await loc({ latitude: 12.9, longitude: 77.5 }, '919800000001')).message, /body\.to must be an array/);
      const contact = { name: { formatted_name: 'A B' }, phones: [{ phone: '+91 98', type: 'CELL', wa_id: '919800000001' }], emails: [{ email: 'a@b.co', type: 'WORK' }] };
      assert.equal((await sendJson({ to: ['919800000001'], type: 'contacts', contacts: [contact] })).status, 'OK');
      assert.equal((await sendJson({ to: ['919800000001'], type: 'contact', contacts: [contact] })).status, 'OK', 'the parameter table spelling');
      const bad = await sendJson({ to: ['919800000001'], type: 'contacts', contacts: [{ emails: [{ email: 'nope' }] }] });
      assert.equal(bad.status, 'E400');
      assert.match(bad.message, /contacts\[0\]\.emails\[0\]\.email/);
    });

    it('media types need a file with an allowed extension; the request log keeps its name, size and sha256', async () => {
      const png = Buffer.from('89504e470d0a1a0a', 'hex');
      const noFile = await sendJson({ to: '919800000001', type: 'image', image: { caption: 'c' } });
      assert.equal(noFile.status, 'E400');
      assert.match(noFile.message, /file/);
      const gif = await sendJson({ to: '919800000001', type: 'image' }, {}, { data: png, filename: 'x.gif' });
      assert.equal(gif.status, 'E400');
      assert.match(gif.message, /jpg, jpeg, png/);
      assert.equal((await sendJson({ to: '919800000001', type: 'image', image: { caption: 'c' } }, {}, { data: png, filename: 'x.PNG' })).status, 'OK');
      assert.equal((await sendJson({ to: '919800000001', type: 'document' }, {}, { data: png, filename: 'r.pdf' })).status, 'OK');
      assert.equal((await sendJson({ to: '919800000001', type: 'audio', audio: {} }, {}, { data: png, filename: 'v.ogg' })).status, 'OK');
      assert.equal((await sendJson({ to: '919800000001', type: 'audio' }, {}, { data: png, filename: 'v.wav' })).status, 'E400');
      const logged = sim.requests.at(-2).file;
      assert.deepEqual(logged, { filename: 'v.ogg', size: png.length, sha256: createHash('sha256').update(png).digest('hex') });
      assert.deepEqual(sim.messages.at(-1).file, logged);
    });

    it('E504 for a file of 64 MB + 1 byte, parsed or too large to parse', async function () {
      const justOver = await sendJson({ to: '919800000001', type: 'document' }, {}, { data: Buffer.alloc(64 * 1024 * 1024 + 1), filename: 'big.pdf' });
      assert.deepEqual(justOver, { status: 'E504', message: 'file size exceeds 64 MB' });
      const farOver = await sendJson({ to: '919800000001', type: 'document' }, {}, { data: Buffer.alloc(66 * 1024 * 1024), filename: 'bigger.pdf' });
      assert.equal(farOver.status, 'E504');
      assert.equal(sim.messages.length, 0);
    });

    it('keeps no api key in the request log, and logs every request with its fields', async () => {
      await send({ body: textBody() });
      await get(urls.vmnUrl, '/v1/', { method: 'inbox', api_key: KEY });
      assert.equal(sim.requests.length, 2);
      assert.deepEqual(sim.requests.map((r) => [r.endpoint, r.method, r.hasApiKey]), [['messaging', 'POST', true], ['vmn', 'GET', true]]);
      assert.equal(sim.requests[0].fields.from, '+919900000001');
      assert.ok(!JSON.stringify(sim.requests).includes(KEY));
      assert.ok(!('api_key' in sim.requests[1].query));
    });

    it('reports delivery SENT, DELIVERED, READ in order to body.callback, keeping its query; SENT only for the stop pattern', async () => {
      const rcv = await startReceiver();
      try {
        const before = Math.floor(Date.now() / 1000);
        const res = await sendJson(textBody(['919800000001', '919800000000'], { callback: `${rcv.url}/dlr?token=t%2B1` }));
        assert.equal(res.status, 'OK');
        await rcv.until(4);
        await sim.callbacksIdle(); // nothing scheduled or in flight: no more will come
        assert.equal(rcv.hits.length, 4);
        const of = (mobile) => rcv.hits.filter((h) => h.query.mobile === mobile);
        assert.deepEqual(of('919800000001').map((h) => h.query.status), ['SENT', 'DELIVERED', 'READ']);
        assert.deepEqual(of('919800000000').map((h) => h.query.status), ['SENT']);
        for (const hit of rcv.hits) {
          assert.equal(hit.method, 'GET');
          assert.equal(hit.path, '/dlr');
          assert.match(hit.url, /^\/dlr\?token=t%2B1&status=/, 'the existing query stays as it was');
          assert.ok(Number(hit.query.timestamp) >= before && Number(hit.query.timestamp) <= before + 10);
        }
        assert.ok(sim.callbacks.every((c) => c.kind === 'delivery' && c.statusCode === 200));
      } finally {
        await rcv.close();
      }
    });

    it('records a failed delivery callback instead of retrying', async () => {
      const own = new Simulator({ deliveryDelaysMs: [0, 0, 0] });
      const u = await own.start();
      try {
        await postForm(`${u.messagingUrl}/api/v4/`, { method: 'wa', api_key: KEY, from: '1', body: textBody('919800000001', { callback: 'http://127.0.0.1:9/cb' }) });
        await own.callbacksIdle();
        assert.equal(own.callbacks.length, 3);
        assert.ok(own.callbacks.every((c) => c.error && c.statusCode === undefined));
      } finally {
        await own.stop();
      }
    });
  });

  describe('B: VMN inbox', () => {
    const B = (params) => getJson(urls.vmnUrl, '/v1/', { method: 'inbox', api_key: KEY, ...params });
    const at = (iso) => Date.parse(iso) / 1000;
    beforeEach(() => {
      sim.injectSms({ from: '919800000001', message: 'PIZZA large', number: '9220092200', ts: at('2024-01-10T10:00:00Z') });
      sim.injectSms({ from: '919800000002', message: 'pizza small', number: '9220092200', ts: at('2024-01-11T12:30:00Z') });
      sim.injectSms({ from: '919800000001', message: 'burger', number: '9220092201', keyword: 'FOOD', ts: at('2024-01-12T08:00:00Z') });
    });
    const messages = (res) => [].concat(res.data.rows.inbox).map((r) => r.message);

    it('returns every record, newest last, with paging info', async () => {
      const res = await B({});
      assert.equal(res.status, '200');
      assert.equal(res.message, 'OK');
      assert.equal(res.data.total, '3');
      assert.equal(res.data.page, '1');
      assert.deepEqual(messages(res), ['PIZZA large', 'pizza small', 'burger']);
      assert.deepEqual(res.data.rows.inbox[0], {
        recipient: '9220092200', keyword: 'PIZZA', sender: '919800000001', message: 'PIZZA large',
        operator: '', circle: '', response: '', received_time: '2024-01-10 10:00:00',
      });
    });

    it('gives one record as an object and none as an empty array', async () => {
      const one = await B({ number: '9220092201' });
      assert.ok(!Array.isArray(one.data.rows.inbox));
      assert.equal(one.data.rows.inbox.keyword, 'FOOD');
      const none = await B({ mobile: '919811111111' });
      assert.deepEqual(none.data.rows.inbox, []);
      assert.equal(none.data.total, '0');
    });

    it('filters by number, keyword (any case) and mobile (with or without country code)', async () => {
      assert.deepEqual(messages(await B({ keyword: 'pizza' })), ['PIZZA large', 'pizza small']);
      assert.deepEqual(messages(await B({ mobile: '9800000001' })), ['PIZZA large', 'burger']);
      assert.deepEqual(messages(await B({ number: '9220092200', mobile: '+919800000002' })), ['pizza small']);
    });

    it('filters by fromdate/todate in several date formats, todate inclusive', async () => {
      assert.deepEqual(messages(await B({ fromdate: '2024-01-11', todate: '2024-01-11' })), ['pizza small']);
      assert.deepEqual(messages(await B({ fromdate: '2024-01-10 11:00:00' })), ['pizza small', 'burger']);
      assert.deepEqual(messages(await B({ todate: String(at('2024-01-10T10:00:00Z')) })), ['PIZZA large']);
      assert.deepEqual(messages(await B({ fromdate: '12/01/2024' })), ['burger']);
      assert.deepEqual(messages(await B({ fromdate: '2024-01-11T00:00:00Z', todate: '2024-01-12 07:59' })), ['pizza small']);
      const bad = await B({ fromdate: 'someday' });
      assert.equal(bad.status, 'E400');
      assert.match(bad.message, /fromdate/);
    });

    it('pages with limit and page (default limit 50)', async () => {
      for (let i = 0; i < 60; i++) sim.injectSms({ from: '919800000009', message: `m${i}` });
      assert.equal([].concat((await B({})).data.rows.inbox).length, 50);
      const p2 = await B({ limit: '2', page: '2' });
      assert.deepEqual(messages(p2), ['burger', 'm0']);
      assert.equal(p2.data.total, '63');
      assert.equal(p2.data.page, '2');
      assert.deepEqual((await B({ page: '9' })).data.rows.inbox, []);
      assert.equal((await B({ limit: '0' })).status, 'E400');
    });

    it('answers in XML: <api><data><rows> with one <inbox> per record', async () => {
      const res = await get(urls.vmnUrl, '/v1/', { method: 'inbox', api_key: KEY, format: 'xml', keyword: 'PIZZA' });
      const { api } = xmlParser.parse(res.text);
      assert.equal(api.status, '200');
      assert.equal(api.data.rows.inbox.length, 2);
      assert.equal(api.data.rows.inbox[1].received_time, '2024-01-11 12:30:00');
      assert.equal(api.data.total, '2');
    });

    it('answers as a PHP serialized array, string lengths in UTF-8 bytes', async () => {
      sim.injectSms({ from: '919800000003', message: 'héllo', number: '5555' });
      const res = await get(urls.vmnUrl, '/v1/', { method: 'inbox', api_key: KEY, format: 'PHP', number: '5555' });
      assert.ok(res.text.startsWith('a:3:{s:6:"status";s:3:"200";s:7:"message";s:2:"OK";s:4:"data";a:4:{s:4:"rows";a:1:{s:5:"inbox";a:8:{'), res.text);
      assert.ok(res.text.includes('s:9:"recipient";s:4:"5555";'));
      assert.ok(res.text.includes('s:7:"message";s:6:"héllo";'));
      assert.ok(res.text.includes('s:5:"total";s:1:"1";'));
    });

    it('A401 and A404 on the inbox too', async () => {
      assert.equal((await B({ api_key: 'nope' })).status, 'A401');
      assert.equal((await B({ api_key: 'susp-key' })).status, 'A404');
      assert.equal((await B({ api_key: 'poor-key' })).status, '200', 'credit is only checked on sends');
    });

    it('injects SMS over HTTP (JSON and urlencoded) and forwards each to the trigger URL', async () => {
      const rcv = await startReceiver();
      try {
        sim.vmnTriggerUrl = `${rcv.url}/vmn?token=z`;
        const origin = new URL(urls.vmnUrl).origin;
        const json = await request(`${origin}/sim/sms`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from: '+919800000005', message: 'JOIN now & then', number: '9220092200' }) });
        assert.equal(json.statusCode, 200);
        assert.equal((await json.body.json()).data.keyword, 'JOIN');
        const form = await request(`${origin}/sim/sms`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'from=919800000006&message=hi&keyword=HELLO' });
        assert.equal(form.statusCode, 200);
        await form.body.dump();
        await rcv.until(2);
        assert.deepEqual(rcv.hits.map((h) => [h.path, h.query.token, h.query.from, h.query.message]), [
          ['/vmn', 'z', '+919800000005', 'JOIN now & then'],
          ['/vmn', 'z', '919800000006', 'hi'],
        ]);
        assert.ok(Math.abs(Number(rcv.hits[0].query.ts) - Date.now() / 1000) < 10);
        assert.deepEqual(messages(await B({ keyword: 'hello' })), ['hi']);
        const missing = await request(`${origin}/sim/sms`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"from":"1"}' });
        assert.equal(missing.statusCode, 400);
        await missing.body.dump();
      } finally {
        await rcv.close();
      }
    });

    it('fills {from}, {message}, {ts} when the trigger URL holds them', async () => {
      const rcv = await startReceiver();
      try {
        sim.vmnTriggerUrl = `${rcv.url}/in/{from}?text={message}&when={ts}`;
        sim.injectSms({ from: '+919800000007', message: 'a b/c', ts: 1700000000 });
        await rcv.until(1);
        assert.equal(rcv.hits[0].url, '/in/%2B919800000007?text=a%20b%2Fc&when=1700000000');
      } finally {
        await rcv.close();
      }
    });
  });

  describe('C: outbound call status', () => {
    const C = (params) => get(urls.obdUrl, '/api/v1/', { method: 'voice.status', api_key: KEY, ...params });
    beforeEach(() => {
      sim.addCall({ id: '1234567890.123-1', mobile: '9876543210', senttime: '2024-02-01 09:15:00' });
      sim.addCall({ id: '1234567890.123-2', mobile: '9876543211', status: 'NOANSWER', senttime: '2024-02-01 09:15:01' });
      sim.addCall({ id: '1234567890.1234-1', mobile: '9876543212' });
    });

    it('generates call ids numeric with symbols and defaults the status to COMPLETED', () => {
      const record = sim.addCall({ mobile: '9876543213' });
      assert.match(record.id, /^\d{10}\.\d+-1$/);
      assert.equal(record.status, 'COMPLETED');
      assert.match(record.senttime, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    });

    it('answers in text by default: dotted keys', async () => {
      const res = await C({ id: '1234567890.123-1' });
      assert.match(res.headers['content-type'], /^text\/plain/);
      assert.equal(res.text, 'status: 200\nmessage: OK\ndata.0.id: 1234567890.123-1\ndata.0.mobile: 9876543210\ndata.0.status: COMPLETED\ndata.0.senttime: 2024-02-01 09:15:00');
    });

    it('answers in JSON with records keyed by index', async () => {
      const res = JSON.parse((await C({ id: '1234567890.123-1', format: 'JSON', mobile: '919876543210' })).text);
      assert.deepEqual(res, { status: '200', message: 'OK', data: { 0: { id: '1234567890.123-1', mobile: '9876543210', status: 'COMPLETED', senttime: '2024-02-01 09:15:00' } } });
    });

    it('answers in JSONP with the callback name given, `callback` by default', async () => {
      assert.match((await C({ id: '1234567890.123-1', format: 'jsonp' })).text, /^callback\(\{"status":"200".*\}\)$/);
      assert.match((await C({ id: '1234567890.123-1', format: 'jsonp', callback: 'app.onStatus' })).text, /^app\.onStatus\(\{/);
      assert.match((await C({ id: '1234567890.123-1', format: 'jsonp', callback: 'alert(1);x' })).text, /^callback\(/);
    });

    it('answers in XML with a <voice> element per record', async () => {
      const one = xmlParser.parse((await C({ id: '1234567890.123-1', format: 'xml' })).text).api;
      assert.equal(one.status, '200');
      assert.equal(one.data.voice.id, '1234567890.123-1');
      const group = xmlParser.parse((await C({ method: 'voice.groupStatus', id: '1234567890.123', format: 'xml' })).text).api;
      assert.deepEqual(group.data.voice.map((v) => v.status), ['COMPLETED', 'NOANSWER']);
    });

    it('answers as a PHP serialized array with integer record keys', async () => {
      const res = await C({ id: '1234567890.123-1', format: 'php' });
      assert.equal(res.text, 'a:3:{s:6:"status";s:3:"200";s:7:"message";s:2:"OK";s:4:"data";a:1:{i:0;a:4:{s:2:"id";s:16:"1234567890.123-1";s:6:"mobile";s:10:"9876543210";s:6:"status";s:9:"COMPLETED";s:8:"senttime";s:19:"2024-02-01 09:15:00";}}}');
    });

    it('voice.groupStatus returns every call of the group, not a longer id', async () => {
      const res = JSON.parse((await C({ method: 'voice.groupStatus', id: '1234567890.123', format: 'json' })).text);
      assert.deepEqual(Object.values(res.data).map((r) => r.id), ['1234567890.123-1', '1234567890.123-2']);
    });

    it('A416 for an unknown id, a mobile that does not match, or no id, in every format', async () => {
      for (const params of [{ id: '999.1-1' }, { id: '1234567890.123-1', mobile: '9000000000' }, {}]) {
        assert.deepEqual(JSON.parse((await C({ ...params, format: 'json' })).text), { status: 'A416', message: 'invalid call id / mobile' });
      }
      assert.equal((await C({ id: 'x' })).text, 'status: A416\nmessage: invalid call id / mobile');
      assert.equal((await C({ id: 'x', format: 'php' })).text, 'a:2:{s:6:"status";s:4:"A416";s:7:"message";s:24:"invalid call id / mobile";}');
      assert.equal(xmlParser.parse((await C({ id: 'x', format: 'xml' })).text).api.status, 'A416');
    });

    it('A401/A404 and a wrong method on the call status interface', async () => {
      assert.match((await C({ id: '1234567890.123-1', api_key: '' })).text, /^status: A401\n/);
      assert.match((await C({ id: '1234567890.123-1', api_key: 'susp-key' })).text, /^status: A404\n/);
      assert.match((await C({ id: '1234567890.123-1', method: 'voice.start' })).text, /^status: E400\nmessage: method must be voice\.status or voice\.groupStatus$/);
    });

    it('adds call records over HTTP with POST /sim/calls', async () => {
      const res = await request(`${new URL(urls.obdUrl).origin}/sim/calls`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: '55.5-1', mobile: '9876500000', status: 'BUSY' }) });
      assert.equal(res.statusCode, 200);
      await res.body.dump();
      assert.match((await C({ id: '55.5-1' })).text, /data\.0\.status: BUSY/);
    });
  });

  describe('D: click-to-call', () => {
    const D = (params) => get(urls.voiceUrl, '/v1/', { method: 'dial.click2call', api_key: KEY, caller: '9876543210', receiver: '9876543219', ...params });
    const DJ = async (params) => JSON.parse((await D({ format: 'json', ...params })).text);
    const VARS = ['caller', 'receiver', 'starttime', 'endtime', 'duration', 'billsec', 'status', 'status1', 'status2', 'recordpath', 'callerid'];
    const template = (base, tag) => `${base}/c2c?tag=${tag}&${VARS.map((v) => `${v}={${v}}`).join('&')}`;

    it('answers in text by default, with data.id', async () => {
      const res = await D({});
      assert.match(res.text, /^status: 200\nmessage: Call initiated\ndata\.id: c2c_[A-Za-z0-9]+$/);
    });

    it('answers in JSON and XML', async () => {
      const json = await DJ({ return: '1' });
      assert.deepEqual(Object.keys(json), ['status', 'message', 'data']);
      assert.equal(json.status, '200');
      assert.match(json.data.id, /^c2c_[A-Za-z0-9]+$/);
      assert.ok(json.data.id.length <= 50);
      const { api } = xmlParser.parse((await D({ format: 'xml' })).text);
      assert.equal(api.status, '200');
      assert.equal(api.message, 'Call initiated');
      assert.match(api.data.id, /^c2c_/);
    });

    it('E422 without caller, E423 without receiver, E400 for invalid values', async () => {
      assert.deepEqual(await DJ({ caller: '' }), { status: 'E422', message: 'caller value not provided' });
      assert.deepEqual(await DJ({ receiver: '' }), { status: 'E423', message: 'receiver value not provided' });
      const cases = [
        [{ caller: '98765' }, /caller/],
        [{ caller: '9876543210^9876543211' }, /caller/],
        [{ receiver: '9876543210-9876543211' }, /receiver/],
        [{ receiver: 'ivr:' }, /receiver/],
        [{ retry: '3' }, /retry/],
        [{ delay: '-1' }, /delay/],
        [{ return: '2' }, /return/],
        [{ caller_id: '12345' }, /caller_id/],
        [{ custom: 'a-b' }, /custom/],
        [{ callback: 'not a url' }, /callback/],
      ];
      for (const [params, pattern] of cases) {
        const res = await DJ(params);
        assert.equal(res.status, 'E400', JSON.stringify(params));
        assert.match(res.message, pattern);
      }
      assert.equal((await DJ({ caller: '9876543210-9876543215', receiver: '9876543219^9876543218', retry: '2', custom: 'ref42', meta: '{"a":1}' })).status, '200');
    });

    it('A401 and A404 on click-to-call', async () => {
      assert.equal((await DJ({ api_key: 'x' })).status, 'A401');
      assert.equal((await DJ({ api_key: 'susp-key' })).status, 'A404');
    });

    it('calls back at first-leg answer and at the end with every variable filled and URL-encoded', async () => {
      const rcv = await startReceiver();
      try {
        const res = await DJ({ receiver: 'ivr:42', caller_id: '8000000001', callback: template(rcv.url, 'ok') });
        await rcv.until(2);
        const [answer, end] = rcv.hits;
        for (const hit of rcv.hits) {
          assert.ok(!/[{}]|%7B|%7D/i.test(hit.url), hit.url);
          assert.equal(hit.method, 'GET');
          assert.equal(hit.query.tag, 'ok');
          assert.equal(hit.query.caller, '9876543210');
          assert.equal(hit.query.callerid, '8000000001');
          assert.match(hit.url, /receiver=ivr%3A42&/);
        }
        assert.equal(answer.query.status1, 'ANSWER');
        assert.equal(answer.query.endtime, '');
        for (const v of VARS) assert.notEqual(end.query[v], '', `${v} is filled at the end`);
        assert.equal(end.query.status, 'ANSWER');
        assert.equal(end.query.status2, 'ANSWER');
        assert.equal(end.query.starttime, answer.query.starttime);
        assert.ok(Number(end.query.endtime) >= Number(end.query.starttime) + Number(end.query.duration));
        assert.ok(Number(end.query.duration) > Number(end.query.billsec) && Number(end.query.billsec) > 0);
        assert.match(end.url, /recordpath=http%3A%2F%2F127\.0\.0\.1%3A\d+%2Fsim%2Frecordings%2Fc2c_/);
        assert.equal(end.query.recordpath, `${new URL(urls.voiceUrl).origin}/sim/recordings/${res.data.id}.mp3`);
        const recording = await request(end.query.recordpath);
        assert.equal(recording.statusCode, 200);
        assert.equal(recording.headers['content-type'], 'audio/mpeg');
        await recording.body.dump();
        const status = JSON.parse((await get(urls.obdUrl, '/api/v1/', { method: 'voice.status', api_key: KEY, id: res.data.id, format: 'json' })).text);
        assert.deepEqual(status.data[0], { id: res.data.id, mobile: '9876543210', status: 'COMPLETED', senttime: status.data[0].senttime });
      } finally {
        await rcv.close();
      }
    });

    it('plays out each leg outcome from the numbers dialled, retrying a first leg that does not answer', async () => {
      const rcv = await startReceiver();
      try {
        const calls = {
          failed1: { caller: '9876543213' },
          busy1: { caller: '9876543211' },
          noanswer1: { caller: '9876543212', retry: '2' },
          busy2: { receiver: '9876543211' },
          noanswer2: { receiver: '9876543219^9876543212' },
          retried: { caller: '9876543214', retry: '1' },
          notRetried: { caller: '9876543214' },
          second: { caller: '9876543211-9876543216' },
        };
        for (const [tag, params] of Object.entries(calls)) assert.equal((await DJ({ ...params, callback: template(rcv.url, tag) })).status, '200');
        await rcv.until(8 + 4); // 8 end callbacks, plus the answer callbacks of the 4 calls whose first leg answers
        await sim.callbacksIdle();
        assert.equal(rcv.hits.length, 12);
        const endOf = (tag) => rcv.hits.filter((h) => h.query.tag === tag).at(-1).query;
        const countOf = (tag) => rcv.hits.filter((h) => h.query.tag === tag).length;
        const outcome = (tag) => [endOf(tag).status, endOf(tag).status1, endOf(tag).status2];
        assert.deepEqual(outcome('failed1'), ['FAILED_LEG1', 'FAILED', '']);
        assert.deepEqual(outcome('busy1'), ['BUSY_LEG1', 'BUSY', '']);
        assert.deepEqual(outcome('noanswer1'), ['NOANSWER_LEG1', 'NOANSWER', '']);
        assert.deepEqual(outcome('busy2'), ['BUSY_LEG2', 'ANSWER', 'BUSY']);
        assert.deepEqual(outcome('noanswer2'), ['ANSWER', 'ANSWER', 'ANSWER'], 'the first receiver answers');
        assert.deepEqual(outcome('retried'), ['ANSWER', 'ANSWER', 'ANSWER']);
        assert.deepEqual(outcome('notRetried'), ['NOANSWER_LEG1', 'NOANSWER', '']);
        assert.equal(endOf('second').caller, '9876543216', 'the caller that answered');
        assert.deepEqual([countOf('failed1'), countOf('busy2'), countOf('retried')], [1, 2, 2]);
        assert.equal(endOf('failed1').duration, '0');
        assert.equal(endOf('busy2').billsec, '0');
        assert.equal(endOf('busy2').recordpath, '');
        assert.ok(sim.calls.some((c) => c.status === 'BUSY_LEG2'));
      } finally {
        await rcv.close();
      }
    });

    it('waits `delay` seconds (scaled by timeScale) before dialling, and accepts a twice-encoded callback', async () => {
      const rcv = await startReceiver();
      try {
        const sent = Date.now();
        await DJ({ delay: '10', callback: encodeURIComponent(template(rcv.url, 'late')) });
        await rcv.until(1);
        assert.ok(rcv.hits[0].at - sent >= 140, 'delay 10 s × 0.01 + 50 ms ring');
        assert.equal(rcv.hits[0].query.status1, 'ANSWER');
      } finally {
        await rcv.close();
      }
    });
  });

  describe('faults', () => {
    const vmn = () => request(`${urls.vmnUrl}/v1/?method=inbox&format=json&api_key=${KEY}`);

    it('latencyMs delays the answer', async () => {
      sim.setFaults('vmn', { latencyMs: 200 });
      const t0 = Date.now();
      const res = await vmn();
      await res.body.dump();
      assert.equal(res.statusCode, 200);
      assert.ok(Date.now() - t0 >= 190);
    });

    it('errorRate answers HTTP 500, or 503 with Retry-After: 1', async () => {
      sim.setFaults('vmn', { errorRate: 1, seed: 7 });
      const seen = new Set();
      for (let i = 0; i < 20; i++) {
        const res = await vmn();
        await res.body.dump();
        assert.ok([500, 503].includes(res.statusCode));
        assert.equal(res.headers['retry-after'], res.statusCode === 503 ? '1' : undefined);
        assert.equal(sim.requests.at(-1).fault, `http${res.statusCode}`);
        seen.add(res.statusCode);
      }
      assert.deepEqual([...seen].sort(), [500, 503]);
    });

    it('resetRate destroys the socket without an answer', async () => {
      sim.setFaults('vmn', { resetRate: 1 });
      await assert.rejects(vmn());
      assert.equal(sim.requests.at(-1).fault, 'reset');
    });

    it('stallRate holds the request for stallMs, then resets it', async () => {
      sim.setFaults('vmn', { stallRate: 1, stallMs: 300 });
      const t0 = Date.now();
      await assert.rejects(vmn());
      assert.ok(Date.now() - t0 >= 280);
      assert.equal(sim.requests.at(-1).fault, 'stall');
    });

    it('a seed makes the fault sequence repeatable', async () => {
      const run = async () => {
        sim.setFaults('vmn', { errorRate: 0.5, seed: 42 });
        const codes = [];
        for (let i = 0; i < 20; i++) {
          const res = await vmn();
          await res.body.dump();
          codes.push(res.statusCode);
        }
        return codes;
      };
      const first = await run();
      assert.deepEqual(await run(), first);
      assert.ok(first.includes(200) && first.some((c) => c >= 500));
    });

    it('faults stay on their endpoint; `all` sets every endpoint; bad rates are refused', async () => {
      sim.setFaults('obd', { errorRate: 1 });
      assert.equal((await vmn()).statusCode, 200);
      sim.setFaults('all', { errorRate: 1 });
      for (const base of [A(), `${urls.vmnUrl}/v1/`, `${urls.obdUrl}/api/v1/`, `${urls.voiceUrl}/v1/`]) {
        const res = await request(base);
        await res.body.dump();
        assert.ok(res.statusCode >= 500, base);
      }
      assert.throws(() => sim.setFaults('vmn', { errorRate: 1.5 }), RangeError);
      assert.throws(() => sim.setFaults('vmn', { errorRate: 0.6, resetRate: 0.6 }), RangeError);
      assert.throws(() => sim.setFaults('nowhere', {}), RangeError);
    });
  });
});
