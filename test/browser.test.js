'use strict';
// The editor of the seven node types in a real browser: Debian's Chromium driven by playwright-core, on
// the project's own Node-RED (scripts/start.js, here with an empty flow). What a user does: find the nodes
// in the palette, drag them onto the workspace, open each edit dialog, type invalid values and see them
// marked, fix them, click Done, deploy; then GET /flows shows what was typed. The config node's API key
// typed in the browser reaches the runtime (a whatsapp send carries it) but no response the browser gets
// afterwards contains it. The help sidebar shows each node's help. Screenshots of the palette and of each
// dialog, and of the demo with its debug output, go to docs/images/ with UPDATE_SCREENSHOTS=1 (README uses
// them, and docs/images/manifest.json records what they show), else to a temporary folder. Chromium is
// installed by npm test's setup (test/setup.js), never here.
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { launchChromium } = require('./helpers/chromium');
const { startNodeRed, EditorPage } = require('./helpers/browser');
const { readCredentials, waitFor, ROOT } = require('./helpers/started-node-red');
const { Recorder } = require('./helpers/recorder');

const IMAGES = process.env.UPDATE_SCREENSHOTS ? path.join(ROOT, 'docs', 'images') : fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'kaleyra-shots-'));
const CREDENTIAL_SECRET = 'kaleyra-demo-only'; // scripts/start.js
const KEY = `BrowserKey${crypto.randomBytes(12).toString("hex")}`;
const PUBLIC_URL = 'https://nodered.example.com';

/** The palette's entries of category "kaleyra" and their labels (the config node is not in the palette). */
const PALETTE = {
  'kaleyra-whatsapp': 'whatsapp',
  'kaleyra-inbox': 'vmn inbox',
  'kaleyra-call-status': 'call status',
  'kaleyra-click2call': 'click to call',
  'kaleyra-callback': 'callback in',
  'kaleyra-vmn-in': 'vmn in',
};

/** The demo's debug nodes (examples/demo.json), by name. */
const DEMO_DEBUG = ['sent: message ids', 'callback events', 'vmn in: incoming SMS', 'inbox: new records', 'click to call: call id', 'call status', 'errors (code and reason)'];

/** The first paragraph of a node's help, as text. */
function helpSummary(type) {
  const html = fs.readFileSync(path.join(ROOT, 'nodes', 'locales', 'en-US', `${type}.html`), 'utf8');
  const p = /<p>([\s\S]*?)<\/p>/.exec(html)[1];
  return p.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim();
}

