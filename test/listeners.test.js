'use strict';
// The two listener nodes (kaleyra-callback, kaleyra-vmn-in) in the real Node-RED runtime, driven by
// real HTTP requests into RED.httpNode: every parameter of spec 6.1, 6.2 and 6.3, GET and POST in both
// encodings, the token, the body limit, malformed requests, redeploys and httpNodeRoot.
const assert = require('node:assert/strict');
const { Readable } = require('node:stream');
const request = require('supertest');
const { helper, setFlows, NODE_MODULES, catchNode, statusKey } = require('./helpers/flow');
const { HttpNode, warnings, statuses, until } = require('./helpers/http-node');
const { Recorder } = require('./helpers/recorder');

const TOKEN = 'tok123';
const CB_PATH = '/kaleyra/cb';
const VMN_PATH = '/kaleyra/vmn';
const CREDS = { cb: { token: TOKEN }, vmn: { token: TOKEN } };
const MODULES = [NODE_MODULES['kaleyra-callback'], NODE_MODULES['kaleyra-vmn-in'], NODE_MODULES['kaleyra-config'], NODE_MODULES['kaleyra-whatsapp'], catchNode];

function flow({ cbPath = CB_PATH, vmnPath = VMN_PATH } = {}) {
  return [
    { id: 'f1', type: 'tab', label: 'listeners' },
    { id: 'cb', type: 'kaleyra-callback', z: 'f1', name: 'callbacks', path: cbPath, wires: [['out']] },
    { id: 'out', type: 'helper', z: 'f1' },
    { id: 'vmn', type: 'kaleyra-vmn-in', z: 'f1', name: 'sms in', path: vmnPath, wires: [['vout']] },
    { id: 'vout', type: 'helper', z: 'f1' },
    { id: 'c1', type: 'catch', z: 'f1', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'caught', type: 'helper', z: 'f1' },
  ];
}

/** The flow with the callback-in node bound to an account `acct` of these settings; ACCOUNT_CREDS has its key. */
function withAccount(account = { messagingUrl: 'http://127.0.0.1:9' }) {
  return [...flow().map((n) => (n.id === 'cb' ? { ...n, account: 'acct' } : n)), { id: 'acct', type: 'kaleyra-config', name: 'account', ...account }];
}
const ACCOUNT_CREDS = { ...CREDS, acct: { apiKey: 'ListenerKey12345' } };

const q = (params) => new URLSearchParams(params).toString();

