'use strict';
// The account hub (kaleyra-config, src/nodes/account.ts; ADR 0003) in the real runtime: nodes register
// and get its status pushed (rate limited, queued, unusable account); a config fault is found at start
// (CONFIG: one log line, a red status, every msg fails at once with no request); the queue bound
// (QUEUE_FULL) and the rate limit through a node; the shutdown order (a redeploy under load fails nothing
// that could be sent); a correlation record that cannot be written after the service accepted a send
// still gives an output; and the layout rules the hub stands for.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Recorder } = require('./helpers/recorder');
const { helper, setFlows, loadNode, logText, statusKey } = require('./helpers/flow');
const { statuses, until, warnings } = require('./helpers/http-node');
const { fromNodeRed } = require('./helpers/node-red');
const { Correlator } = require('../dist/core/correlation');

/** What of a key must never be shown: the key, and every 6 characters of it in a row (the whole key when shorter). */
const keyRuns = (key, n = 6) => (key.length <= n ? [key] : Array.from({ length: key.length - n + 1 }, (_, i) => key.slice(i, i + n)));
const TO = '919812345678';
const FROM = '918000000000';
const sent = (rec) => {
  const to = JSON.parse(rec.fields.body).to;
  return { body: JSON.stringify({ status: 'OK', message: 'sent', data: [{ id: `m-${to}`, mobile: to }] }) };
};