describe('editor in Chromium', function () {
  this.timeout(120000);
  let nr;
  let browser;
  let editor;
  let recorder;
  const ids = {};

  before(async function () {
    this.timeout(120_000);
    recorder = new Recorder();
    await recorder.start();
    [nr, browser] = await Promise.all([startNodeRed({ flows: [] }), launchChromium()]);
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    editor = new EditorPage(page, nr.url);
    await editor.open('kaleyra-vmn-in');
    fs.mkdirSync(IMAGES, { recursive: true });
  });

  after(async function () {
    this.timeout(60000);
    await browser?.close();
    if (nr) {
      try {
        await nr.stop();
      } catch {
        nr.kill();
      }
      fs.rmSync(nr.userDir, { recursive: true, force: true });
    }
    await recorder?.stop();
  });

  // After a failed test, close the dialogs it left open, so that the next one starts from the workspace.
  afterEach(async function () {
    if (this.currentTest.state !== 'failed' || !editor) return;
    await editor.closeAll();
  });

  /** Neither a console error nor an uncaught exception in the page so far. */
  function noErrors() {
    assert.deepEqual(editor.errors, [], 'no console errors');
  }

  /** Types a value, checks it is marked invalid, types the fixed value, checks the mark is gone. */
  async function invalidThenFixed(selector, bad, good) {
    await editor.type(selector, bad);
    assert.equal(await editor.marked(selector), true, `${selector} = ${JSON.stringify(bad)} is marked invalid`);
    await editor.type(selector, good);
    assert.equal(await editor.marked(selector), false, `${selector} = ${JSON.stringify(good)} is valid`);
  }

  async function screenshot(type) {
    await editor.evaluate(() => document.activeElement?.blur());
    await editor.tray().screenshot({ path: path.join(IMAGES, `${type}-dialog.png`) });
  }

  /**
   * What a test needs that other tests make (the account, a node of each type with what its dialog test
   * typed, the deployed flow), by kind, with the id of the node that shows it is there. A test makes what
   * it needs with the same steps (and checks) as the test about it, unless a test before it in this run
   * did: so each test passes alone (--grep) as well as in order, where each thing is made once.
   */
  const made = {};
  const MAKE = {
    account: () => makeAccount(),
    whatsapp: () => fillWhatsapp(),
    inbox: () => makeInbox(),
    callStatus: () => makeCallStatus(),
    callback: () => makeCallback(),
    click2call: () => makeClick2call(),
    vmnIn: () => makeVmnIn(),
    deployed: () => deployAll(),
  };
  async function ensure(...kinds) {
    for (const kind of kinds) {
      if (made[kind] && (await editor.evaluate((id) => !!RED.nodes.node(id), made[kind]))) continue;
      made[kind] = await MAKE[kind]();
    }
  }

  it('the palette lists the six flow nodes under "kaleyra" with their labels, colour and icons', async () => {
    const entries = await editor.evaluate(() =>
      $('#red-ui-palette-container-kaleyra .red-ui-palette-node')
        .map((i, el) => ({
          type: el.getAttribute('data-palette-type'),
          label: $(el).find('.red-ui-palette-label').text().replace(/\s+/g, ' ').trim(),
          colour: getComputedStyle(el).backgroundColor,
          icon: $(el).find('.red-ui-palette-icon').css('background-image'),
        }))
        .get(),
    );
    assert.deepEqual(Object.fromEntries(entries.map((e) => [e.type, e.label])), PALETTE);
    for (const e of entries) {
      assert.equal(e.colour, 'rgb(192, 222, 237)', `${e.type} colour`);
      assert.match(e.icon, new RegExp(`${e.type}\\.svg`), `${e.type} icon`);
    }
    const header = await editor.evaluate(() => $('#red-ui-palette-header-kaleyra').text().trim());
    assert.equal(header, 'kaleyra');
    // The seventh type is the account: a config node, listed in the Configuration nodes sidebar instead.
    assert.equal(await editor.evaluate(() => RED.nodes.getType('kaleyra-config').category), 'config');

    const category = editor.page.locator('#red-ui-palette-container-kaleyra');
    await category.scrollIntoViewIfNeeded();
    await category.screenshot({ path: path.join(IMAGES, 'palette.png') });
    noErrors();
  });

  it('the shared editor code comes once from the package\'s resources folder, with the runtime\'s defaults', async () => {
    await editor.settle();
    const fetched = editor.responses.filter((r) => r.url.endsWith('/resources/@flowcomms/node-red-kaleyra/kaleyra-editor.js'));
    assert.deepEqual(fetched.map((r) => r.status), [200], 'fetched once');
    const { NUMBER_SETTINGS } = require('../dist/nodes/account-settings');
    const { DEFAULT_BASE_URLS } = require('../dist/core/account-config');
    const defaults = await editor.evaluate(() => {
      const d = RED.nodes.getType('kaleyra-config').defaults;
      return Object.fromEntries(Object.keys(d).map((k) => [k, d[k].value]));
    });
    for (const [name, range] of Object.entries(NUMBER_SETTINGS)) assert.equal(defaults[name], range.default, name);
    for (const name of ['messagingUrl', 'obdUrl', 'voiceUrl']) assert.equal(defaults[name], DEFAULT_BASE_URLS[name], name);
    noErrors();
  });

  async function makeAccount() {
    ids.whatsapp = await editor.dragFromPalette('kaleyra-whatsapp', 160, 80);
    await editor.openDialog(ids.whatsapp);
    await editor.addConfigNode('account');
    await editor.waitForTray(2);

    assert.equal(await editor.page.locator('#node-config-input-apiKey').getAttribute('type'), 'password');
    assert.equal(await editor.marked('#node-config-input-apiKey'), true, 'the key is required without the simulator');
    await editor.type('#node-config-input-name', 'acme');
    await invalidThenFixed('#node-config-input-messagingUrl', 'ftp://x', 'https://global.kaleyra.com');
    await invalidThenFixed('#node-config-input-vmnUrl', 'not a url', 'https://vmn.example.com');
    await invalidThenFixed('#node-config-input-obdUrl', 'http//obd', 'https://obd.kaleyra.com');
    await invalidThenFixed('#node-config-input-publicUrl', 'nodered.example.com', PUBLIC_URL);
    await invalidThenFixed('#node-config-input-timeout', '0', '10');
    await invalidThenFixed('#node-config-input-retries', '11', '1');
    await invalidThenFixed('#node-config-input-concurrency', 'many', '4');
    await invalidThenFixed('#node-config-input-rateLimit', '-1', '2.5');
    await invalidThenFixed('#node-config-input-queueSize', '0', '50');
    await invalidThenFixed('#node-config-input-apiKey', 'key-with-dashes', KEY); // as the runtime: letters and digits, 8 or more
    await invalidThenFixed('#node-config-input-apiKey', 'short1', KEY);
    assert.equal(await editor.marked('#node-config-input-apiKey'), false);
    // Every label of the dialog stays on one line ("WhatsApp URL", "VMN inbox URL" used to wrap).
    const heights = await editor.page.locator('.kaleyra-config-form .form-row > label:first-child').evaluateAll((labels) =>
      labels.filter((l) => l.offsetParent).map((l) => [l.textContent.trim(), l.getBoundingClientRect().height, parseFloat(getComputedStyle(l).lineHeight) || 20]),
    );
    assert.ok(heights.length >= 10, JSON.stringify(heights));
    for (const [label, height, line] of heights) assert.ok(height < line * 1.5, `"${label}" wraps (${height}px high, line ${line}px)`);

    // The simulator needs neither key nor service URLs: their rows are hidden while it is on.
    await editor.page.locator('#node-config-input-simulator').check();
    assert.equal(await editor.page.locator('#node-config-input-messagingUrl').isVisible(), false);
    assert.equal(await editor.page.locator('#node-config-input-apiKey').isVisible(), false);
    assert.equal(await editor.page.locator('.kaleyra-config-simulator-tip').isVisible(), true);
    await editor.page.locator('#node-config-input-simulator').uncheck();
    assert.equal(await editor.page.locator('#node-config-input-apiKey').isVisible(), true);

    await screenshot('kaleyra-config');
    // For the rest of the tests the account's services are the local recorder.
    for (const prop of ['messagingUrl', 'vmnUrl', 'obdUrl', 'voiceUrl']) await editor.type(`#node-config-input-${prop}`, recorder.url);
    // Check account: one harmless read with what is typed, before any deploy; the answer in plain words.
    const reads = recorder.requests.length;
    await editor.page.locator('#kaleyra-config-check').click();
    await editor.page.locator('#kaleyra-config-check-result .kaleyra-config-check-works').waitFor();
    assert.match(await editor.page.locator('#kaleyra-config-check-result').textContent(), /Works\. The service answered a read made with this key/);
    assert.equal(recorder.requests.length, reads + 1);
    assert.equal(recorder.last.query.api_key, KEY, 'the typed key, not deployed yet');
    assert.equal(recorder.last.query.method, 'voice.status');
    await screenshot('kaleyra-config-check');
    await editor.done();
    ids.config = await editor.page.locator('#node-input-account').inputValue();
    assert.equal(await editor.evaluate((id) => RED.nodes.node(id)?.type, ids.config), 'kaleyra-config');
    assert.equal(await editor.page.locator('#node-input-account option:checked').textContent(), 'acme');
    await editor.done();
    noErrors();
    return ids.config;
  }

  it('kaleyra-config: added from a dialog; URLs, numbers and the key are checked; the key is a password field', async () => {
    made.account = await makeAccount();
  });

  async function fillWhatsapp() {
    await ensure('account');
    await editor.openDialog(ids.whatsapp);
    assert.equal(await editor.page.locator('#node-input-account').inputValue(), ids.config);
    await editor.type('#node-input-from', 'abc');
    assert.equal(await editor.marked('#node-input-from'), true, 'a "from" with letters is marked');
    // The same text as a msg property is valid: only literal values are checked.
    await editor.chooseType('from', 'msg');
    assert.equal(await editor.marked('#node-input-from'), false, 'msg.abc is a valid property');
    await editor.chooseType('from', 'str');
    assert.equal(await editor.marked('#node-input-from'), true);
    await editor.type('#node-input-from', '+919800000001');
    assert.equal(await editor.marked('#node-input-from'), false);
    await invalidThenFixed('#node-input-to', '919800000002, 12', '919800000002,919800000003');
    await invalidThenFixed('#node-input-callback', 'ftp://x', 'https://example.com/status');
    await editor.type('#node-input-name', 'send');
    // Report to: none, so the Callback row shows.
    assert.equal(await editor.page.locator('.kaleyra-whatsapp-callback-row').isVisible(), true);
    await screenshot('kaleyra-whatsapp');
    await editor.done();
    assert.equal(await editor.valid(ids.whatsapp), true);
    noErrors();
    return ids.whatsapp;
  }

  it('kaleyra-whatsapp: numbers and the callback URL are checked; literal checks follow the TypedInput type', async () => {
    made.whatsapp = await fillWhatsapp();
  });

  async function makeInbox() {
    await ensure('account');
    ids.inbox = await editor.dragFromPalette('kaleyra-inbox', 160, 160);
    await editor.openDialog(ids.inbox);
    if ((await editor.page.locator('#node-input-account').inputValue()) !== ids.config) {
      await editor.page.locator('#node-input-account').selectOption(ids.config);
    }
    await invalidThenFixed('#node-input-number', 'VMN', '919800000000');
    await editor.type('#node-input-keyword', 'HELLO');
    await invalidThenFixed('#node-input-mobile', '12', '919812345678');
    await editor.type('#node-input-fromdate', '2024-05-01 00:00:00');
    await invalidThenFixed('#node-input-limit', '0', '20');
    await invalidThenFixed('#node-input-page', '1.5', '2');
    await invalidThenFixed('#node-input-pollInterval', '90000', '60');
    assert.equal(await editor.page.locator('.kaleyra-inbox-page-row').isVisible(), false, 'no Page setting while polling');
    assert.equal(await editor.page.locator('.kaleyra-inbox-poll-tip').isVisible(), true);
    await editor.type('#node-input-pollInterval', '0');
    assert.equal(await editor.page.locator('.kaleyra-inbox-page-row').isVisible(), true);
    await editor.type('#node-input-name', 'inbox');
    await screenshot('kaleyra-inbox');
    await editor.done();
    assert.equal(await editor.valid(ids.inbox), true);
    noErrors();
    return ids.inbox;
  }

  it('kaleyra-inbox: filters, paging and polling are checked; Page is hidden while polling', async () => {
    made.inbox = await makeInbox();
  });

  async function makeCallStatus() {
    await ensure('account');
    ids.callStatus = await editor.dragFromPalette('kaleyra-call-status', 160, 240);
    await editor.openDialog(ids.callStatus);
    if ((await editor.page.locator('#node-input-account').inputValue()) !== ids.config) {
      await editor.page.locator('#node-input-account').selectOption(ids.config);
    }
    await editor.page.locator('#node-input-method').selectOption('voice.groupStatus');
    await invalidThenFixed('#node-input-callId', 'call 1', 'c-1234');
    await invalidThenFixed('#node-input-mobile', '+919800000001', '919800000001');
    await screenshot('kaleyra-call-status');
    await editor.done();
    assert.equal(await editor.valid(ids.callStatus), true);
    noErrors();
    return ids.callStatus;
  }

  it('kaleyra-call-status: the call id and the number are checked', async () => {
    made.callStatus = await makeCallStatus();
  });

  async function makeCallback() {
    await ensure('account');
    ids.callback = await editor.dragFromPalette('kaleyra-callback', 160, 320);
    await editor.openDialog(ids.callback);
    const generated = await editor.page.locator('#node-input-token').inputValue();
    assert.match(generated, /^[0-9a-f]{32}$/, 'a new node gets a random token');
    // A token of one's own (and the same screenshot on every run).
    const token = '0123456789abcdef0123456789abcdef';
    await editor.type('#node-input-token', token);
    await invalidThenFixed('#node-input-path', 'kaleyra/events', '/kaleyra/events');
    // The delivery watchdog: whole minutes, at most 7 days.
    await invalidThenFixed('#node-input-overdueAfter', '10081', '30');
    await editor.type('#node-input-name', 'events');
    // Fail closed: with the token cleared, the tip says every request is refused, and the opt-out shows.
    assert.equal(await editor.page.locator('.kaleyra-callback-open-row').isVisible(), false, 'no opt-out while a token is set');
    await editor.type('#node-input-token', '');
    assert.equal(await editor.page.locator('.kaleyra-callback-notoken').isVisible(), true);
    assert.match(await editor.page.locator('.kaleyra-callback-notoken').textContent(), /every request is refused \(403\)/);
    assert.equal(await editor.page.locator('#node-input-acceptWithoutToken').isVisible(), true);
    await editor.type('#node-input-token', token);
    await editor.page.locator('#node-input-account').selectOption(ids.config);
    await editor.page.locator('#kaleyra-callback-base').selectOption(PUBLIC_URL);
    assert.equal(await editor.page.locator('#kaleyra-callback-url').textContent(), `${PUBLIC_URL}/kaleyra/events?token=${token}`);
    assert.match(await editor.page.locator('#kaleyra-callback-call-url').textContent(), /&caller=\{caller\}&receiver=\{receiver\}/);
    await screenshot('kaleyra-callback');
    await editor.done();
    assert.equal(await editor.valid(ids.callback), true);
    noErrors();
    return ids.callback;
  }

  it('kaleyra-callback: the path and the watchdog\'s minutes are checked; a token is generated; the URLs are shown', async () => {
    made.callback = await makeCallback();
  });

  it('kaleyra-callback of an older flow (no account) takes the account of the sends that report to it; an imported one gets a token', async () => {
    await ensure('account');
    await editor.evaluate(([account]) => {
      RED.nodes.import([
        { id: 'old-cb', type: 'kaleyra-callback', z: RED.workspaces.active(), name: 'old', path: '/kaleyra/old', x: 500, y: 500, wires: [[]] },
        { id: 'old-wa', type: 'kaleyra-whatsapp', z: RED.workspaces.active(), account, reportTo: 'old-cb', x: 300, y: 500, wires: [[]] },
      ]);
    }, [ids.config]);
    assert.equal(await editor.valid('old-cb'), false, 'a callback node that sends report to needs their account');
    await editor.evaluate(() => RED.editor.edit(RED.nodes.node('old-cb')));
    await editor.waitForTray(1);
    assert.equal(await editor.page.locator('#node-input-account').inputValue(), ids.config, 'filled from the senders');
    assert.match(await editor.page.locator('#node-input-token').inputValue(), /^[0-9a-f]{32}$/, 'an imported listener (credentials are not exported) gets a token');
    await editor.done();
    assert.equal(await editor.valid('old-cb'), true);
    await editor.evaluate(() => {
      for (const id of ['old-wa', 'old-cb']) RED.nodes.remove(id);
      RED.view.redraw(true);
    });
    noErrors();
  });

  async function makeClick2call() {
    await ensure('account', 'callback');
    ids.click2call = await editor.dragFromPalette('kaleyra-click2call', 160, 400);
    await editor.openDialog(ids.click2call);
    if ((await editor.page.locator('#node-input-account').inputValue()) !== ids.config) {
      await editor.page.locator('#node-input-account').selectOption(ids.config);
    }
    await invalidThenFixed('#node-input-caller', '12345', '9800000001-9800000002');
    await invalidThenFixed('#node-input-receiver', 'ivr:main^9800000003', '9800000003');
    await invalidThenFixed('#node-input-callerId', '98', '9800000009');
    await invalidThenFixed('#node-input-retry', '5', '1');
    // A msg property is not a literal: not range-checked.
    await editor.chooseType('retry', 'msg');
    await editor.type('#node-input-retry', 'payload.retry');
    assert.equal(await editor.marked('#node-input-retry'), false);
    await editor.chooseType('retry', 'num');
    await invalidThenFixed('#node-input-retry', '5', '2');
    await invalidThenFixed('#node-input-delay', '-1', '30');
    await invalidThenFixed('#node-input-custom', 'ref-1', 'ref1');
    await invalidThenFixed('#node-input-meta', '{bad', '{"order":42}');
    await editor.type('#node-input-name', 'call');
    assert.equal(await editor.page.locator('.kaleyra-click2call-callback-row').isVisible(), true);
    await editor.page.locator('#node-input-reportTo').selectOption(ids.callback);
    assert.equal(await editor.page.locator('.kaleyra-click2call-callback-row').isVisible(), false, 'Report to replaces the Callback');
    assert.equal(await editor.page.locator('.kaleyra-click2call-report-tip').isVisible(), true);
    await screenshot('kaleyra-click2call');
    await editor.done();
    assert.equal(await editor.valid(ids.click2call), true);
    noErrors();
    return ids.click2call;
  }

  it('kaleyra-click2call: legs, retry, delay, reference and meta are checked; Report to hides the Callback', async () => {
    made.click2call = await makeClick2call();
  });

  async function makeVmnIn() {
    ids.vmnIn = await editor.dragFromPalette('kaleyra-vmn-in', 160, 480);
    await editor.openDialog(ids.vmnIn);
    await invalidThenFixed('#node-input-path', '/kaleyra//sms', '/kaleyra/sms');
    await editor.type('#node-input-name', 'sms');
    const first = await editor.page.locator('#node-input-token').inputValue();
    assert.match(first, /^[0-9a-f]{32}$/);
    await editor.page.locator('#kaleyra-vmn-in-regenerate').click();
    const second = await editor.page.locator('#node-input-token').inputValue();
    assert.match(second, /^[0-9a-f]{32}$/);
    assert.notEqual(second, first, 'the regenerate button makes a new token');
    await editor.type('#node-input-token', 'fedcba9876543210fedcba9876543210');
    assert.match(await editor.page.locator('#kaleyra-vmn-in-url').textContent(), /\/kaleyra\/sms\?token=fedcba9876543210fedcba9876543210&from=\{from\}/);
    await screenshot('kaleyra-vmn-in');
    await editor.done();
    assert.equal(await editor.valid(ids.vmnIn), true);
    noErrors();
    return ids.vmnIn;
  }

  it('kaleyra-vmn-in: the path is checked; the trigger URL is shown', async () => {
    made.vmnIn = await makeVmnIn();
  });

  /** Every node made as its test makes it, an inject wired to the whatsapp node, and Deploy. */
  async function deployAll() {
    await ensure('whatsapp', 'inbox', 'callStatus', 'callback', 'click2call', 'vmnIn');
    // An inject node wired to the whatsapp node, to send one message after the deploy.
    ids.inject = await editor.dragFromPalette('inject', 440, 80);
    await editor.evaluate((id) => {
      const n = RED.nodes.node(id);
      Object.assign(n, { props: [{ p: 'payload' }], payload: 'hello', payloadType: 'str', changed: true });
      n.dirty = true;
    }, ids.inject);
    await editor.wire(ids.inject, ids.whatsapp);
    const links = await editor.evaluate(([from, to]) => RED.nodes.filterLinks({ source: RED.nodes.node(from), target: RED.nodes.node(to) }).length, [ids.inject, ids.whatsapp]);
    assert.equal(links, 1, 'inject wired to whatsapp');
    await editor.deploy();
    noErrors();
    return ids.inject;
  }

  it('deploys; GET /flows holds what was typed in the dialogs', async () => {
    made.deployed = await deployAll();

    const flows = await (await nr.fetch('/flows')).json();
    const byId = new Map(flows.map((n) => [n.id, n]));
    const pick = (id, keys) => Object.fromEntries(keys.map((k) => [k, byId.get(id)?.[k]]));
    assert.deepEqual(
      pick(ids.config, ['type', 'name', 'simulator', 'messagingUrl', 'vmnUrl', 'obdUrl', 'voiceUrl', 'publicUrl', 'timeout', 'retries', 'concurrency', 'rateLimit', 'queueSize']),
      {
        type: 'kaleyra-config',
        name: 'acme',
        simulator: false,
        messagingUrl: recorder.url,
        vmnUrl: recorder.url,
        obdUrl: recorder.url,
        voiceUrl: recorder.url,
        publicUrl: PUBLIC_URL,
        timeout: '10',
        retries: '1',
        concurrency: '4',
        rateLimit: '2.5',
        queueSize: '50',
      },
    );
    assert.deepEqual(pick(ids.whatsapp, ['name', 'account', 'from', 'fromType', 'to', 'toType', 'callback', 'callbackType', 'reportTo']), {
      name: 'send',
      account: ids.config,
      from: '+919800000001',
      fromType: 'str',
      to: '919800000002,919800000003',
      toType: 'str',
      callback: 'https://example.com/status',
      callbackType: 'str',
      reportTo: '',
    });
    assert.equal(String(byId.get(ids.inbox).pollInterval), '0');
    assert.deepEqual(pick(ids.inbox, ['name', 'account', 'number', 'keyword', 'mobile', 'fromdate', 'todate', 'limit', 'limitType', 'page', 'pageType']), {
      name: 'inbox',
      account: ids.config,
      number: '919800000000',
      keyword: 'HELLO',
      mobile: '919812345678',
      fromdate: '2024-05-01 00:00:00',
      todate: '',
      limit: '20',
      limitType: 'num',
      page: '2',
      pageType: 'num',
    });
    assert.deepEqual(pick(ids.callStatus, ['account', 'method', 'callId', 'callIdType', 'mobile']), {
      account: ids.config,
      method: 'voice.groupStatus',
      callId: 'c-1234',
      callIdType: 'str',
      mobile: '919800000001',
    });
    assert.deepEqual(pick(ids.callback, ['name', 'path', 'overdueAfter', 'credentials']), { name: 'events', path: '/kaleyra/events', overdueAfter: '30', credentials: undefined });
    assert.deepEqual(pick(ids.click2call, ['name', 'caller', 'receiver', 'callerId', 'retry', 'retryType', 'delay', 'delayType', 'custom', 'meta', 'metaType', 'reportTo']), {
      name: 'call',
      caller: '9800000001-9800000002',
      receiver: '9800000003',
      callerId: '9800000009',
      retry: '2',
      retryType: 'num',
      delay: '30',
      delayType: 'num',
      custom: 'ref1',
      meta: '{"order":42}',
      metaType: 'json',
      reportTo: ids.callback,
    });
    assert.deepEqual(pick(ids.vmnIn, ['name', 'path']), { name: 'sms', path: '/kaleyra/sms' });
    // The listeners are up on the paths typed, with the tokens the dialogs generated.
    const creds = readCredentials(nr.userDir, CREDENTIAL_SECRET);
    assert.equal(creds[ids.callback].token, '0123456789abcdef0123456789abcdef');
    assert.equal(creds[ids.vmnIn].token, 'fedcba9876543210fedcba9876543210');
    const refused = await nr.fetch('/kaleyra/sms?from=919800000001&message=hi&ts=1700000000');
    assert.equal(refused.status, 403);
    await refused.text();
    const accepted = await nr.fetch(`/kaleyra/sms?token=${creds[ids.vmnIn].token}&from=919800000001&message=hi&ts=1700000000`);
    assert.equal(accepted.status, 200);
    await accepted.text();
  });

  it('the key typed in the browser is used by the runtime, but never sent back to the browser', async () => {
    await ensure('deployed');
    // Stored (encrypted) with the flow's credentials.
    assert.equal(readCredentials(nr.userDir, CREDENTIAL_SECRET)[ids.config].apiKey, KEY);
    assert.ok(!fs.readFileSync(path.join(nr.userDir, 'flows_cred.json'), 'utf8').includes(KEY), 'not in clear on disk');
    assert.ok(!fs.readFileSync(path.join(nr.userDir, 'flows.json'), 'utf8').includes(KEY));

    // Used: clicking the inject button sends a WhatsApp message to the account's URL with the key.
    const before = recorder.requests.length;
    await editor.page.locator(`g.red-ui-flow-node-group[id="${ids.inject}"] .red-ui-flow-node-button rect.red-ui-flow-node-button-button`).click();
    const started = Date.now();
    while (recorder.requests.length === before && Date.now() - started < 10000) await new Promise((r) => setTimeout(r, 50));
    const sent = recorder.requests[before];
    assert.ok(sent, 'the whatsapp node sent a request to the account URL');
    assert.equal(sent.fields.api_key ?? sent.query.api_key, KEY);

    // A fresh editor (as after a reload): the dialog shows a placeholder, the browser gets has_apiKey.
    await editor.settle();
    const reloadedAt = editor.responses.length;
    await editor.open('kaleyra-vmn-in');
    await editor.openDialog(ids.whatsapp);
    await editor.editConfigNode('account');
    await editor.waitForTray(2);
    assert.equal(await editor.page.locator('#node-config-input-apiKey').inputValue(), '__PWRD__');
    assert.equal(await editor.marked('#node-config-input-apiKey'), false, 'a saved key counts as given');
    const creds = await (await nr.fetch(`/credentials/kaleyra-config/${ids.config}`)).json();
    assert.deepEqual(creds, { has_apiKey: true, has_redisPassword: false });
    await editor.page.locator('#node-config-dialog-cancel').click();
    await editor.waitForDepth(1);
    await editor.page.locator('#node-dialog-cancel').click();
    await editor.waitForDepth(0);

    // Nothing the browser received since the start (pages, scripts, GET /flows, /credentials, /comms) holds it.
    await editor.settle();
    const credentialResponses = editor.responses.slice(reloadedAt).filter((r) => r.url.includes(`/credentials/kaleyra-config/${ids.config}`));
    assert.ok(credentialResponses.length > 0, 'the reloaded dialog asked for the credentials');
    for (const r of credentialResponses) assert.deepEqual(JSON.parse(r.body), { has_apiKey: true, has_redisPassword: false });
    assert.ok(editor.responses.length > 20, `${editor.responses.length} responses recorded`);
    const leaks = [...editor.responses.filter((r) => r.body.includes(KEY)).map((r) => r.url), ...editor.frames.filter((f) => f.includes(KEY))];
    assert.deepEqual(leaks, [], 'the key is in no response and no /comms frame');
    noErrors();
  });

  it('the help sidebar shows the help of each node', async () => {
    await ensure('whatsapp', 'inbox', 'callStatus', 'callback', 'click2call', 'vmnIn');
    const check = async (type, label) => {
      await editor.page.waitForFunction((l) => $('.red-ui-help-title').text() === l, label);
      const text = await editor.evaluate(() => $('.red-ui-help-title').parent().find('.red-ui-help p').first().text().replace(/\s+/g, ' ').trim());
      assert.equal(text, helpSummary(type), `${type} help summary`);
      const headings = await editor.evaluate(() => $('.red-ui-help-title').parent().find('.red-ui-help h3').map((i, h) => $(h).text().trim()).get());
      assert.ok(headings.includes('Details'), `${type} help has Details (${headings.join(', ')})`);
    };
    await editor.showHelp();
    for (const [type, label] of Object.entries(PALETTE)) {
      const [id] = await editor.nodeIds(type);
      await editor.shape(id).click();
      await check(type, label);
    }
    // The config node's help, from its dialog's help button.
    await editor.openDialog(ids.whatsapp);
    await editor.editConfigNode('account');
    await editor.waitForTray(2);
    await editor.tray().locator('.red-ui-tray-footer-left button:has(i.fa-book)').click();
    await check('kaleyra-config', 'kaleyra account');
    await editor.page.locator('#node-config-dialog-cancel').click();
    await editor.waitForDepth(1);
    await editor.page.locator('#node-dialog-cancel').click();
    await editor.waitForDepth(0);
    noErrors();
  });

  it('the demo flow and every example open in the editor with all their nodes valid', async () => {
    const files = fs.readdirSync(path.join(ROOT, 'examples')).filter((f) => f.endsWith('.json'));
    for (const [i, file] of files.entries()) {
      // Fresh ids (references such as account, reportTo and wires follow), so the files do not clash.
      let text = fs.readFileSync(path.join(ROOT, 'examples', file), 'utf8');
      for (const { id } of JSON.parse(text)) text = text.split(JSON.stringify(id)).join(JSON.stringify(`x${i}-${id}`));
      const flow = JSON.parse(text);
      const result = await editor.evaluate(([nodes, prefix]) => {
        RED.nodes.import(nodes, { addFlow: true });
        const ours = [];
        // (a callback that returns false ends RED.nodes.eachNode's loop)
        const collect = (n) => {
          if (n.id.startsWith(prefix) && n.type.startsWith('kaleyra-')) ours.push(n);
        };
        RED.nodes.eachNode(collect);
        RED.nodes.eachConfig(collect);
        return {
          count: ours.length,
          invalid: ours.filter((n) => !RED.editor.validateNode(n)).map((n) => `${n.type} ${n.name || n.id}: ${JSON.stringify(n.validationErrors)}`),
        };
      }, [flow, `x${i}-`]);
      assert.equal(result.count, flow.filter((n) => n.type.startsWith('kaleyra-')).length, `${file}: imported`);
      assert.deepEqual(result.invalid, [], `${file}: invalid nodes`);
    }
    noErrors();
  });

  it('speaks Japanese in a Japanese browser: the whatsapp dialog, and a status the runtime sends as a catalog key (screenshot)', async () => {
    await ensure('deployed'); // the page opens the deployed flows
    const ja = JSON.parse(fs.readFileSync(path.join(ROOT, 'nodes', 'locales', 'ja', 'kaleyra-whatsapp.json'), 'utf8'))['kaleyra-whatsapp'];
    const jaConfig = JSON.parse(fs.readFileSync(path.join(ROOT, 'nodes', 'locales', 'ja', 'kaleyra-config.json'), 'utf8'))['kaleyra-config'];
    const context = await browser.newContext({ locale: 'ja-JP', viewport: { width: 1400, height: 1000 } });
    try {
      const jaEditor = new EditorPage(await context.newPage(), nr.url);
      await jaEditor.open('kaleyra-vmn-in');
      await jaEditor.openDialog(ids.whatsapp);
      assert.equal((await jaEditor.page.locator('label[for="node-input-from"] span').textContent()).trim(), ja.label.from);
      assert.equal((await jaEditor.page.locator('label[for="node-input-account"] span').textContent()).trim(), ja.label.account);
      await jaEditor.evaluate(() => document.activeElement?.blur());
      await jaEditor.tray().screenshot({ path: path.join(IMAGES, 'kaleyra-whatsapp-dialog-ja.png') });
      await jaEditor.page.locator('#node-dialog-cancel').click();
      await jaEditor.waitForDepth(0);
      // A vmn in without a token (as imported), deployed: its status, sent as a key, shows in Japanese.
      await jaEditor.evaluate(() => {
        RED.nodes.import([{ id: 'ja-vmn', type: 'kaleyra-vmn-in', z: RED.workspaces.active(), path: '/kaleyra/ja', x: 700, y: 600, wires: [[]] }]);
        RED.nodes.dirty(true);
        RED.view.redraw(true);
      });
      await jaEditor.deploy();
      await jaEditor.page.waitForFunction((text) => [...document.querySelectorAll('.red-ui-flow-node-status-label')].some((l) => l.textContent === text), jaConfig.status.noToken, { timeout: 15_000 });
      await jaEditor.evaluate(() => {
        RED.nodes.remove('ja-vmn');
        RED.nodes.dirty(true);
        RED.view.redraw(true);
      });
      await jaEditor.deploy();
    } finally {
      await context.close();
    }
  });
});

