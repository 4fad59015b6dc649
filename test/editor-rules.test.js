'use strict';
// The editor's rules come from the runtime's (issue 20): resources/kaleyra-editor.js, built from
// src/editor/kaleyra-editor.js and src/core by scripts/build-editor.js, holds the ranges, defaults, base
// URLs, phone rule and callback variables the runtime uses, and each editor file takes them from there.
// The editor files are run here as the editor runs them (in one global scope, in any order) with a stub
// of what they use of RED and jQuery; the real editor in Chromium is test/browser.test.js.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');

const ROOT = path.join(__dirname, '..');
const RESOURCE = 'resources/@flowcomms/node-red-kaleyra/kaleyra-editor.js';
const TYPES = ['kaleyra-config', 'kaleyra-whatsapp', 'kaleyra-inbox', 'kaleyra-call-status', 'kaleyra-click2call', 'kaleyra-callback', 'kaleyra-vmn-in'];

const { DEFAULT_BASE_URLS, API_KEY_PATTERN, checkAccount } = require('../dist/core/account-config');
const { NUMBER_SETTINGS, DEFAULT_REDIS_URL, accountSettings } = require('../dist/nodes/account-settings');
const { WATCH_LIMITS } = require('../dist/core/call-watch');
const { CALLBACK_VARIABLES, CLICK_TO_CALL_LIMITS, buildCallbackUrl } = require('../dist/core/click-to-call');
const { SMS_VARIABLES } = require('../dist/core/callback-events');
const { INBOX_LIMITS } = require('../dist/core/inbox');
const { POLL_LIMITS } = require('../dist/core/inbox-poll');
const { LIMITS } = require('../dist/core/messaging');
const v = require('../dist/core/validate');
const { MAX_AFTER_MINUTES } = require('../dist/core/watchdog');
const { NUMBER_RUN, maskNumbers } = require('../dist/core/monitor');

/** The inline scripts of an editor file. */
function scriptsOf(type) {
  const html = fs.readFileSync(path.join(ROOT, 'nodes', `${type}.html`), 'utf8');
  return [...html.matchAll(/<script type="text\/javascript">([\s\S]*?)<\/script>/g)].map((m) => m[1]);
}

/**
 * Runs editor files in one context, as the editor does. `$.ajax` serves the resource from the package's
 * resources/ folder (as Node-RED serves it) and counts the fetches; jQuery is not otherwise used while a
 * file loads.
 */
function loadEditor(types) {
  const defs = {};
  const fetched = [];
  const context = vm.createContext({
    // getType: no catalog here, so a text is its key; no dialog is open.
    RED: { nodes: { registerType: (t, def) => (defs[t] = def), getType: () => null }, editor: { getEditStack: () => [] } },
    $: Object.assign(() => assert.fail('jQuery used while loading'), {
      ajax(options) {
        fetched.push(options.url);
        assert.equal(options.url, RESOURCE);
        assert.equal(options.async, false, 'fetched before the file goes on');
        vm.runInContext(fs.readFileSync(path.join(ROOT, 'resources', 'kaleyra-editor.js'), 'utf8'), context);
      },
    }),
  });
  context.window = context;
  for (const type of types) for (const code of scriptsOf(type)) vm.runInContext(code, context);
  return { defs, fetched, K: context.KaleyraEditor };
}