describe('the account hub', function () {
  this.timeout(60_000);
  const server = new Recorder();
  let url;
  before(async () => {
    url = await server.start();
  });
  after(() => server.stop());
  beforeEach(() => {
    server.requests.length = 0;
    server.reply = sent;
  });
  afterEach(() => helper.unload());

  describe('a config fault is found when the account starts (CONFIG)', () => {
    const cases = [
      ['a key that is not letters and digits', { messagingUrl: 'http://127.0.0.1:9' }, 'my-key-with-dashes', 'apiKey', /apiKey: must be the account's key: letters and digits only/],
      ['a key shorter than 8 characters', { messagingUrl: 'http://127.0.0.1:9' }, 'abc123', 'apiKey', /at least 8/],
      ['a base URL that is not http(s)', { messagingUrl: 'ftp://files.example.com' }, 'GoodKey12345', 'messagingUrl', /messagingUrl: must be an http\(s\) URL/],
      ['a public URL that is not http(s)', { messagingUrl: 'http://127.0.0.1:9', publicUrl: 'nodered.example.com' }, 'GoodKey12345', 'publicUrl', /publicUrl: must be an http\(s\) URL/],
    ];
    for (const [what, config, apiKey, setting, message] of cases) {
      it(`${what}: one log line naming ${setting} (never the key), a red status, every msg fails at once with CONFIG and no request`, async () => {
        const t = await loadNode('kaleyra-whatsapp', { from: FROM, to: TO }, { config: { ...config, retries: 3 }, apiKey });
        const logged = helper.log().args.map(([e]) => e).filter((e) => e && e.id === 'cfg' && e.level === helper.log().ERROR);
        assert.equal(logged.length, 1, JSON.stringify(logged));
        assert.match(String(logged[0].msg), message);
        const shown = keyRuns(apiKey).filter((run) => logText().includes(run));
        assert.deepEqual(shown, [], 'neither the key nor 6 characters of it in a row are logged');
        assert.deepEqual(statuses(helper, 'n1').at(-1), { fill: 'red', shape: 'ring', text: statusKey(`unusable.${setting}`) });
        for (let i = 0; i < 3; i++) {
          const { output, error } = await t.run({ payload: `hello ${i}` });
          assert.equal(output, undefined);
          assert.equal(error.error.code, 'CONFIG');
          assert.match(error.error.message, message);
        }
        assert.equal(server.requests.length, 0, 'no request, no retry');
      });
    }

    it('a bad redisUrl: CONFIG naming redisUrl, with neither the key nor the Redis password in the log', async () => {
      const t = await loadNode('kaleyra-whatsapp', { from: FROM, to: TO }, { config: { messagingUrl: url, store: 'redis', redisUrl: 'http://:r3dispass@cache.example.com:6379' }, apiKey: 'GoodKey12345' });
      const { error } = await t.run({ payload: 'hi' });
      assert.equal(error.error.code, 'CONFIG');
      assert.match(error.error.message, /redisUrl: must be a Redis URL such as redis:\/\/127\.0\.0\.1:6379\/0/);
      assert.deepEqual(statuses(helper, 'n1').at(-1), { fill: 'red', shape: 'ring', text: statusKey('unusable.redisUrl') });
      assert.ok(!logText().includes('r3dispass') && !logText().includes('GoodKey12345'));
      assert.equal(server.requests.length, 0);
    });

    it('a memory-only Node-RED loads neither the Redis client nor prom-client at start (start-up unchanged; metrics load at the first scrape)', () => {
      const { execFileSync } = require('node:child_process');
      const script = `
        const RED = { nodes: { registerType() {}, createNode() {}, getNode() { return null; } }, plugins: { registerPlugin() {} }, settings: {}, util: {}, log: console, auth: { needsPermission: () => (q, s, n) => n() }, _: (k) => k };
        const { nodes, plugins } = require('./package.json')['node-red'];
        for (const f of [...Object.values(nodes), ...Object.values(plugins)]) require('./' + f)(RED);
        const loaded = (re) => Object.keys(require.cache).filter((k) => re.test(k)).length;
        console.log(JSON.stringify({ redis: loaded(/@redis|redis-store/), metrics: loaded(/prom-client|nodes[\\/]metrics\.js/) }));`;
      assert.deepEqual(JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: path.join(__dirname, '..'), encoding: 'utf8' })), { redis: 0, metrics: 0 });
    });

    it('a good account logs no error and shows no status until a msg comes', async () => {
      await loadNode('kaleyra-whatsapp', { from: FROM, to: TO }, { config: { messagingUrl: url }, apiKey: 'GoodKey12345' });
      assert.equal(helper.log().args.filter(([e]) => e && e.level === helper.log().ERROR).length, 0);
      assert.deepEqual(statuses(helper, 'n1').filter((s) => s.text), []);
    });
  });

  describe('status pushed by the account, flow control through a node', () => {
    it('the rate limit holds for the account (its nodes together), and they show "rate limited, N queued" meanwhile', async () => {
      const extra = [
        { id: 'n2', type: 'kaleyra-whatsapp', z: 'f1', account: 'cfg', from: FROM, to: TO, wires: [['out']] },
      ];
      const t = await loadNode('kaleyra-whatsapp', { from: FROM, to: TO }, { config: { messagingUrl: url, rateLimit: 10, concurrency: 8 }, apiKey: 'GoodKey12345', extra });
      const t0 = Date.now();
      for (let i = 0; i < 10; i++) (i % 2 ? helper.getNode('n2') : t.node).receive({ payload: `m${i}` });
      await until(() => t.outputs.length === 10, 'ten outputs', 60_000);
      assert.equal(server.requests.length, 10);
      assert.ok(Date.now() - t0 >= 850, `10 starts at 10/s take about 0.9 s (took ${Date.now() - t0} ms)`);
      for (const id of ['n1', 'n2']) {
        assert.ok(statuses(helper, id).some((s) => s.fill === 'yellow' && /^rate limited, \d+ queued/.test(s.text)), `${id}: ${JSON.stringify(statuses(helper, id))}`);
      }
    });

    it('a full queue fails the msg with QUEUE_FULL at once; the others are sent', async () => {
      server.reply = (rec) => new Promise((resolve) => setTimeout(() => resolve(sent(rec)), 300));
      const t = await loadNode('kaleyra-whatsapp', { from: FROM, to: TO }, { config: { messagingUrl: url, concurrency: 1, queueSize: 2 }, apiKey: 'GoodKey12345' });
      for (let i = 0; i < 5; i++) t.node.receive({ payload: `m${i}` });
      await until(() => t.outputs.length + t.errors.length === 5, 'five ends', 60_000);
      assert.equal(t.outputs.length, 3, '1 in flight + 2 queued');
      assert.deepEqual(t.errors.map((m) => m.error.code), ['QUEUE_FULL', 'QUEUE_FULL']);
      assert.equal(server.requests.length, 3);
    });

    it('refused input goes straight to the red status with its code: never "requesting"', async () => {
      const t = await loadNode('kaleyra-whatsapp', { from: FROM }, { config: { messagingUrl: url }, apiKey: 'GoodKey12345' });
      const { error } = await t.run({ payload: 'hi', to: '12' });
      assert.equal(error.error.code, 'INVALID_INPUT');
      assert.deepEqual(await t.finalStatus(), { fill: 'red', shape: 'ring', text: 'INVALID_INPUT' });
      assert.ok(!t.statuses.some((s) => /requesting/.test(s.text ?? '')), JSON.stringify(t.statuses));
    });
  });

  describe('shutdown order: the account closes after its nodes', () => {
    /**
     * Queues `n` sends on a node (the service answering each after `latency` ms, `concurrency` at a time),
     * redeploys once the first `started` reached the service, and checks what happened, not the clock:
     * every message ended once, sent or CLOSED; the service saw each sent one, and none twice; and none
     * was CLOSED while they kept ending, unless the node ran into its 12 s limit (it then says so). Then
     * the requests in flight were cut off: at most `concurrency` CLOSED ones may have reached the service
     * (ADR 0002: a request cut off after it was written may have arrived).
     */
    async function redeployWith({ n, latency, concurrency, started }) {
      server.reply = (rec) => new Promise((resolve) => setTimeout(() => resolve(sent(rec)), latency));
      const t = await loadNode('kaleyra-whatsapp', { from: FROM, to: TO }, { config: { messagingUrl: url, concurrency, queueSize: 5000 }, apiKey: 'GoodKey12345' });
      const flows = await helper._redNodes.getFlows();
      for (let i = 0; i < n; i++) t.node.receive({ payload: `m${i}` });
      await until(() => server.requests.length >= started, `the first ${started} sends`);
      await setFlows(flows.flows, 'full', { cfg: { apiKey: 'GoodKey12345' } });
      // A stopping flow passes nothing on: the node says how its messages ended, the service counts them.
      const said = warnings(helper, 'n1').find((w) => /they ended as/.test(w));
      assert.ok(said, 'the old node said how its messages ended');
      const counts = Object.fromEntries([...said.matchAll(/(\d+) (sent|CLOSED)/g)].map((m) => [m[2], Number(m[1])]));
      const sentCount = (counts.sent ?? 0) + t.outputs.length;
      assert.equal(sentCount + (counts.CLOSED ?? 0), n, `every message ended once: ${said}; ${t.outputs.length} output before the redeploy`);
      if (!/limit was reached/.test(said)) assert.equal(counts.CLOSED ?? 0, 0, said);
      const bodies = new Set(server.requests.map((r) => JSON.parse(r.fields.body).text.message));
      assert.equal(bodies.size, server.requests.length, 'no message reached the service twice');
      const cutOff = server.requests.length - sentCount;
      assert.ok(cutOff >= 0, `every sent message reached the service (${server.requests.length} received, ${sentCount} sent)`);
      assert.ok(cutOff <= (counts.CLOSED ? concurrency : 0), `${cutOff} CLOSED messages reached the service: at most those in flight when the node gave up may have (${said})`);
    }

    it('a full redeploy with 2,000 sends queued: each ends once; none CLOSED while they keep ending (unless the 12 s limit is hit)', async function () {
      this.timeout(60_000);
      await redeployWith({ n: 2000, latency: 5, concurrency: 16, started: 50 });
    });

    it('a redeploy while a slow service still answers: the messages that keep ending past the 5 s grace are sent, not CLOSED', async function () {
      this.timeout(60_000);
      // One at a time, 50 ms each: 150 messages take 7.5 s to drain, longer than the grace without progress.
      await redeployWith({ n: 150, latency: 50, concurrency: 1, started: 1 });
    });
  });

  describe('a "Report to" record that cannot be written', () => {
    const identified = Correlator.prototype.identified;
    afterEach(() => {
      Correlator.prototype.identified = identified;
    });

    it('after the service accepted the send: an output, not a Catch (a retrying flow would send twice); one warning and the status say so', async () => {
      Correlator.prototype.identified = () => Promise.reject(new Error('state store unreachable'));
      const extra = [{ id: 'cb', type: 'kaleyra-callback', z: 'f1', account: 'cfg', path: '/hub/cb', wires: [[]] }];
      const t = await loadNode('kaleyra-whatsapp', { from: FROM, to: TO, reportTo: 'cb' }, { config: { messagingUrl: url, publicUrl: 'https://public.example' }, apiKey: 'GoodKey12345', extra });
      const first = await t.run({ payload: 'accepted' });
      assert.equal(first.error, undefined, first.error && first.error.error.message);
      assert.equal(first.output.payload[0].id, `m-${TO}`);
      await t.run({ payload: 'accepted again' });
      const ws = warnings(helper, 'n1').filter((w) => /state store failed/.test(w));
      assert.equal(ws.length, 1, 'one warning, not one per message');
      assert.match(ws[0], /may come without their id and ref/);
      const down = { fill: 'yellow', shape: 'ring', text: 'sent to 1; state store down: events may come uncorrelated' };
      await until(() => JSON.stringify(t.statuses.at(-1)) === JSON.stringify(down), `the status ${JSON.stringify(down)} (last: ${JSON.stringify(t.statuses.at(-1))})`, 60_000);
      assert.equal(t.outputs.length, 2);
      assert.equal(t.errors.length, 0);
    });
  });

  describe('"Report to" on an account without a Public URL (issue 19, item 5)', () => {
    // The fix is in the account's settings, not in the msg: CONFIG (as README says), naming publicUrl.
    const sends = [
      ['kaleyra-whatsapp', { from: FROM, to: TO, reportTo: 'cb' }, { payload: 'hello' }],
      ['kaleyra-click2call', { reportTo: 'cb' }, { payload: { caller: '9812345678', receiver: '9812345679' } }],
    ];
    for (const [type, props, msg] of sends) {
      it(`${type}: Catch gets CONFIG with a message naming publicUrl; no request reaches the service`, async () => {
        const extra = [{ id: 'cb', type: 'kaleyra-callback', z: 'f1', account: 'cfg', path: '/hub/no-public-url', wires: [[]] }];
        const t = await loadNode(type, props, { config: { messagingUrl: url, voiceUrl: url }, apiKey: 'GoodKey12345', extra });
        const { output, error } = await t.run(msg);
        assert.equal(output, undefined, 'no output');
        assert.ok(error, 'the failure reaches Catch');
        assert.equal(error.error.code, 'CONFIG', error.error.message);
        assert.match(error.error.message, /publicUrl: is not set in the kaleyra-config node/);
        assert.equal(server.requests.length, 0, 'nothing was sent');
      });
    }
  });

  describe('Check account (the config dialog\'s button: an admin endpoint)', () => {
    const { Simulator } = require('../dist/simulator');
    let sim;
    let urls;
    before(async () => {
      sim = new Simulator({ keys: { GoodKey12345: 'active', SuspendedKey1: 'suspended' } });
      urls = await sim.start();
    });
    after(() => sim.stop());
    const check = (body) => helper.request().post('/kaleyra/check-account').send(body).expect(200).then((r) => r.body);

    it('tells a working key, an unknown one, a suspended account and an unreachable service apart, in plain words, never echoing the key', async () => {
      await loadNode('kaleyra-whatsapp', { from: FROM, to: TO }, { config: { messagingUrl: url }, apiKey: 'GoodKey12345' });
      const works = await check({ apiKey: 'GoodKey12345', obdUrl: urls.obdUrl });
      assert.equal(works.result, 'works');
      assert.match(works.message, /The service knows the key/);
      const unknown = await check({ apiKey: 'WrongKey12345', obdUrl: urls.obdUrl });
      assert.equal(unknown.result, 'unknown-key');
      assert.match(unknown.message, /does not know it/);
      const suspended = await check({ apiKey: 'SuspendedKey1', obdUrl: urls.obdUrl });
      assert.deepEqual([suspended.result, /suspended \(A404\)/.test(suspended.message)], ['suspended', true]);
      const unreachable = await check({ apiKey: 'GoodKey12345', obdUrl: 'http://127.0.0.1:1' });
      assert.equal(unreachable.result, 'unreachable');
      assert.match(unreachable.message, /connection refused by 127\.0\.0\.1:1/);
      const bad = await check({ apiKey: 'bad-key', obdUrl: urls.obdUrl });
      assert.deepEqual([bad.result, /apiKey: must be/.test(bad.message)], ['config', true]);
      for (const r of [works, unknown, suspended, unreachable]) assert.ok(!JSON.stringify(r).includes('Key12345') && !JSON.stringify(r).includes('SuspendedKey1'));
      assert.equal(sim.requests.filter((r) => r.endpoint === 'obd').length, 3, 'one harmless read per check');
    });

    // Issue 19, item 7: a status that is a cut of the key is no code; the service's "Api Key not found"
    // (spec 5 and 7 give it no code) means an unknown key whatever status comes with it.
    describe('answers of a hostile or broken service', () => {
      const KEY = 'Zq7Wm2Kp9Xr4Tn6Yb8Vc3';
      const keyRuns = (text) => Array.from({ length: KEY.length - 5 }, (_, i) => KEY.slice(i, i + 6)).filter((run) => text.includes(run));
      const answering = (answer) => {
        server.reply = () => ({ body: JSON.stringify(answer) });
        return check({ apiKey: KEY, obdUrl: url });
      };

      for (const [what, cut] of [['first 20', KEY.slice(0, 20)], ['last 12', KEY.slice(-12)]]) {
        it(`the key's ${what} characters as the status: "refused with SERVICE_ERROR", and no 6 characters of the key in the answer`, async () => {
          await loadNode('kaleyra-whatsapp', { from: FROM, to: TO }, { config: { messagingUrl: url }, apiKey: 'GoodKey12345' });
          const answer = await answering({ status: cut, message: 'x' });
          assert.equal(answer.result, 'service-error');
          assert.equal(answer.message, 'The service refused the check with SERVICE_ERROR: x (status "***")');
          assert.deepEqual(keyRuns(JSON.stringify(answer)), [], JSON.stringify(answer));
          assert.equal(server.requests.length, 1);
        });
      }

      it('"Api Key not found" is an unknown key whatever the status: A404, A416, none that is a code, or in other case and spacing', async () => {
        await loadNode('kaleyra-whatsapp', { from: FROM, to: TO }, { config: { messagingUrl: url }, apiKey: 'GoodKey12345' });
        for (const [status, message] of [['A404', 'Api Key not found'], ['A416', 'Api Key not found'], ['A401', '  API  key NOT found. '], ['-', 'api key not found'], ['E423', 'Api Key not found']]) {
          const answer = await answering({ status, message });
          assert.equal(answer.result, 'unknown-key', `${status} "${message}": ${answer.message}`);
          assert.match(answer.message, /does not know it/);
        }
        const suspended = await answering({ status: 'A404', message: 'account suspended' });
        assert.equal(suspended.result, 'suspended', 'A404 with another message is still a suspended account');
      });
    });

    it('a deployed node\'s saved key is used for "__PWRD__" (what the dialog holds for it); simulator mode works without a key', async () => {
      await loadNode('kaleyra-whatsapp', { from: FROM, to: TO }, { config: { messagingUrl: url }, apiKey: 'GoodKey12345' });
      assert.equal((await check({ id: 'cfg', apiKey: '__PWRD__', obdUrl: urls.obdUrl })).result, 'works');
      assert.equal((await check({ simulator: true })).result, 'works');
    });
  });

  describe('the layout the hub stands for (DESIGN.md)', () => {
    const src = path.join(__dirname, '..', 'src');
    const files = (dir) => fs.readdirSync(path.join(src, dir)).filter((f) => f.endsWith('.ts')).map((f) => [`${dir}/${f}`, fs.readFileSync(path.join(src, dir, f), 'utf8')]);
    const imports = (text) => [...text.matchAll(/(?:from|require\()\s*'([^']+)'/g)].map((m) => m[1]);

    it('src/core imports nothing from src/nodes or src/simulator', () => {
      for (const [file, text] of files('core')) {
        for (const i of imports(text)) assert.ok(!/^\.\.\/(nodes|simulator)/.test(i), `${file} imports ${i}`);
      }
    });

    it('exactly one file of src/nodes reaches src/simulator', () => {
      const reaching = files('nodes').filter(([, text]) => imports(text).some((i) => i.startsWith('../simulator')));
      assert.deepEqual(reaching.map(([f]) => f), ['nodes/simulator-mode.ts']);
    });

    it('no node file calls RED.nodes.getNode but to find its own account (accountOf)', () => {
      const calls = files('nodes').flatMap(([f, text]) => [...text.matchAll(/getNode\((.*)$/gm)].map((m) => `${f}: ${m[1]}`));
      assert.deepEqual(calls, ['nodes/account.ts: String(id)) as Partial<AccountApi> | null) : null;', 'nodes/red.ts: id: string): unknown;']);
    });

    it('accountOf gives the account a node names, and nothing for another kind of node, an unknown id or none', () => {
      const { accountOf } = require('../dist/nodes/account');
      const account = { type: 'kaleyra-config', register() {} };
      const others = { out: { type: 'helper' }, odd: { type: 'function', register: 'not a function' } };
      const asked = [];
      const RED = { nodes: { getNode: (id) => (asked.push(id), id === 'acct' ? account : (others[id] ?? null)) } };
      assert.equal(accountOf(RED, 'acct'), account);
      for (const id of ['out', 'odd', 'missing']) assert.equal(accountOf(RED, id), null, id);
      for (const none of [undefined, null, '']) assert.equal(accountOf(RED, none), null, String(none));
      assert.deepEqual(asked, ['acct', 'out', 'odd', 'missing'], 'looked up by the id given, and only when one is');
    });

    it('a node whose account setting names another kind of node has no account: each msg fails naming account, no request', async () => {
      const t = await loadNode('kaleyra-whatsapp', { from: FROM, to: TO, account: 'out' }, { config: { messagingUrl: url }, apiKey: 'GoodKey12345' });
      const { output, error } = await t.run({ payload: 'hi' });
      assert.equal(output, undefined);
      assert.equal(error.error.code, 'INVALID_INPUT');
      assert.match(error.error.message, /account: no kaleyra-config node is selected/);
      assert.equal(server.requests.length, 0);
    });
  });
});

