'use strict';
// The api key appears nowhere but in the requests to the service. All seven nodes run in the real
// Node-RED runtime with logging at its most verbose (trace, metrics, audit, verbose stacks) and with
// process.stdout/stderr captured, through success paths, service errors that echo the key, transport
// errors (refused, timeout, HTTP 500 and garbage bodies carrying the key), bad input, inbox polling and
// the two listener nodes receiving callbacks. Then every output msg, Catch msg, node status, log entry
// (at every level), byte written to stdout/stderr, util.inspect() of every error and the exported flow
// are searched for the key.
const assert = require('node:assert/strict');
const net = require('node:net');
const util = require('node:util');
const { EventEmitter } = require('node:events');
const { Recorder } = require('./helpers/recorder');
const { HttpNode, until } = require('./helpers/http-node');
const { helper, NODE_MODULES, catchNode } = require('./helpers/flow');

const KEY = 'LEAKCHECK9f8e7d6c5b4a';
/** The key's distinctive half too, so a partly redacted key is found as well. */
const NEEDLES = [KEY, '9f8e7d6c5b4a'];
const CB_TOKEN = 'cbtoken1';
const VMN_TOKEN = 'vmntoken1';
const TO = '919812345678';
const FROM = '918000000000';

const MODULES = [catchNode, ...Object.values(NODE_MODULES)];
const ACTIONS = ['wa', 'wa2', 'inbox', 'cs', 'c2c'];

function flow(urls, publicUrl, { poll = false, catchErrors = true } = {}) {
  const f = [
    { id: 'f1', type: 'tab', label: 'leak check' },
    { id: 'cfg', type: 'kaleyra-config', name: 'acct', ...urls, timeout: 1, retries: 1, publicUrl },
    { id: 'wa', type: 'kaleyra-whatsapp', z: 'f1', name: 'send', account: 'cfg', reportTo: 'cb', wires: [['out_wa']] },
    { id: 'wa2', type: 'kaleyra-whatsapp', z: 'f1', name: 'wa plain', account: 'cfg', wires: [['out_wa2']] },
    { id: 'inbox', type: 'kaleyra-inbox', z: 'f1', name: 'read inbox', account: 'cfg', wires: [['out_inbox']] },
    { id: 'cs', type: 'kaleyra-call-status', z: 'f1', name: 'call status', account: 'cfg', method: 'voice.status', wires: [['out_cs']] },
    { id: 'c2c', type: 'kaleyra-click2call', z: 'f1', name: 'call', account: 'cfg', reportTo: 'cb', wires: [['out_c2c']] },
    { id: 'cb', type: 'kaleyra-callback', z: 'f1', name: 'callbacks', path: '/leak/cb', wires: [['out_cb']] },
    { id: 'vmn', type: 'kaleyra-vmn-in', z: 'f1', name: 'sms in', path: '/leak/vmn', wires: [['out_vmn']] },
  ];
  // Without a Catch node, Node-RED logs each failure at error level instead (with its stack, verbose).
  if (catchErrors) f.push({ id: 'c1', type: 'catch', z: 'f1', scope: null, uncaught: false, wires: [['caught']] }, { id: 'caught', type: 'helper', z: 'f1' });
  if (poll) f.push({ id: 'poll', type: 'kaleyra-inbox', z: 'f1', name: 'poller', account: 'cfg', pollInterval: 1, wires: [['out_poll']] });
  for (const n of [...f]) if (n.wires && n.wires[0][0]?.startsWith('out_')) f.push({ id: n.wires[0][0], type: 'helper', z: 'f1' });
  return f;
}

/** A safe, complete text of anything: JSON where possible, util.inspect (errors with their stacks) always. */
function textOf(value) {
  let json = '';
  try {
    json = JSON.stringify(value, (k, v) => (v instanceof Error ? { message: v.message, stack: v.stack, ...v } : Buffer.isBuffer(v) ? v.toString('latin1') : v));
  } catch {
    // circular: util.inspect below covers it
  }
  return `${json}\n${util.inspect(value, { depth: 12, showHidden: false, breakLength: Infinity, maxStringLength: Infinity, maxArrayLength: Infinity })}`;
}

function leaks(text) {
  return NEEDLES.filter((n) => text.includes(n));
}