describe('listener nodes on RED.httpNode', function () {
  const httpNode = new HttpNode();
  let out; // what kaleyra-callback emitted
  let vout; // what kaleyra-vmn-in emitted

  async function load(credentials = CREDS, f = flow()) {
    // A copy: the runtime keeps the object it loaded as its credential cache and a later deploy changes it.
    await helper.load([...MODULES, httpNode.capture], f, structuredClone(credentials));
    watch();
  }
  /** (Re)attaches the collectors to the helper nodes of the running flow. */
  function watch() {
    out = [];
    vout = [];
    helper.getNode('out').on('input', (m) => out.push(m));
    helper.getNode('vout').on('input', (m) => vout.push(m));
  }
  const app = () => request(httpNode.app);
  /** Waits for the n-th emission of a collector (a safety net for asynchronous sends, not a timing check). */
  const nth = async (list, n = 1) => {
    await until(() => list.length >= n, `${n} emitted message(s)`);
    return list[n - 1];
  };
  /**
   * Proves a refused request emitted nothing: a valid request sent afterwards is emitted, and it is the
   * only message (an emission of the refused request would have been scheduled before it).
   */
  async function onlyBarrierEmitted(list = out) {
    const before = list.length;
    if (list === out) await app().get(`${CB_PATH}?${q({ token: TOKEN, status: 'SENT', mobile: '910000000001', timestamp: '1700000000' })}`).expect(200);
    else await app().get(`${VMN_PATH}?${q({ token: TOKEN, from: '910000000001', message: 'barrier', ts: '1700000000' })}`).expect(200);
    await nth(list, before + 1);
    await new Promise((r) => setImmediate(r));
    assert.equal(list.length, before + 1, 'only the barrier request was emitted');
    assert.equal((list.at(-1).payload.mobile ?? list.at(-1).payload.from), '910000000001');
  }

  afterEach(async () => {
    await helper.unload();
  });

  describe('kaleyra-callback: messaging delivery status (spec 6.1)', () => {
    beforeEach(() => load());

    for (const status of ['SENT', 'DELIVERED', 'READ', 'FAILED']) {
      it(`GET with status ${status}: a typed delivery event, timestamp as a number and as ISO time`, async () => {
        const res = await app().get(`${CB_PATH}?${q({ token: TOKEN, status, mobile: '919812345678', timestamp: '1700000000' })}`);
        assert.equal(res.status, 200);
        const msg = await nth(out);
        assert.deepEqual(msg.payload, {
          event: 'delivery',
          status,
          mobile: '919812345678',
          timestamp: 1700000000,
          time: '2023-11-14T22:13:20.000Z',
        });
        assert.equal(msg.topic, 'delivery');
      });
    }

    it('extra parameters are kept; token and kref never reach the payload', async () => {
      await app()
        .get(`${CB_PATH}?${q({ token: TOKEN, kref: 'not-ours', order: '42', customid: 'c-1', status: 'DELIVERED', mobile: '+91 98123 45678', timestamp: '1700000001' })}`)
        .expect(200);
      const { payload } = await nth(out);
      assert.equal(payload.order, '42');
      assert.equal(payload.customid, 'c-1');
      assert.equal(payload.mobile, '+91 98123 45678');
      assert.equal(payload.token, undefined);
      assert.equal(payload.kref, undefined);
      assert.ok(!('token' in payload) && !('kref' in payload));
      assert.ok(!JSON.stringify(out).includes(TOKEN), 'the token is nowhere in the emitted msg');
    });

    it('POST urlencoded and POST JSON give the same event as GET', async () => {
      const params = { status: 'READ', mobile: '919812345678', timestamp: '1700000002', tag: 'x' };
      await app().get(`${CB_PATH}?${q({ token: TOKEN, ...params })}`).expect(200);
      await app().post(`${CB_PATH}?token=${TOKEN}`).type('form').send(q(params)).expect(200);
      await app()
        .post(`${CB_PATH}?token=${TOKEN}`)
        .set('content-type', 'application/json')
        .send(JSON.stringify({ ...params, timestamp: 1700000002 }))
        .expect(200);
      await nth(out, 3);
      assert.deepEqual(out[1].payload, out[0].payload);
      assert.deepEqual(out[2].payload, out[0].payload);
      assert.equal(out[0].payload.timestamp, 1700000002);
    });

    it('a timestamp in milliseconds still gives the right ISO time', async () => {
      await app().get(`${CB_PATH}?${q({ token: TOKEN, status: 'SENT', mobile: '919812345678', timestamp: '1700000000123' })}`).expect(200);
      const { payload } = await nth(out);
      assert.equal(payload.timestamp, 1700000000123);
      assert.equal(payload.time, '2023-11-14T22:13:20.123Z');
    });
  });

  describe('kaleyra-callback: click-to-call (spec 6.2)', () => {
    beforeEach(() => load());

    const ended = {
      caller: '919812345678',
      receiver: '919812345679',
      starttime: '1700000000',
      endtime: '1700000065',
      duration: '65',
      billsec: '58',
      status: 'ANSWER',
      status1: 'ANSWER',
      status2: 'ANSWER',
      recordpath: 'https://rec.example.test/c2c_abc.mp3',
      callerid: '918000000000',
    };

    it('every variable: numbers as numbers, start and end also as ISO times', async () => {
      await app().get(`${CB_PATH}?${q({ token: TOKEN, ...ended })}`).expect(200);
      const msg = await nth(out);
      assert.deepEqual(msg.payload, {
        event: 'call',
        caller: '919812345678',
        receiver: '919812345679',
        status: 'ANSWER',
        status1: 'ANSWER',
        status2: 'ANSWER',
        callerid: '918000000000',
        recordpath: 'https://rec.example.test/c2c_abc.mp3',
        starttime: 1700000000,
        endtime: 1700000065,
        duration: 65,
        billsec: 58,
        startTime: '2023-11-14T22:13:20.000Z',
        endTime: '2023-11-14T22:14:25.000Z',
      });
      assert.equal(msg.topic, 'call');
    });

    it('first-leg answer: an unreplaced {variable} and empty values become "" or null', async () => {
      // What a URL built with every {variable} looks like when the service fills only some of them.
      const raw =
        `${CB_PATH}?token=${TOKEN}&caller=919812345678&receiver=919812345679&starttime=1700000000&endtime=&duration=` +
        '&billsec=&status=&status1=ANSWER&status2=&recordpath={recordpath}&callerid=%7Bcallerid%7D&leg=1';
      await app().get(raw).expect(200);
      const { payload } = await nth(out);
      assert.equal(payload.event, 'call');
      assert.equal(payload.recordpath, '');
      assert.equal(payload.callerid, '');
      assert.equal(payload.status, '');
      assert.equal(payload.status1, 'ANSWER');
      assert.equal(payload.status2, '');
      assert.equal(payload.starttime, 1700000000);
      assert.equal(payload.endtime, null);
      assert.equal(payload.duration, null);
      assert.equal(payload.billsec, null);
      assert.equal(payload.startTime, '2023-11-14T22:13:20.000Z');
      assert.equal(payload.endTime, null);
      assert.equal(payload.leg, '1', 'an extra parameter is kept');
    });

    it('unknown status values pass through; POST JSON with numbers works too', async () => {
      const body = { ...ended, status: 'CONGESTION', status1: 'SOMETHING-NEW', starttime: 1700000000, duration: 0, billsec: 0 };
      await app().post(`${CB_PATH}?token=${TOKEN}`).set('content-type', 'application/json').send(JSON.stringify(body)).expect(200);
      const { payload } = await nth(out);
      assert.equal(payload.status, 'CONGESTION');
      assert.equal(payload.status1, 'SOMETHING-NEW');
      assert.equal(payload.duration, 0);
      assert.equal(payload.billsec, 0);
      assert.equal(payload.starttime, 1700000000);
    });

    it('POST urlencoded', async () => {
      await app().post(`${CB_PATH}?token=${TOKEN}`).type('form').send(q(ended)).expect(200);
      const { payload } = await nth(out);
      assert.equal(payload.event, 'call');
      assert.equal(payload.billsec, 58);
      assert.equal(payload.recordpath, ended.recordpath);
    });
  });

  describe('kaleyra-vmn-in: VMN trigger URL (spec 6.3)', () => {
    beforeEach(() => load());

    it('GET with an epoch ts: ts as a number and an ISO time; topic is the sender', async () => {
      await app().get(`${VMN_PATH}?${q({ token: TOKEN, from: '919812345678', message: 'HELLO käse & more', ts: '1700000000' })}`).expect(200);
      const msg = await nth(vout);
      assert.deepEqual(msg.payload, { from: '919812345678', message: 'HELLO käse & more', ts: 1700000000, time: '2023-11-14T22:13:20.000Z' });
      assert.equal(msg.topic, '919812345678');
    });

    it('a date string ts is kept as sent and read as UTC whatever the host time zone', async () => {
      const tz = process.env.TZ;
      process.env.TZ = 'Asia/Kolkata';
      try {
        await app().get(`${VMN_PATH}?${q({ token: TOKEN, from: '919812345678', message: 'x', ts: '2024-01-02 10:20:30' })}`).expect(200);
        await app().get(`${VMN_PATH}?${q({ token: TOKEN, from: '919812345678', message: 'y', ts: '2024-01-02T10:20:30+05:30' })}`).expect(200);
        await app().get(`${VMN_PATH}?${q({ token: TOKEN, from: '919812345678', message: 'z', ts: 'not a time' })}`).expect(200);
      } finally {
        if (tz === undefined) delete process.env.TZ;
        else process.env.TZ = tz;
      }
      await nth(vout, 3);
      assert.equal(vout[0].payload.ts, '2024-01-02 10:20:30');
      assert.equal(vout[0].payload.time, '2024-01-02T10:20:30.000Z');
      assert.equal(vout[1].payload.ts, '2024-01-02T10:20:30+05:30');
      assert.equal(vout[1].payload.time, '2024-01-02T04:50:30.000Z');
      assert.equal(vout[2].payload.ts, 'not a time');
      assert.equal(vout[2].payload.time, null);
    });

    it('POST urlencoded and JSON; extra parameters kept, token never on the payload', async () => {
      const sms = { from: '919812345678', message: 'PIZZA 2', ts: '1700000000', keyword: 'PIZZA' };
      await app().post(`${VMN_PATH}?token=${TOKEN}`).type('form').send(q(sms)).expect(200);
      await app().post(`${VMN_PATH}?token=${TOKEN}`).set('content-type', 'application/json').send(JSON.stringify({ ...sms, ts: 1700000000 })).expect(200);
      await nth(vout, 2);
      for (const m of vout) {
        assert.deepEqual(m.payload, { from: '919812345678', message: 'PIZZA 2', ts: 1700000000, time: '2023-11-14T22:13:20.000Z', keyword: 'PIZZA' });
      }
      assert.ok(!JSON.stringify(vout).includes(TOKEN));
    });

    it('an empty message is kept as ""; a missing from is a 400 with a warning', async () => {
      await app().get(`${VMN_PATH}?${q({ token: TOKEN, from: '919812345678', ts: '1700000000' })}`).expect(200);
      assert.equal((await nth(vout)).payload.message, '');
      await app().get(`${VMN_PATH}?${q({ token: TOKEN, message: 'who?' })}`).expect(400);
      assert.ok(warnings(helper, 'vmn').some((w) => /from/.test(w)));
      await onlyBarrierEmitted(vout);
    });
  });

  describe('security and limits', () => {
    const valid = { status: 'SENT', mobile: '919812345678', timestamp: '1700000000' };

    it('a wrong token is 403 and emits nothing; GET and POST alike', async () => {
      await load();
      await app().get(`${CB_PATH}?${q({ ...valid, token: 'tok124' })}`).expect(403);
      await app().post(`${CB_PATH}?token=nope`).type('form').send(q(valid)).expect(403);
      await app().get(`${VMN_PATH}?${q({ token: 'TOK123', from: '919812345678', message: 'x', ts: '1' })}`).expect(403);
      await onlyBarrierEmitted(out);
      await onlyBarrierEmitted(vout);
    });

    it('a missing token is 403, also when the token is only in the POST body', async () => {
      await load();
      await app().get(`${CB_PATH}?${q(valid)}`).expect(403);
      await app().post(CB_PATH).type('form').send(q({ ...valid, token: TOKEN })).expect(403);
      await app().post(CB_PATH).set('content-type', 'application/json').send(JSON.stringify({ ...valid, token: TOKEN })).expect(403);
      await onlyBarrierEmitted(out);
    });

    it('a refused request is not parsed: a malformed body without the token is 403 and makes no warning', async () => {
      await load();
      await app().post(CB_PATH).set('content-type', 'application/json').send('{"status": ').expect(403);
      assert.deepEqual(warnings(helper, 'cb'), []);
    });

    it('fails closed: with no token (an imported flow) every request is 403, the status is red, a warning says what to do, nothing is emitted', async () => {
      const barrierNode = [
        { id: 'cb-barrier', type: 'kaleyra-callback', z: 'f1', path: '/kaleyra/barrier', wires: [['barrier']] },
        { id: 'barrier', type: 'helper', z: 'f1' },
      ];
      await load({ 'cb-barrier': { token: TOKEN } }, [...flow(), ...barrierNode]);
      const barrier = [];
      helper.getNode('barrier').on('input', (m) => barrier.push(m));
      for (const id of ['cb', 'vmn']) {
        assert.ok(warnings(helper, id).some((w) => /no token: every request is refused/.test(w)), id);
        assert.deepEqual(statuses(helper, id).at(-1), { fill: 'red', shape: 'ring', text: statusKey('noToken') });
      }
      await app().get(`${CB_PATH}?${q(valid)}`).expect(403);
      await app().get(`${CB_PATH}?${q({ ...valid, token: '' })}`).expect(403);
      await app().post(VMN_PATH).type('form').send(q({ from: '919812345678', message: 'x', ts: '1' })).expect(403);
      // The barrier: a listener with a token on another path runs the same handler; its request, sent after
      // these, is emitted, and anything they emitted would have been delivered before it.
      await app().get(`/kaleyra/barrier?${q({ ...valid, token: TOKEN })}`).expect(200);
      await until(() => barrier.length === 1, 'the barrier request emitted');
      assert.equal(out.length + vout.length, 0);
    });

    it('accepts requests without a token only when "accept requests without a token" is ticked, and warns', async () => {
      const f = flow().map((n) => (n.type.startsWith('kaleyra-') ? { ...n, acceptWithoutToken: true } : n));
      await load({}, f);
      assert.ok(warnings(helper, 'cb').some((w) => /without a token, as set/.test(w)));
      await app().get(`${CB_PATH}?${q(valid)}`).expect(200);
      assert.equal((await nth(out)).payload.status, 'SENT');
    });

    it('a body over 16 KB is 413 (with or without content-length) and emits nothing', async () => {
      await load();
      const big = { ...valid, pad: 'x'.repeat(17 * 1024) };
      await app().post(`${CB_PATH}?token=${TOKEN}`).type('form').send(q(big)).expect(413);
      await app().post(`${CB_PATH}?token=${TOKEN}`).set('content-type', 'application/json').send(JSON.stringify(big)).expect(413);
      // Chunked, so only counting the bytes can tell.
      await httpNode.start();
      try {
        const chunks = Array.from({ length: 20 }, () => Buffer.alloc(1024, 'a'));
        const res = await httpNode.fetch(`${CB_PATH}?token=${TOKEN}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: Readable.from([Buffer.from('status=SENT&mobile=919812345678&timestamp=1&pad='), ...chunks]),
        });
        assert.equal(res.status, 413);
      } finally {
        await httpNode.stop();
      }
      // Just under the limit is fine.
      const fits = q({ ...valid, pad: 'y'.repeat(15 * 1024) });
      await app().post(`${CB_PATH}?token=${TOKEN}`).type('form').send(fits).expect(200);
      await nth(out);
      await new Promise((r) => setImmediate(r));
      assert.equal(out.length, 1);
    });

    /**
     * A raw client that sends headers then body bytes as fast as the socket takes them, for up to `ms`.
     * Resolves to what the client saw and what the server read on that connection.
     */
    function flood(path, headers, bodyStart = '', ms = 4000) {
      const net = require('node:net');
      return new Promise((resolve, reject) => {
        let serverSocket;
        const onConnection = (s) => (serverSocket ??= s);
        httpNode.server.once('connection', onConnection);
        const socket = net.connect(httpNode.port, '127.0.0.1');
        let answer = '';
        let closedByServer = false;
        const chunk = Buffer.alloc(64 * 1024, 'a');
        const stop = setTimeout(() => finish(), ms);
        function finish() {
          clearTimeout(stop);
          socket.destroy();
          // The server's end of the connection: how much of the body it read before closing.
          const settle = () => resolve({ answer, closedByServer, serverRead: serverSocket ? serverSocket.bytesRead : 0 });
          if (serverSocket && !serverSocket.destroyed) serverSocket.once('close', settle);
          else settle();
        }
        socket.on('data', (d) => (answer += d.toString('latin1')));
        socket.on('end', () => {
          closedByServer = true;
          finish();
        });
        socket.on('error', () => {
          closedByServer = true;
          finish();
        });
        socket.on('connect', () => {
          socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n${bodyStart}`);
          const pump = () => {
            while (!socket.destroyed && socket.write(chunk));
          };
          socket.on('drain', pump);
          pump();
        });
        socket.on('close', () => (closedByServer = true) && finish());
        socket.setTimeout(ms + 1000, () => reject(new Error('client timeout')));
      });
    }

    const endless = 'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000000000\r\n';
    const endlessChunked = 'Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n';
    for (const [what, path, headers, status] of [
      ['a wrong token (403), declared 1 GB body', `${CB_PATH}?token=wrong`, endless, 403],
      ['no token (403), vmn in', VMN_PATH, endless, 403],
      ['a body over the limit (413), declared', `${CB_PATH}?token=${TOKEN}`, endless, 413],
      ['a body over the limit (413), undeclared (chunked)', `${VMN_PATH}?token=${TOKEN}`, endlessChunked, 413],
    ]) {
      it(`a refused request is not read on: ${what} is answered with Connection: close, then the connection is closed (at most 64 KB read after the refusal)`, async () => {
        await load();
        await httpNode.start();
        try {
          // Chunked: the bytes must be valid chunks; one endless chunk will do (its size is 1 GB).
          const seen = await flood(path, headers, headers === endlessChunked ? '40000000\r\n' : '');
          assert.match(seen.answer, new RegExp(`^HTTP/1.1 ${status} `), seen.answer.slice(0, 100));
          assert.match(seen.answer, /\r\nconnection: close\r\n/i);
          assert.ok(seen.closedByServer, 'the server closed the connection');
          // What the server read in all: the headers, up to 16 KB of body before a 413 (read in socket reads of
          // up to 64 KB), and at most one more 64 KB read after the refusal.
          const bound = (status === 413 ? 16 * 1024 + 64 * 1024 : 0) + 64 * 1024 + 2048;
          assert.ok(seen.serverRead <= bound, `the server read ${seen.serverRead} bytes (bound ${bound})`);
        } finally {
          await httpNode.stop();
        }
        await onlyBarrierEmitted(out);
        await onlyBarrierEmitted(vout);
      });
    }

    it('parameters named like Object methods (toString, valueOf, hasOwnProperty...) are dropped: query, form and JSON alike', async () => {
      await load();
      const shadowing = { toString: 'x', valueOf: 'y', hasOwnProperty: 'z', constructor: 'c', isPrototypeOf: 'i', __proto__x: 'kept' };
      const params = { token: TOKEN, ...valid };
      await app().get(`${CB_PATH}?${q(params)}&${q(shadowing)}`).expect(200);
      await app().post(`${CB_PATH}?token=${TOKEN}`).type('form').send(q({ ...valid, ...shadowing })).expect(200);
      await app().post(`${CB_PATH}?token=${TOKEN}`).set('content-type', 'application/json').send(JSON.stringify({ ...valid, ...shadowing })).expect(200);
      await app().get(`${VMN_PATH}?${q({ token: TOKEN, from: '919812345678', message: 'hi', ts: '1700000000' })}&${q(shadowing)}`).expect(200);
      await nth(out, 3);
      const sms = await nth(vout);
      for (const msg of [...out, sms]) {
        const p = msg.payload;
        for (const name of ['toString', 'valueOf', 'hasOwnProperty', 'constructor', 'isPrototypeOf']) {
          assert.ok(!Object.prototype.hasOwnProperty.call(p, name), `${name} is not an own property`);
        }
        assert.equal(String(p), '[object Object]');
        assert.equal(p.hasOwnProperty('__proto__x'), true, 'other extra parameters are kept');
        assert.equal(`${p.valueOf() === p}`, 'true');
      }
    });

    const malformed = [
      ['invalid JSON', (r) => r.post(`${CB_PATH}?token=${TOKEN}`).set('content-type', 'application/json').send('{"status":"SENT",'), /malformed/],
      ['a JSON array', (r) => r.post(`${CB_PATH}?token=${TOKEN}`).set('content-type', 'application/json').send(JSON.stringify([valid])), /malformed/],
      ['nested object values', (r) => r.post(`${CB_PATH}?token=${TOKEN}`).set('content-type', 'application/json').send(JSON.stringify({ ...valid, mobile: { n: 1 } })), /malformed/],
      ['a delivery callback with a non-numeric timestamp', (r) => r.get(`${CB_PATH}?${q({ token: TOKEN, ...valid, timestamp: 'yesterday' })}`), /timestamp/],
      ['a delivery callback without timestamp', (r) => r.get(`${CB_PATH}?${q({ token: TOKEN, status: 'SENT', mobile: '919812345678' })}`), /timestamp/],
      ['a call callback with a non-numeric duration', (r) => r.get(`${CB_PATH}?${q({ token: TOKEN, caller: '919812345678', duration: '12s' })}`), /duration/],
      ['neither kind of callback', (r) => r.get(`${CB_PATH}?${q({ token: TOKEN, hello: 'world' })}`), /neither/],
      ['neither kind, empty POST', (r) => r.post(`${CB_PATH}?token=${TOKEN}`).type('form').send(''), /neither/],
    ];
    for (const [what, send, warning] of malformed) {
      it(`malformed: ${what} is 400 with a node warning and emits nothing`, async () => {
        await load();
        const res = await send(app());
        assert.equal(res.status, 400);
        const ws = warnings(helper, 'cb');
        assert.equal(ws.length, 1, `one warning: ${ws.join(' | ')}`);
        assert.match(ws[0], warning);
        assert.ok(!ws[0].includes(TOKEN), 'the warning does not show the token');
        await onlyBarrierEmitted(out);
      });
    }

    describe('with an account that correlates', () => {
      const { Account } = require('../dist/nodes/account');
      const correlate = Account.prototype.correlate;
      afterEach(() => {
        Account.prototype.correlate = correlate;
      });

      it('answers 200 before the event is emitted (a correlation still pending does not hold the answer)', async () => {
        let release;
        const gate = new Promise((r) => (release = r));
        Account.prototype.correlate = function (...args) {
          return gate.then(() => correlate.apply(this, args));
        };
        await load(ACCOUNT_CREDS, withAccount());
        const res = await app().get(`${CB_PATH}?${q({ token: TOKEN, kref: 'pending', ...valid })}`);
        assert.equal(res.status, 200);
        await new Promise((r) => setImmediate(r));
        assert.equal(out.length, 0, 'answered while the event was still being correlated');
        release();
        const msg = await nth(out);
        assert.equal(msg.payload.status, 'SENT');
        assert.equal(msg.payload.ref, undefined, 'an unknown kref leaves the event uncorrelated');
      });

      it('answers 200 even when emitting fails; the failure is a node error, not a 500', async () => {
        Account.prototype.correlate = () => Promise.reject(new Error('state store unavailable'));
        await load(ACCOUNT_CREDS, withAccount());
        await app().get(`${CB_PATH}?${q({ token: TOKEN, kref: 'broken', ...valid })}`).expect(200);
        await until(() => helper.log().args.some(([e]) => e && e.level === helper.log().ERROR && e.id === 'cb'), 'the node error');
        assert.equal(out.length, 0);
      });
    });
  });

  describe('routes across deploys', () => {
    /** How many routes RED.httpNode holds for `path`, and for which methods. */
    function routes(path) {
      const router = httpNode.app._router ?? httpNode.app.router;
      return router.stack.filter((l) => l.route && l.route.path === path).map((l) => Object.keys(l.route.methods).join(','));
    }

    it('a full redeploy replaces the route: no duplicate, only the new node emits', async () => {
      await load();
      assert.deepEqual(routes(CB_PATH).sort(), ['get', 'post']);
      const old = helper.getNode('cb');
      let oldSends = 0;
      const oldSend = old.send.bind(old);
      old.send = (m) => {
        oldSends++;
        oldSend(m);
      };
      await setFlows(flow(), 'full', structuredClone(CREDS));
      watch();
      const fresh = helper.getNode('cb');
      assert.notEqual(fresh, old);
      assert.deepEqual(routes(CB_PATH).sort(), ['get', 'post'], 'one GET and one POST route, not two of each');
      assert.deepEqual(routes(VMN_PATH).sort(), ['get', 'post']);
      await app().get(`${CB_PATH}?${q({ token: TOKEN, status: 'READ', mobile: '919812345678', timestamp: '1700000000' })}`).expect(200);
      await nth(out);
      await new Promise((r) => setImmediate(r));
      assert.equal(out.length, 1, 'emitted exactly once');
      assert.equal(oldSends, 0, 'the closed node emits nothing');
    });

    it('a redeploy of the changed node only ("nodes"), with a new path and token: old path 404, new path works', async () => {
      await load();
      const changed = flow({ cbPath: '/kaleyra/cb2' });
      await setFlows(changed, 'nodes', { ...structuredClone(CREDS), cb: { token: 'tok456' } });
      watch();
      assert.deepEqual(routes(CB_PATH), []);
      assert.deepEqual(routes('/kaleyra/cb2').sort(), ['get', 'post']);
      await app().get(`${CB_PATH}?${q({ token: TOKEN, status: 'READ', mobile: '919812345678', timestamp: '1' })}`).expect(404);
      await app().get(`/kaleyra/cb2?${q({ token: TOKEN, status: 'READ', mobile: '919812345678', timestamp: '1' })}`).expect(403);
      await app().get(`/kaleyra/cb2?${q({ token: 'tok456', status: 'READ', mobile: '919812345678', timestamp: '1' })}`).expect(200);
      await nth(out);
      // The untouched vmn-in node still has exactly its one pair of routes.
      assert.deepEqual(routes(VMN_PATH).sort(), ['get', 'post']);
    });

    it('after the flows are stopped the path answers 404', async () => {
      await load();
      const appBefore = httpNode.app;
      await app().get(`${CB_PATH}?${q({ token: TOKEN, status: 'SENT', mobile: '919812345678', timestamp: '1' })}`).expect(200);
      await helper.unload();
      await request(appBefore).get(`${CB_PATH}?${q({ token: TOKEN, status: 'SENT', mobile: '919812345678', timestamp: '1' })}`).expect(404);
      await request(appBefore).get(`${VMN_PATH}?${q({ token: TOKEN, from: '1', message: 'x', ts: '1' })}`).expect(404);
      await load(); // so afterEach has something to unload
    });
  });

  describe('httpNodeRoot', () => {
    afterEach(() => {
      helper.settings({});
    });

    it('is respected: a send reporting to the node gets a callback URL below the root, which reaches it there', async () => {
      helper.settings({ httpNodeRoot: '/red/' });
      const service = new Recorder();
      await service.start();
      service.reply = () => ({ body: JSON.stringify({ status: 'OK', message: 'sent', data: [{ id: 'm1', mobile: '919812345678' }] }) });
      const f = [
        ...withAccount({ messagingUrl: service.url, publicUrl: 'https://public.example' }),
        { id: 'wa', type: 'kaleyra-whatsapp', z: 'f1', account: 'acct', reportTo: 'cb', from: '918000000000', wires: [[]] },
      ];
      await load(ACCOUNT_CREDS, f);
      await httpNode.start('/red');
      try {
        helper.getNode('wa').receive({ payload: 'hi', to: '919812345678' });
        await until(() => service.requests.length === 1, 'the send');
        const callback = new URL(JSON.parse(service.last.fields.body).callback);
        assert.equal(callback.origin + callback.pathname, `https://public.example/red${CB_PATH}`);
        assert.equal(callback.searchParams.get('token'), TOKEN);
        assert.match(callback.searchParams.get('kref'), /^\w{12}$/);
        const local = callback.pathname + callback.search;
        const ok = await httpNode.fetch(`${local}&${q({ status: 'SENT', mobile: '919812345678', timestamp: '1700000000' })}`);
        assert.equal(ok.status, 200);
        const event = (await nth(out)).payload;
        assert.deepEqual([event.status, event.id], ['SENT', 'm1']);
        const outside = await httpNode.fetch(`${CB_PATH}?${q({ token: TOKEN, status: 'SENT', mobile: '919812345678', timestamp: '1700000000' })}`);
        assert.equal(outside.status, 404);
      } finally {
        await httpNode.stop();
        await service.stop();
      }
    });

    it('httpNodeRoot false: no route, and a warning that nothing can be received', async () => {
      helper.settings({ httpNodeRoot: false });
      await load();
      assert.ok(warnings(helper, 'cb').some((w) => /httpNodeRoot is false/.test(w)));
      await app().get(`${CB_PATH}?${q({ token: TOKEN, status: 'SENT', mobile: '919812345678', timestamp: '1' })}`).expect(404);
    });
  });

  describe('load', () => {
    before(() => httpNode.start());
    after(() => httpNode.stop());

    it('1,000 concurrent valid callbacks are all answered 200 and each emitted exactly once', async () => {
      await load();
      const N = 1000;
      const mobiles = Array.from({ length: N }, (_, i) => `91${String(9000000000 + i)}`);
      const answers = await Promise.all(
        mobiles.map((mobile, i) =>
          i % 2
            ? httpNode.fetch(`${CB_PATH}?${q({ token: TOKEN, status: 'DELIVERED', mobile, timestamp: '1700000000' })}`)
            : httpNode.fetch(`${CB_PATH}?token=${TOKEN}`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ status: 'DELIVERED', mobile, timestamp: 1700000000 }),
              }),
        ),
      );
      assert.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
      await nth(out, N);
      await new Promise((r) => setImmediate(r));
      assert.equal(out.length, N);
      const seen = new Set(out.map((m) => m.payload.mobile));
      assert.equal(seen.size, N, 'each callback emitted exactly once');
      assert.deepEqual([...seen].sort(), [...mobiles].sort());
    });
  });
});
