'use strict';
// `npm start` as a user runs it: a real Node-RED process on 127.0.0.1 with this package and the demo flow.
// The test spawns `node scripts/start.js` rather than `npm start`, to skip the `prestart` build: the suite's
// `pretest` has already built dist/. PORT is a free port and KALEYRA_DATA_DIR a fresh temporary directory.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { StartedNodeRed, freePort, listening, waitFor, readCredentials, ROOT } = require('./helpers/started-node-red');

const MODULE = '@flowcomms/node-red-kaleyra';
const TYPES = ['kaleyra-config', 'kaleyra-whatsapp', 'kaleyra-inbox', 'kaleyra-call-status', 'kaleyra-click2call', 'kaleyra-callback', 'kaleyra-vmn-in'];
const CREDENTIAL_SECRET = 'kaleyra-demo-only'; // scripts/start.js's
const demo = JSON.parse(fs.readFileSync(path.join(ROOT, 'examples', 'demo.json'), 'utf8'));
const LISTENERS = demo.filter((n) => n.type === 'kaleyra-callback' || n.type === 'kaleyra-vmn-in');

/** GET /flows in the v2 form: { flows, rev }. */
async function getFlows(nr) {
  const res = await nr.fetch('/flows', { headers: { 'Node-RED-API-Version': 'v2' } });
  assert.equal(res.status, 200);
  return res.json();
}

/** The Node-RED log lines at error level in the process output. */
const errorLines = (output) => output.split('\n').filter((l) => /\[(error|fatal)\]/i.test(l));