describe('editor rules', () => {
  it('each editor file, in any order, registers its type; the shared code is fetched once, by the first', () => {
    for (const order of [TYPES, [...TYPES].reverse(), [TYPES[3], TYPES[0], TYPES[6], TYPES[1], TYPES[5], TYPES[2], TYPES[4]]]) {
      const { defs, fetched } = loadEditor(order);
      assert.deepEqual(Object.keys(defs), order);
      assert.deepEqual(fetched, [RESOURCE], `one fetch for ${order.join(', ')}`);
      const _ = (key) => `[${key}]`;
      for (const type of order) {
        assert.equal(defs[type].paletteLabel.call({ _ }), `[${type}.paletteLabel]`);
        assert.equal(defs[type].label.call({ _, name: 'n' }), 'n');
      }
    }
    // Alone, too (a file the palette manager fetched first).
    for (const type of TYPES) assert.deepEqual(Object.keys(loadEditor([type]).defs), [type]);
  });

  it('the built resource holds the runtime\'s rules', () => {
    const { K } = loadEditor(['kaleyra-config']);
    const rules = JSON.parse(JSON.stringify(K.rules));
    assert.deepEqual(rules.settings, NUMBER_SETTINGS);
    assert.deepEqual(rules.baseUrls, DEFAULT_BASE_URLS);
    assert.equal(rules.redisUrl, DEFAULT_REDIS_URL);
    assert.equal(K.re(rules.apiKey).source, API_KEY_PATTERN.source);
    assert.equal(K.re(rules.phone.number).source, v.PHONE_RULE.number.source);
    assert.equal(rules.phone.listMax, LIMITS.recipients);
    assert.equal(K.re(rules.phone.run).source, NUMBER_RUN.source);
    assert.equal(rules.phone.minDigits, v.PHONE_RULE.minDigits);
    assert.deepEqual(rules.watch, WATCH_LIMITS);
    assert.deepEqual(rules.poll, POLL_LIMITS);
    assert.deepEqual(rules.inbox, INBOX_LIMITS);
    assert.deepEqual(rules.clickToCall, CLICK_TO_CALL_LIMITS);
    assert.deepEqual(rules.callVariables, [...CALLBACK_VARIABLES]);
    assert.deepEqual(rules.smsVariables, [...SMS_VARIABLES]);
    assert.equal(rules.overdueAfterMax, MAX_AFTER_MINUTES);
  });

  it('the dialogs\' defaults are the runtime\'s', () => {
    const { defs } = loadEditor(TYPES);
    const config = defs['kaleyra-config'].defaults;
    const empty = accountSettings({});
    for (const [name, range] of Object.entries(NUMBER_SETTINGS)) assert.equal(config[name].value, range.default, name);
    for (const name of ['messagingUrl', 'obdUrl', 'voiceUrl']) assert.equal(config[name].value, empty.urls[name], name);
    assert.equal(config.vmnUrl.value, DEFAULT_BASE_URLS.vmnUrl);
    assert.equal(config.redisUrl.value, accountSettings({ store: 'redis' }).redisUrl);
    const status = defs['kaleyra-call-status'].defaults;
    assert.equal(status.watchInterval.value, WATCH_LIMITS.intervalDefault);
    assert.equal(status.watchMax.value, WATCH_LIMITS.maxDefault);
  });

  it('the dialogs accept what the runtime accepts, at the edges of each range', () => {
    const { defs } = loadEditor(TYPES);
    // What a validator of a plain setting returns for a value, outside an open dialog.
    const check = (type, prop, value) => defs[type].defaults[prop].validate.call({}, String(value));
    const K = loadEditor(['kaleyra-config']).K;
    {
      for (const [name, { min, max }] of Object.entries(NUMBER_SETTINGS)) {
        for (const ok of [min, max]) assert.equal(check('kaleyra-config', name, ok), true, `${name} ${ok}`);
        for (const bad of [max + 1, ...(min > 0 ? [min - 1] : [])]) assert.notEqual(check('kaleyra-config', name, bad), true, `${name} ${bad}`);
      }
      for (const [prop, min, max] of [['watchInterval', WATCH_LIMITS.intervalMin, WATCH_LIMITS.intervalMax], ['watchMax', WATCH_LIMITS.maxMin, WATCH_LIMITS.maxMax]]) {
        assert.equal(check('kaleyra-call-status', prop, min), true);
        assert.equal(check('kaleyra-call-status', prop, max), true);
        assert.notEqual(check('kaleyra-call-status', prop, max + 1), true);
        assert.notEqual(check('kaleyra-call-status', prop, min - 1), true);
      }
      assert.equal(check('kaleyra-inbox', 'pollInterval', POLL_LIMITS.intervalMax), true);
      assert.equal(check('kaleyra-callback', 'overdueAfter', MAX_AFTER_MINUTES), true);
      assert.notEqual(check('kaleyra-callback', 'overdueAfter', MAX_AFTER_MINUTES + 1), true);
      assert.notEqual(check('kaleyra-inbox', 'pollInterval', POLL_LIMITS.intervalMax + 1), true);

      // The phone rule: the editor's check and the runtime's agree on every one of these.
      const numbers = ['+919812345678', '919812345678', '+91 98123-45678', '(0091) 98123 45678', '98.12.34', '123456', '12345', '+123456789012345', '1234567890123456', '+', '', '++919812345678', '91 98x12', '+91\t9812345678', '٩١٩٨١٢٣٤٥٦٧٨'];
      for (const n of numbers) {
        let runtime = true;
        try {
          v.phone('to', n);
        } catch {
          runtime = false;
        }
        assert.equal(K.checks.phone(n) === true, runtime, JSON.stringify(n));
      }
      const list = (n) => Array.from({ length: n }, (_, i) => `+9198${String(i).padStart(8, '0')}`).join(',');
      assert.equal(K.checks.phones(list(LIMITS.recipients)), true);
      assert.notEqual(K.checks.phones(list(LIMITS.recipients + 1)), true);

      // The key's form: the config dialog's check and the runtime's.
      const key = (k) => defs['kaleyra-config'].credentials.apiKey.validate.call({}, k);
      for (const k of ['Abcdef12', 'A'.repeat(256), 'Abcdef1', 'Abcdef12!', 'A'.repeat(257)]) {
        let runtime = true;
        try {
          checkAccount({ apiKey: k });
        } catch {
          runtime = false;
        }
        assert.equal(key(k) === true, runtime, k);
      }
    }
  });

  it('the sidebar masks phone numbers as the runtime does', () => {
    const { K } = loadEditor(['kaleyra-config']);
    const texts = ['to +91 98123-45678 failed', 'mobile 919876543210, +1 (555) 010-2345', '+123456 and 12345', '3 retries, E423, 2026', 'http://127.0.0.1:1880/x', '(0091) 98123 45678', ''];
    for (const text of texts) assert.equal(K.maskNumbers(text), maskNumbers(text), JSON.stringify(text));
    assert.equal(K.maskNumbers(undefined), '');
  });

  it('the callback URLs the dialogs show hold the variables the runtime fills', () => {
    const { K } = loadEditor(['kaleyra-config']);
    const built = new URL(buildCallbackUrl('https://example.com/cb'));
    assert.deepEqual([...built.searchParams.keys()], [...K.rules.callVariables]);
  });

  it('no editor file writes a rule of the runtime itself', () => {
    for (const type of TYPES) {
      const code = scriptsOf(type).join('\n');
      for (const literal of ['kaleyra.com', '86400', '1000000', '100000', '"starttime"', '{from}', '6379', '10080']) {
        assert.ok(!code.includes(literal), `${type}.html holds ${literal}`);
      }
    }
  });
});