describe('the simulator control routes', function () {
  this.timeout(120_000);
  const { NodeRedProcess } = require('./helpers/node-red-process');
  const bcrypt = fromNodeRed('bcryptjs');
  const service = new Recorder();
  const PASSWORD = 'admin-password-1';
  const flows = (simulator) => [
    { id: 't1', type: 'tab', label: 'sim' },
    { id: 'acct', type: 'kaleyra-config', name: 'sim account', simulator },
    { id: 'vmn', type: 'kaleyra-vmn-in', z: 't1', account: 'acct', path: '/sim/vmn', wires: [['fwd']] },
    // Each SMS the node emits is posted to the test's server, so that "nothing emitted" can be checked.
    { id: 'fwd', type: 'http request', z: 't1', method: 'POST', ret: 'txt', url: `${service.url}/emitted`, paytoqs: 'ignore', wires: [[]] },
  ];
  let nr;

  before(async () => {
    await service.start();
    service.reply = () => ({ body: 'ok' });
    nr = new NodeRedProcess({
      name: 'admin-auth',
      flows: flows(true),
      credentials: { vmn: { token: 'vmntoken123' } },
      settings: { adminAuth: { type: 'credentials', users: [{ username: 'admin', password: bcrypt.hashSync(PASSWORD, 8), permissions: '*' }] } },
    });
    await nr.start();
  });
  after(async () => {
    await nr?.stop();
    nr?.cleanup();
    await service.stop();
  });

  /** An admin's access token, from Node-RED's own login. */
  const adminToken = async () => {
    const login = await nr.fetch('/auth/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_id: 'node-red-admin', grant_type: 'password', scope: '*', username: 'admin', password: PASSWORD }) });
    return (await login.json()).access_token;
  };
  const post = (body, headers = {}) => nr.fetch('/kaleyra-simulator/sms', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  it("with admin auth on: a stranger's POST gets 401 and nothing is emitted; an admin's is delivered to the bound vmn-in through its token", async () => {
    service.requests.length = 0;
    const stranger = await post({ from: '919876543210', message: 'forged' });
    assert.equal(stranger.status, 401);
    const otherToken = await post({ from: '919876543210', message: 'forged' }, { authorization: 'Bearer not-a-token' });
    assert.equal(otherToken.status, 401);
    const check = await nr.fetch('/kaleyra/check-account', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"simulator":true}' });
    assert.equal(check.status, 401, 'Check account needs the admin permission too');

    // The barrier: an admin's SMS, posted after the strangers' through the same route, is emitted; and it is
    // the only SMS emitted (one of theirs would have been emitted first).
    const admin = await post({ from: '919876543210', message: 'real' }, { authorization: `Bearer ${await adminToken()}` });
    assert.equal(admin.status, 200);
    const emitted = () => service.requests.map((r) => JSON.parse(r.raw.toString()).message);
    await until(() => emitted().includes('real'), 'the SMS emitted by vmn in');
    assert.deepEqual(emitted(), ['real'], "nothing of the strangers' POSTs was emitted");
  });

  it('with no simulator-mode account deployed the routes are gone: 404', async () => {
    const auth = { authorization: `Bearer ${await adminToken()}` };
    await nr.deploy(flows(false), auth);
    await until(() => /Started flows/.test(nr.log.split('Stopping flows').at(-1) ?? ''), 'the new flows', 60_000);
    // The simulator outlives a redeploy by 2 s, then its routes go with it (asked again every 250 ms).
    let status;
    await until(async () => {
      status = (await post({ from: '919876543210', message: 'late' }, auth)).status;
      if (status === 404) return true;
      await new Promise((r) => setTimeout(r, 250));
      return false;
    }, "the simulator's routes to be gone (404)");
    assert.equal(status, 404);
  });
});