describe('npm start (scripts/start.js) as a real process', function () {
  let userDir;
  let port;
  let nr;

  before(async () => {
    userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kaleyra-start-'));
    port = await freePort();
    nr = new StartedNodeRed({ port, userDir });
    await nr.start();
    // How long a user waits: measured in this run, printed, never asserted.
    const res = await nr.fetch('/');
    await res.text();
    console.log(`      node scripts/start.js: the editor answered ${Date.now() - nr.spawnedAt} ms after spawn (port ${port})`);
  });

  after(async () => {
    nr?.kill();
    if (nr?.child && !nr.exit) await nr.exited;
    if (userDir) fs.rmSync(userDir, { recursive: true, force: true });
  });

  it('prints the editor URL once the flows started, with no error logged', () => {
    const started = nr.output.indexOf('Started flows');
    assert.ok(started >= 0, 'Node-RED logged "Started flows"');
    assert.ok(nr.output.indexOf(`open http://127.0.0.1:${port}/`) > started, 'the URL comes after it');
    assert.deepEqual(errorLines(nr.output), []);
  });

  it('sets up the data directory: the package linked in, settings, the demo flow and its encrypted credentials', () => {
    const link = path.join(userDir, 'node_modules', '@flowcomms', 'node-red-kaleyra');
    assert.ok(fs.lstatSync(link).isSymbolicLink());
    assert.equal(fs.realpathSync(link), fs.realpathSync(ROOT));
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(userDir, 'flows.json'), 'utf8')), demo);
    assert.ok(fs.existsSync(path.join(userDir, 'settings.js')));
  });

  it('GET / answers 200 with the editor', async () => {
    const res = await nr.fetch('/');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /text\/html/);
    assert.match(await res.text(), /<title>Node-RED<\/title>/);
  });

  it(`GET /nodes lists the seven types of ${MODULE}, loaded without errors`, async () => {
    const res = await nr.fetch('/nodes', { headers: { Accept: 'application/json' } });
    assert.equal(res.status, 200);
    const sets = (await res.json()).filter((s) => s.module === MODULE);
    assert.deepEqual(sets.flatMap((s) => s.types).sort(), [...TYPES].sort());
    for (const s of sets) {
      assert.equal(s.enabled, true, `${s.id} is enabled`);
      assert.equal(s.err, undefined, `${s.id} loaded without error`);
    }
    // The editor's HTML of our nodes is served too (GET /nodes with Accept: text/html).
    const html = await (await nr.fetch('/nodes', { headers: { Accept: 'text/html' } })).text();
    for (const type of TYPES) assert.ok(html.includes(`registerType('${type}'`) || html.includes(`registerType("${type}"`), `${type} in the editor HTML`);
  });

  it('GET /flows holds the demo tab and its nodes', async () => {
    const { flows } = await getFlows(nr);
    const tab = flows.find((n) => n.type === 'tab' && n.id === 'kaleyra-demo-tab');
    assert.ok(tab, 'the demo tab');
    assert.equal(tab.label, 'Kaleyra demo');
    const byId = new Map(flows.map((n) => [n.id, n]));
    for (const n of demo) {
      assert.ok(byId.has(n.id), `node ${n.id}`);
      assert.equal(byId.get(n.id).type, n.type);
    }
  });

  it('keeps the listener tokens secret: encrypted on disk, absent from GET /flows', async () => {
    const creds = readCredentials(userDir, CREDENTIAL_SECRET);
    const tokens = LISTENERS.map((n) => creds[n.id]?.token);
    for (const t of tokens) assert.match(t, /^[0-9a-f]{32}$/, 'each listener has its random token');
    assert.notEqual(tokens[0], tokens[1]);
    const flowsText = JSON.stringify(await getFlows(nr));
    const onDisk = ['flows.json', 'flows_cred.json'].map((f) => fs.readFileSync(path.join(userDir, f), 'utf8'));
    for (const t of tokens) {
      assert.ok(!flowsText.includes(t), 'no token in GET /flows');
      for (const text of onDisk) assert.ok(!text.includes(t), 'no token in clear on disk');
    }
  });

  it('the listeners are up and check their token', async () => {
    const creds = readCredentials(userDir, CREDENTIAL_SECRET);
    for (const n of LISTENERS) {
      const refused = await nr.fetch(n.path);
      assert.equal(refused.status, 403, `${n.path} without the token`);
      await refused.text();
    }
    const cb = LISTENERS.find((n) => n.type === 'kaleyra-callback');
    const q = new URLSearchParams({ token: creds[cb.id].token, status: 'SENT', mobile: '919800000001', timestamp: '1700000000' });
    const accepted = await nr.fetch(`${cb.path}?${q}`);
    assert.equal(accepted.status, 200, `${cb.path} with the token`);
    await accepted.text();
  });

  it('the built-in simulator runs: POST /kaleyra-simulator/sms answers 200 with the stored record', async () => {
    const res = await nr.fetch('/kaleyra-simulator/sms', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from: '919876500002', message: 'ping from the start test' }),
    });
    assert.equal(res.status, 200);
    const record = await res.json();
    assert.equal(record.sender, '919876500002');
    assert.equal(record.message, 'ping from the start test');
  });

  it("the demo runs: its results reach the editor's debug sidebar (/comms)", async () => {
    const comms = await nr.debugMessages();
    try {
      // The demo's inject nodes fired once at start, maybe before this client listened: fire them again,
      // as the inject buttons of the editor do.
      for (const id of ['demo-inject-text', 'demo-inject-call', 'demo-inject-sms']) {
        const res = await nr.fetch(`/inject/${id}`, { method: 'POST' });
        assert.equal(res.status, 200, `POST /inject/${id}`);
        await res.text();
      }
      const from = (id) => comms.messages.filter((m) => m.id === id).map((m) => m.value);

      const sent = await waitFor(() => from('demo-debug-sent').find((msg) => msg.ref === 'welcome-1'), 'the sent message ids');
      const [{ id: messageId, mobile }] = sent.payload;
      assert.match(messageId, /^[A-Za-z0-9]+$/);
      assert.equal(mobile, '919812345678');
      const delivery = await waitFor(
        () => from('demo-debug-events').find((e) => e.event === 'delivery' && e.id === messageId && e.state === 'READ'),
        'the READ event of the message',
      );
      assert.equal(delivery.ref, 'welcome-1');

      const call = await waitFor(() => from('demo-debug-call').find((p) => p && /^c2c_/.test(p.id)), 'a call id');
      const status = await waitFor(() => from('demo-debug-status').find((records) => records.some?.((r) => r.id === call.id)), 'the status of that call');
      assert.ok(['QUEUED', 'INPROGRESS', 'COMPLETED'].includes(status[0].status), status[0].status);
      const callEvent = await waitFor(() => from('demo-debug-events').find((e) => e.event === 'call' && e.id === call.id), 'an event of that call');
      assert.equal(callEvent.ref, 'call-1');

      const sms = await waitFor(() => from('demo-debug-sms').find((p) => p.message === 'HELLO please call me back'), 'the incoming SMS');
      assert.equal(sms.from, '919876543210');
      assert.equal(typeof sms.ts, 'number');
      // The inbox node polls every 5 s.
      await waitFor(() => from('demo-debug-inbox').find((r) => r.message === 'HELLO please call me back'), 'the SMS from inbox polling');

      assert.deepEqual(from('demo-debug-errors'), [], 'nothing on the error debug');
    } finally {
      comms.close();
    }
  });

  it('stops on SIGTERM; a second start on the same data directory keeps the deployed flows and the tokens, and relinks the package', async () => {
    // Deploy an edit, as the editor's Deploy button does.
    const tokensBefore = readCredentials(userDir, CREDENTIAL_SECRET);
    const { flows, rev } = await getFlows(nr);
    const edited = flows.map((n) => (n.id === 'kaleyra-demo-tab' ? { ...n, label: 'Kaleyra demo (edited)' } : n));
    const deploy = await nr.fetch('/flows', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'full' },
      body: JSON.stringify({ flows: edited, rev }),
    });
    assert.equal(deploy.status, 200, await deploy.text());

    const exit = await nr.stop();
    assert.deepEqual(exit, { code: 0, signal: null }, 'scripts/start.js exits cleanly');
    assert.equal(await listening(port), false, 'Node-RED stopped with it');
    assert.deepEqual(errorLines(nr.output), []);

    // A link left dangling (the checkout moved) is pointed at this checkout again.
    const link = path.join(userDir, 'node_modules', '@flowcomms', 'node-red-kaleyra');
    fs.unlinkSync(link);
    fs.symlinkSync(path.join(userDir, 'a-checkout-that-moved'), link);

    nr = new StartedNodeRed({ port, userDir });
    await nr.start();
    assert.equal(fs.realpathSync(link), fs.realpathSync(ROOT), 'the package link points at this checkout again');
    const { flows: again } = await getFlows(nr);
    assert.equal(again.find((n) => n.id === 'kaleyra-demo-tab').label, 'Kaleyra demo (edited)', 'the deployed flows are kept');
    assert.deepEqual(readCredentials(userDir, CREDENTIAL_SECRET), tokensBefore, 'the tokens are kept');
    const refused = await nr.fetch(LISTENERS[0].path);
    assert.equal(refused.status, 403, 'the listener still checks its token');
    await refused.text();

    const second = await nr.stop();
    assert.deepEqual(second, { code: 0, signal: null });
    assert.deepEqual(errorLines(nr.output), []);
    assert.equal(await listening(port), false);
  });
});