describe('the demo flow in Chromium (npm start)', function () {
  this.timeout(180_000);
  let nr;
  let browser;

  before(async function () {
    this.timeout(120_000);
    [nr, browser] = await Promise.all([startNodeRed(), launchChromium()]);
  });
  after(async function () {
    this.timeout(60000);
    await browser?.close();
    if (nr) {
      await nr.stop().catch(() => nr.kill());
      fs.rmSync(nr.userDir, { recursive: true, force: true });
    }
  });

  /** The debug messages the page received over /comms, as the sidebar shows them: node name and value. */
  function debugReceived(editor) {
    return editor.frames.flatMap((frame) => {
      let list;
      try {
        list = JSON.parse(frame);
      } catch {
        return [];
      }
      return (Array.isArray(list) ? list : [list])
        .filter((m) => m && m.topic === 'debug')
        .map(({ data }) => {
          let value = data.msg;
          try {
            value = JSON.parse(data.msg);
          } catch {
            // a plain string
          }
          return { name: data.name, value };
        });
    });
  }

  /**
   * One round of the demo's four injects as the debug sidebar received it, once all of it has come: the
   * two sends and every delivery event of their recipients, the call with its two events and its status
   * (read a second later, after every event of the round), the SMS from vmn in and from inbox polling.
   */
  function demoRound(received) {
    const of = (name) => received.filter((m) => m.name === name).map((m) => m.value);
    const events = of('callback events');
    const deliveries = (id) => events.filter((e) => e.event === 'delivery' && e.id === id);
    const text = of('sent: message ids').find((m) => m.ref === 'welcome-1');
    const template = of('sent: message ids').find((m) => m.ref === 'order-42');
    const call = of('click to call: call id').find((p) => /^c2c_/.test(p?.id));
    const status = call && of('call status').find((records) => records.some?.((r) => r.id === call.id));
    const sms = of('vmn in: incoming SMS').find((p) => p?.message === 'HELLO please call me back');
    const polled = of('inbox: new records').find((p) => p?.message === 'HELLO please call me back');
    if (!text || !template || !status || !sms || !polled) return undefined;
    const ids = [...text.payload, ...template.payload].map((r) => r.id);
    if (!ids.every((id) => deliveries(id).some((e) => e.status === (id === template.payload[1]?.id ? 'SENT' : 'READ')))) return undefined;
    return { of, events, deliveries, text, template, call, status, sms, polled };
  }

  it('opens on the demo, whose results reach the debug sidebar: each message of a round of its injects, exactly (screenshot: docs/images/demo-flow.png)', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
    const editor = new EditorPage(page, nr.url);
    // Opened at once: the injects fire 3 to 4.5 s after the start, then every 60 s (a round the editor
    // opened too late for is seen a minute later).
    await editor.open('kaleyra-vmn-in');
    await editor.showSidebar('debug');
    let round;
    await waitFor(() => (round = demoRound(debugReceived(editor))), 'a whole round of the demo in the debug sidebar', 150_000);
    const { of, events, deliveries, text, template, call, status, sms, polled } = round;
    console.log(`      (${debugReceived(editor).length} debug messages)`);

    assert.deepEqual([...new Set(debugReceived(editor).map((m) => m.name))].filter((n) => !DEMO_DEBUG.includes(n)), [], 'only the demo\'s debug nodes');
    assert.deepEqual(of('errors (code and reason)'), [], 'nothing on the error debug');
    // The sends: their ids by recipient, each id in one output; SENT, DELIVERED, READ for each (a number
    // ending in 0000 stops at SENT in the simulator), in order, with the send's ref.
    assert.deepEqual(text.payload.map((r) => r.mobile), ['919812345678']);
    assert.deepEqual(template.payload.map((r) => r.mobile), ['919812345679', '919812340000']);
    for (const [send, mobile, statuses] of [
      [text, '919812345678', ['SENT', 'DELIVERED', 'READ']],
      [template, '919812345679', ['SENT', 'DELIVERED', 'READ']],
      [template, '919812340000', ['SENT']],
    ]) {
      const { id } = send.payload.find((r) => r.mobile === mobile);
      assert.match(id, /^[A-Za-z0-9]+$/);
      assert.equal(of('sent: message ids').filter((m) => m.payload?.some?.((r) => r.id === id)).length, 1, `${mobile}: one output names ${id}`);
      assert.deepEqual(deliveries(id).map((e) => [e.status, e.state, e.late, e.mobile, e.ref]), statuses.map((st) => [st, st, false, mobile, send.ref]), `${mobile}: its delivery events`);
    }
    // The call: its id once, its two events (first leg answered, then the end), then its status, COMPLETED.
    assert.equal(of('click to call: call id').filter((p) => p?.id === call.id).length, 1);
    const calls = events.filter((e) => e.event === 'call' && e.id === call.id);
    assert.deepEqual(calls.map((e) => [e.ref, e.custom, e.status1, e.endtime === null]), [
      ['call-1', 'demo42', 'ANSWER', true],
      ['call-1', 'demo42', 'ANSWER', false],
    ]);
    assert.equal(of('call status').filter((records) => records.some?.((r) => r.id === call.id)).length, 1);
    assert.deepEqual(status.map((r) => [r.id, r.status]), [[call.id, 'COMPLETED']]);
    // The SMS, from vmn in and from inbox polling.
    assert.deepEqual([sms.from, sms.message, typeof sms.ts], ['919876543210', 'HELLO please call me back', 'number']);
    assert.deepEqual([polled.sender, polled.message, polled.keyword], ['919876543210', 'HELLO please call me back', 'HELLO']);
    // The sidebar shows each message received, under its node's name.
    const received = debugReceived(editor).map((m) => m.name);
    await page.waitForFunction((n) => document.querySelectorAll('.red-ui-debug-msg').length >= n, received.length);
    const shown = (await page.locator('.red-ui-debug-msg .red-ui-debug-msg-name').allTextContents()).map((n) => n.replace(/^node: /, ''));
    assert.deepEqual(shown.sort(), received.sort());
    assert.equal(await page.locator('.red-ui-flow-node-group').count() > 10, true, 'the demo flow is on the workspace');
    await page.mouse.move(600, 820); // no tooltip over the sidebar
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(IMAGES, 'demo-flow.png') });
  });

  function noPageErrors(editor) {
    assert.deepEqual(editor.errors, [], 'no console errors');
  }

  /** Node-RED 5 shows a second sidebar pane below (debug): hidden (a click on its shown tab), so that the card has the height. */
  async function onlyKaleyraPane(page) {
    const debug = page.locator('.red-ui-sidebar-tab-bar button[data-tab-id="debug"]');
    if ((await debug.count()) > 0 && (await debug.evaluate((b) => b.classList.contains('selected')))) await debug.click();
  }

  /** The demo account's card as the kaleyra sidebar shows it. */
  function accountCard(editor) {
    return editor.evaluate(() => {
      const card = $('.kaleyra-sidebar-card[data-account="demo-account"]');
      const count = (stage) => Number((card.find(`.kaleyra-sidebar-count[data-stage="${stage}"]`).text().match(/^\d+/) || [-1])[0]);
      return {
        found: card.length === 1,
        text: card.text(),
        name: card.find('.kaleyra-sidebar-name').text(),
        badges: card.find('.kaleyra-sidebar-badge').map((i, b) => $(b).text()).get(),
        sent: count('sent'),
        delivered: count('delivered'),
        read: count('read'),
        codes: Object.fromEntries(card.find('.kaleyra-sidebar-codes tr').map((i, tr) => [[$(tr).find('td').eq(0).text(), Number($(tr).find('td').eq(1).text())]]).get()),
        recent: card.find('.kaleyra-sidebar-recent').text(),
        listeners: card.find('.kaleyra-sidebar-listener').map((i, l) => $(l).text()).get().join('\n'),
        background: getComputedStyle(card[0] || document.body).backgroundColor,
      };
    });
  }

  /** A tab with a whatsapp send on the demo account whose template has no name (E603), and its inject fired. */
  let forcedTab = false;
  async function forceError(times = 1) {
    const tab = {
      id: 'forced-error-tab',
      label: 'forced error',
      nodes: [
        {
          id: 'forced-inject',
          type: 'inject',
          z: 'forced-error-tab',
          name: 'template without its name',
          props: [{ p: 'payload' }, { p: 'to', v: '919812345678', vt: 'str' }, { p: 'from', v: '918000000000', vt: 'str' }],
          payload: '{"type":"template","template":{"lang_code":"en"}}',
          payloadType: 'json',
          repeat: '',
          once: false,
          x: 160,
          y: 60,
          wires: [['forced-whatsapp']],
        },
        { id: 'forced-whatsapp', type: 'kaleyra-whatsapp', z: 'forced-error-tab', name: 'forced error', account: 'demo-account', from: '', to: '', x: 420, y: 60, wires: [[]] },
      ],
    };
    if (!forcedTab) {
      forcedTab = true;
      const res = await nr.fetch('/flow', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(tab) });
      assert.equal(res.status, 200, await res.text());
    }
    // The new tab's nodes start after the answer to POST /flow: the first inject waits for them.
    await waitFor(async () => (await nr.fetch('/inject/forced-inject', { method: 'POST' })).status === 200, 'the forced error\'s inject', 30_000);
    for (let i = 1; i < times; i++) assert.equal((await nr.fetch('/inject/forced-inject', { method: 'POST' })).status, 200);
  }

  it('the kaleyra sidebar shows the demo account live: its funnel, then a failure by code after a forced error, in the light and the dark theme (screenshots: docs/images/sidebar-*.png)', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const editor = new EditorPage(page, nr.url);
    await editor.open('kaleyra-vmn-in');
    // As its action (the sidebar's menu, or a keyboard shortcut) shows it: the tab bar may have no room for its button.
    await editor.evaluate(() => RED.actions.invoke('kaleyra:show-accounts-tab'));
    await page.locator('.kaleyra-sidebar-card[data-account="demo-account"]').waitFor();
    let card = await accountCard(editor);
    assert.equal(card.name, 'simulator');
    assert.deepEqual(card.badges.slice(0, 3), ['simulator', 'memory', 'ok']);
    // Live: the page is not reloaded from here on (a reload would drop this marker).
    await editor.evaluate(() => (window.kaleyraMarker = true));
    await waitFor(async () => (card = await accountCard(editor)).delivered > 0 && card.read > 0, 'the demo\'s deliveries in the funnel', 150_000);
    assert.ok(card.sent >= 3 && card.delivered <= card.sent && card.read <= card.delivered, JSON.stringify(card));
    assert.deepEqual(card.codes, {}, 'no failure yet');

    await forceError();
    await waitFor(async () => (card = await accountCard(editor)).codes.E603 === 1, 'the forced failure under its code', 60_000);
    assert.equal(await editor.evaluate(() => window.kaleyraMarker), true, 'shown without a reload');
    assert.match(card.recent, /E603/);
    assert.match(card.recent, /forced error/, 'the node that met it');
    // A stranger's callback (no valid token) is refused, and counted by reason on the listener's line.
    assert.equal((await nr.fetch('/kaleyra/callback?token=not-the-token&status=DELIVERED&mobile=919812345678')).status, 403);
    await waitFor(async () => /bad token 1\b/.test((card = await accountCard(editor)).listeners), 'the refused callback on the listener\'s line', 60_000);
    // The snapshot the runtime serves holds what the card shows.
    const snapshot = await (await nr.fetch('/kaleyra/accounts')).json();
    const view = snapshot.accounts.find((a) => a.id === 'demo-account');
    assert.equal(view.failures.byCode.E603, 1);
    assert.ok(view.funnel.delivered >= card.delivered);
    // No number whole, in the card or in the diagnostics it copies.
    const diagnostics = await editor.evaluate(() => {
      let copied;
      const copy = RED.clipboard.copyText;
      RED.clipboard.copyText = (text) => ((copied = text), true);
      $('.kaleyra-sidebar-copy').trigger('click');
      RED.clipboard.copyText = copy;
      return copied;
    });
    assert.match(diagnostics, /@flowcomms\/node-red-kaleyra/);
    assert.match(diagnostics, /E603/);
    for (const number of ['919812345678', '918000000000', '919812345679', '919812340000']) {
      assert.ok(!card.text.includes(number), `the card shows ${number}`);
      assert.ok(!diagnostics.includes(number), `the diagnostics hold ${number}`);
    }
    const light = card.background;
    await onlyKaleyraPane(page);
    await page.locator('.kaleyra-sidebar-card[data-account="demo-account"]').screenshot({ path: path.join(IMAGES, 'sidebar-light.png') });
    noPageErrors(editor);

    // The dark theme is Node-RED 5's (4.1 has none built in): the user's setting, then the editor again.
    const major = Number(String(await editor.evaluate(() => RED.settings.version)).split('.')[0]);
    if (major < 5) return;
    await editor.evaluate(() => localStorage.setItem('view-dark-theme', 'dark'));
    await editor.open('kaleyra-vmn-in');
    assert.equal(await editor.evaluate(() => document.documentElement.classList.contains('nr-theme-dark')), true, 'the dark theme is on');
    await editor.evaluate(() => RED.actions.invoke('kaleyra:show-accounts-tab'));
    await page.locator('.kaleyra-sidebar-card[data-account="demo-account"]').waitFor();
    await editor.evaluate(() => (window.kaleyraMarker = true));
    await forceError(2);
    await waitFor(async () => (card = await accountCard(editor)).codes.E603 === 3, 'two more forced failures, live in the dark theme', 60_000);
    assert.equal(await editor.evaluate(() => window.kaleyraMarker), true, 'shown without a reload');
    assert.notEqual(card.background, light, 'the card follows the theme');
    const [r, g, b] = card.background.match(/\d+/g).map(Number);
    assert.ok(r + g + b < 3 * 128, `a dark card: ${card.background}`);
    await onlyKaleyraPane(page);
    await page.locator('.kaleyra-sidebar-card[data-account="demo-account"]').screenshot({ path: path.join(IMAGES, 'sidebar-dark.png') });
    noPageErrors(editor);
  });
});

describe('docs/images are those the browser tests make', () => {
  // The images of the README come from the tests above (UPDATE_SCREENSHOTS=1). The hash of what they show
  // (the editor files, their en-US strings, the demo) is kept beside them: a change there without new
  // images fails here, so they cannot drift.
  it('docs/images/manifest.json matches the editor files and the demo they were made from', () => {
    const { imageInputsHash } = require('./helpers/images');
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'docs', 'images', 'manifest.json'), 'utf8'));
    assert.equal(manifest.inputs, imageInputsHash(), 'the editor or the demo changed: run UPDATE_SCREENSHOTS=1 npx mocha test/browser.test.js');
    for (const image of manifest.images) assert.ok(fs.existsSync(path.join(ROOT, 'docs', 'images', image)), image);
  });
});

after(() => {
  // With UPDATE_SCREENSHOTS=1, record what the images were made from.
  if (!process.env.UPDATE_SCREENSHOTS) return;
  const { imageInputsHash } = require('./helpers/images');
  const images = fs.readdirSync(IMAGES).filter((f) => f.endsWith('.png')).sort();
  fs.writeFileSync(path.join(IMAGES, 'manifest.json'), `${JSON.stringify({ inputs: imageInputsHash(), images }, null, 2)}\n`);
});