describe('leak check: the api key appears nowhere', function () {
  this.timeout(300_000);
  const recorder = new Recorder();
  const httpNode = new HttpNode();
  const seen = { outputs: [], caught: [], statuses: [], logs: [], handlerLogs: [], errors: [], stdout: [], flows: [], nodes: [], credentialsSeen: false };
  let deadPort;

  // ---- answers of the service, per interface; `echo` puts the key everywhere it can ----
  const record = (n, extra = {}) => ({ recipient: '9220000000', keyword: 'HI', sender: `91980000000${n}`, message: `m${n}`, operator: '', circle: '', response: '', received_time: `2026-11-0${n} 10:00:00`, ...extra });
  function success(rec, echo) {
    const k = echo ? KEY : undefined;
    if (rec.path.startsWith('/m/')) return { body: JSON.stringify({ status: 'OK', message: echo ? `Sent for ${KEY}` : 'Sent', data: [{ id: 'm1', mobile: TO, note: k }] }) };
    if (rec.path.startsWith('/vmn/')) return { body: JSON.stringify({ status: '200', message: 'OK', data: { rows: { inbox: [record(1, { echo: k }), record(2)] } }, api_key: k }) };
    if (rec.path.startsWith('/obd/')) return { body: JSON.stringify({ status: '200', message: 'OK', data: { 0: { id: '123-4', mobile: TO, status: 'COMPLETED', senttime: '2026-11-01 10:00:00', key: k } } }) };
    return { body: JSON.stringify({ status: '200', message: echo ? `placed ${KEY}` : 'placed', data: { id: 'c2c_1', request: { api_key: k } } }) };
  }
  /** Service errors echoing the key, in each decoder's format. */
  function serviceError(rec) {
    if (rec.path.startsWith('/m/')) return { body: JSON.stringify({ status: 'A404', message: `Api Key ${KEY} not found`, data: { api_key: KEY, list: [KEY, { deep: `x${KEY}y` }] } }) };
    if (rec.path.startsWith('/vmn/')) return { headers: { 'content-type': 'text/xml' }, body: `<api><status>A404</status><message>Account of ${KEY} suspended</message><data><key>${KEY}</key></data></api>` };
    if (rec.path.startsWith('/obd/')) {
      const m = `Invalid call id for ${KEY}`;
      return { body: `a:3:{s:6:"status";s:4:"A416";s:7:"message";s:${m.length}:"${m}";s:4:"data";a:1:{s:7:"api_key";s:${KEY.length}:"${KEY}";}}` };
    }
    return { headers: { 'content-type': 'text/plain' }, body: `status: E423\nmessage: receiver value not provided (api_key=${KEY})\ndata.api_key: ${KEY}\n` };
  }
  const garbage = () => ({ body: `<<<not an answer: api_key=${KEY} ${'x'.repeat(50)}` });
  const http500 = () => ({ status: 500, headers: { 'content-type': 'text/plain' }, body: `Internal error while checking api_key=${KEY}` });
  const slow = (rec) => new Promise((resolve) => setTimeout(() => resolve(success(rec, true)), 1600));
  const noCallId = () => ({ body: JSON.stringify({ status: '200', message: `accepted ${KEY}`, data: { note: KEY } }) });

  // ---- the runtime around one load ----
  let catchCount;
  let load;
  async function loadFlows(urls, opts) {
    await helper.load([...MODULES, httpNode.capture], flow(urls, httpNode.url, opts), {
      cfg: { apiKey: KEY },
      cb: { token: CB_TOKEN },
      vmn: { token: VMN_TOKEN },
    });
    load = { outputs: {}, caught: [] };
    for (const id of [...ACTIONS, 'cb', 'vmn', 'poll', 'cfg']) {
      const node = helper.getNode(id);
      if (!node) continue;
      const status = node.status.bind(node);
      node.status = (s) => {
        seen.statuses.push({ id, s });
        status(s);
      };
      const out = helper.getNode(`out_${id}`);
      load.outputs[id] = [];
      out?.on('input', (m) => {
        load.outputs[id].push(m);
        seen.outputs.push(m);
      });
    }
    helper.getNode('caught')?.on('input', (m) => {
      load.caught.push(m);
      seen.caught.push(m);
    });
    const logged = seen.handlerLogs.length;
    const errorLogs = (id) => seen.handlerLogs.slice(logged).filter((e) => e.level === helper._log.ERROR && e.id === id);
    catchCount = (id) => load.caught.filter((m) => m.error.source.id === id).length + errorLogs(id).length;
    load.errorLogs = errorLogs;
  }
  async function unloadFlows() {
    // What the helper recorded for this load, before unload() restores its spies.
    seen.logs.push(...helper.log().args);
    for (const call of helper._NodePrototype.error.args) for (const a of call) if (a instanceof Error) seen.errors.push(a);
    const exported = helper._redNodes.getFlows();
    seen.flows.push(exported);
    for (const n of helper._redNodes.getFlows().flows) {
      const node = helper.getNode(n.id);
      if (!node) continue;
      if (node.credentials?.apiKey === KEY) seen.credentialsSeen = true;
      const { credentials, _flow, _alias, ...own } = node; // credentials: the store, where the key belongs
      seen.nodes.push(own);
    }
    await helper.unload();
  }

  /** Sends msg to action node `id` and waits for its output or its Catch message. */
  async function act(id, msg, what) {
    const before = load.outputs[id].length + catchCount(id);
    helper.getNode(id).receive(msg);
    await until(() => load.outputs[id].length + catchCount(id) > before, `${id}: ${what}`, 60_000);
    return { output: load.outputs[id].length > 0 ? load.outputs[id].at(-1) : undefined, caught: load.caught.filter((m) => m.error.source.id === id).at(-1) };
  }
  const inputs = {
    wa: () => ({ payload: 'hello', to: TO, from: FROM }),
    wa2: () => ({ payload: { type: 'template', template: { template_name: 'order', params: ['1'] } }, to: TO, from: FROM }),
    inbox: () => ({ payload: { keyword: 'HI', limit: 10 } }),
    cs: () => ({ payload: '123-4' }),
    c2c: () => ({ payload: { caller: '9812345678', receiver: '9812345679', custom: 'ref1' } }),
  };
  const badInputs = {
    wa: { payload: 'hello', to: 'not-a-number', from: FROM },
    wa2: { payload: { type: 'document' }, file: '/nonexistent/dir/file.pdf', to: TO, from: FROM },
    inbox: { payload: { limit: 0 } },
    cs: { payload: 'has space' },
    c2c: { payload: { caller: '98123', receiver: '9812345679' } },
  };

  before(async function () {
    await recorder.start();
    await httpNode.start();
    const base = recorder.url;
    const urls = { messagingUrl: `${base}/m`, vmnUrl: `${base}/vmn`, obdUrl: `${base}/obd`, voiceUrl: `${base}/voice` };
    // A port nothing listens on, for "connection refused".
    const probe = net.createServer();
    await new Promise((r) => probe.listen(0, '127.0.0.1', r));
    deadPort = probe.address().port;
    await new Promise((r) => probe.close(r));
    const dead = `http://127.0.0.1:${deadPort}`;
    const deadUrls = { messagingUrl: `${dead}/m`, vmnUrl: `${dead}/vmn`, obdUrl: `${dead}/obd`, voiceUrl: `${dead}/voice` };

    // The most verbose logging Node-RED has, printing to the console (captured below), plus a handler of
    // ours that keeps every entry whatever its level.
    const log = helper._log;
    log.init({ logging: { console: { level: 'trace', metrics: true, audit: true } }, verbose: true });
    const mine = new EventEmitter();
    mine.on('log', (entry) => seen.handlerLogs.push(entry));
    log.addHandler(mine);

    const writes = { out: process.stdout.write, err: process.stderr.write };
    const capture = (stream) =>
      function write(chunk, encoding, cb) {
        seen.stdout.push(Buffer.isBuffer(chunk) ? chunk.toString('latin1') : String(chunk));
        const done = typeof encoding === 'function' ? encoding : cb;
        if (done) process.nextTick(done);
        return true;
      };
    process.stdout.write = capture('out');
    process.stderr.write = capture('err');
    try {
      // ---- load 1: against the recording server ----
      await loadFlows(urls, { poll: true });
      log.trace('leak check: trace logging is on'); // a control line: trace entries do reach the console
      const scenarios = [
        ['success', (rec) => success(rec, false)],
        ['success echoing the key', (rec) => success(rec, true)],
        ['service error echoing the key', serviceError],
        ['garbage body with the key', garbage],
        ['HTTP 500 with the key', http500],
        ['connection reset', () => 'reset'],
        ['no answer in time', slow],
        ['click-to-call without id, key in the text', noCallId],
      ];
      for (const [what, reply] of scenarios) {
        recorder.reply = reply;
        for (const id of ACTIONS) await act(id, inputs[id](), what);
      }
      recorder.reply = (rec) => success(rec, true);
      for (const id of ACTIONS) await act(id, badInputs[id], 'bad input');

      // The service calls back: a delivery for the message and a call end for the click-to-call, on the
      // URLs the nodes built (token and correlation ref included), plus a VMN trigger.
      recorder.requests.length = 0;
      await act('wa', inputs.wa(), 'send with a callback');
      await act('c2c', inputs.c2c(), 'call with a callback');
      const sentCallback = JSON.parse(recorder.requests.find((r) => r.path === '/m/api/v4/').fields.body).callback;
      const callCallback = recorder.requests.find((r) => r.path === '/voice/v1/').query.callback;
      const local = (u) => {
        const url = new URL(u);
        return url.pathname + url.search;
      };
      const filled = callCallback.replace(/\{(\w+)\}/g, (_, name) => ({ caller: '9812345678', receiver: '9812345679', starttime: '1700000000', endtime: '1700000060', duration: '60', billsec: '55', status: 'ANSWER', status1: 'ANSWER', status2: 'ANSWER', recordpath: 'https://rec.test/1.mp3', callerid: '9800000000' })[name] ?? '');
      const before = load.outputs.cb.length;
      assert.equal((await httpNode.fetch(`${local(sentCallback)}&status=DELIVERED&mobile=${TO}&timestamp=1700000000`)).status, 200);
      assert.equal((await httpNode.fetch(local(filled))).status, 200);
      assert.equal((await httpNode.fetch(`/leak/cb?token=${CB_TOKEN}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'READ', mobile: TO, timestamp: '1700000001' }) })).status, 200);
      assert.equal((await httpNode.fetch(`/leak/cb?token=${CB_TOKEN}&status=SENT`)).status, 400, 'a bad callback is refused');
      assert.equal((await httpNode.fetch(`/leak/cb?token=wrong&status=SENT&mobile=${TO}&timestamp=1`)).status, 403);
      assert.equal((await httpNode.fetch(`/leak/vmn?token=${VMN_TOKEN}&from=${TO}&message=hello&ts=1700000000`)).status, 200);
      assert.equal((await httpNode.fetch(`/leak/vmn?token=${VMN_TOKEN}&message=nobody`)).status, 400);
      await until(() => load.outputs.cb.length >= before + 3 && load.outputs.vmn.length >= 1, 'callback and VMN messages');
      // The poller has run at least once, against some of the answers above.
      await until(() => recorder.requests.some((r) => r.path === '/vmn/v1/') || load.outputs.poll.length > 0, 'a poll');
      await unloadFlows();

      // ---- load 2: nothing listens (connection refused) ----
      await loadFlows(deadUrls);
      for (const id of ACTIONS) {
        const { caught } = await act(id, inputs[id](), 'connection refused');
        assert.equal(caught.error.code, 'NETWORK');
      }
      await unloadFlows();

      // ---- load 3: no Catch node, so every failure is logged at error level ----
      await loadFlows(urls, { catchErrors: false });
      for (const [what, reply] of [['service error echoing the key', serviceError], ['garbage body with the key', garbage], ['HTTP 500 with the key', http500]]) {
        recorder.reply = reply;
        for (const id of ACTIONS) await act(id, inputs[id](), what);
      }
      for (const id of ACTIONS) await act(id, badInputs[id], 'bad input');
      await unloadFlows();
      await loadFlows(deadUrls, { catchErrors: false });
      for (const id of ACTIONS) await act(id, inputs[id](), 'connection refused');
      assert.ok(ACTIONS.every((id) => load.errorLogs(id).length === 1), 'each failure was logged once at error level');
      await unloadFlows();
    } finally {
      process.stdout.write = writes.out;
      process.stderr.write = writes.err;
      log.removeHandler(mine);
      log.init({ logging: { console: { level: 'off' } } });
    }
  });

  after(async () => {
    await httpNode.stop();
    await recorder.stop();
  });

  it('the key was really used and echoed (controls)', function () {
    assert.ok(seen.credentialsSeen, 'the config node holds the key as its credential');
    assert.ok(recorder.requests.length > 0);
    assert.ok(recorder.requests.every((r) => r.query.api_key === KEY || r.fields.api_key === KEY), 'every request carries the key');
    const codes = new Set(seen.caught.map((m) => m.error.code));
    for (const code of ['A404', 'A416', 'E423', 'BAD_RESPONSE', 'HTTP_STATUS', 'NETWORK', 'TIMEOUT', 'INVALID_INPUT']) assert.ok(codes.has(code), `a ${code} failure was met (${[...codes]})`);
    const levels = new Set(seen.handlerLogs.map((e) => e.level));
    console.log(
      `      ${seen.outputs.length} outputs, ${seen.caught.length} Catch msgs, ${seen.statuses.length} statuses, ${seen.logs.length + seen.handlerLogs.length} log entries (levels ${[...levels].sort((a, b) => a - b)}), ${seen.stdout.length} console writes, ${seen.errors.length} errors`,
    );
    assert.ok(levels.has(helper._log.TRACE) && levels.has(helper._log.ERROR), 'trace and error entries were logged');
    assert.ok(seen.stdout.some((w) => w.includes('leak check: trace logging is on')), 'console output was captured at trace level');
  });

  it('no output msg holds the key', function () {
    assert.ok(seen.outputs.length >= 15);
    seen.outputs.forEach((m, i) => assert.deepEqual(leaks(textOf(m)), [], `output #${i}: ${textOf(m).slice(0, 300)}`));
  });

  it('no Catch msg holds the key (error message, stack, the whole msg)', function () {
    assert.ok(seen.caught.length >= 40);
    seen.caught.forEach((m, i) => {
      assert.deepEqual(leaks(`${m.error.message}\n${m.error.stack}`), [], `Catch #${i} ${m.error.code}: ${m.error.message}`);
      assert.deepEqual(leaks(textOf(m)), [], `Catch #${i} ${m.error.code}`);
    });
  });

  it('no node status holds the key', function () {
    assert.ok(seen.statuses.length > 0);
    assert.deepEqual(leaks(textOf(seen.statuses)), []);
  });

  it('no log entry, at any level, holds the key', function () {
    assert.ok(seen.logs.length > 0 && seen.handlerLogs.length > 0);
    [...seen.logs, ...seen.handlerLogs].forEach((entry, i) => assert.deepEqual(leaks(textOf(entry)), [], `log entry #${i}: ${textOf(entry).slice(0, 300)}`));
  });

  it('nothing written to stdout or stderr holds the key', function () {
    assert.ok(seen.stdout.length > 0);
    seen.stdout.forEach((w, i) => assert.deepEqual(leaks(w), [], `console write #${i}: ${w.slice(0, 300)}`));
  });

  it('util.inspect() of every error the nodes reported shows no key', function () {
    assert.ok(seen.errors.length >= 40);
    for (const err of seen.errors) {
      const shown = util.inspect(err, { depth: Infinity, showHidden: true });
      assert.deepEqual(leaks(shown), [], shown.slice(0, 400));
      assert.deepEqual(leaks(String(err) + err.stack + JSON.stringify(err)), []);
    }
  });

  it('the exported flow and the nodes apart from their credentials hold no key', function () {
    assert.equal(seen.flows.length, 4);
    for (const exported of seen.flows) {
      const cfg = exported.flows.find((n) => n.id === 'cfg');
      assert.equal(cfg.apiKey, undefined);
      assert.equal(cfg.credentials, undefined);
      assert.deepEqual(leaks(JSON.stringify(exported.flows)), [], 'the flows as exported');
    }
    assert.ok(seen.nodes.length >= 9);
    seen.nodes.forEach((own) => assert.deepEqual(leaks(util.inspect(own, { depth: 4 })), [], `node ${own.id} (${own.type})`));
  });
});