describe('npm start on a machine whose own Node.js is older than the package needs', function () {
  // The machine's own node (PATH, as npm test got it, before a leg put its Node.js first), when older.
  const { atLeast, MINIMUM, versionOf } = require('../scripts/runtime');
  const old = ['/usr/bin/node', '/usr/local/bin/node'].find((p) => versionOf(p) && !atLeast(versionOf(p), MINIMUM));

  it(`runs Node-RED on Node.js ${MINIMUM.split('.')[0]}+ from the npm registry (installed by the setup), and the demo starts`, async function () {
    if (!old) this.skip(); // every Node.js on this machine is recent enough: nothing to bring
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kaleyra-start-old-'));
    const nr = new StartedNodeRed({ port: await freePort(), userDir: dir, node: old });
    try {
      await nr.start();
      assert.match(nr.output, new RegExp(`npm start: Node\\.js ${versionOf(old).replace(/\./g, '\\.')} is older than ${MINIMUM.replace(/\./g, '\\.')}`));
      const ran = /Node\.js\s+version:\s+v(\d+\.\d+\.\d+)/.exec(nr.output);
      assert.ok(ran, `Node-RED logs its Node.js version:\n${nr.output}`);
      assert.ok(atLeast(ran[1], MINIMUM), `Node-RED runs on Node.js ${ran[1]}, at least ${MINIMUM}`);
      assert.deepEqual(errorLines(nr.output), []);
      const res = await nr.fetch('/nodes', { headers: { Accept: 'application/json' } });
      const types = (await res.json()).filter((s) => s.module === MODULE).flatMap((s) => s.types);
      assert.deepEqual(types.sort(), [...TYPES].sort());
    } finally {
      await nr.stop().catch(() => nr.kill());
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
