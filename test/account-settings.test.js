'use strict';
// A kaleyra-config node's settings as the account reads them (src/nodes/account-settings.ts): a pure
// function, without Node-RED.
const assert = require('node:assert/strict');
const { accountSettings, numberSetting, NUMBER_SETTINGS } = require('../dist/nodes/account-settings');
const { DEFAULT_BASE_URLS } = require('../dist/core/client');

describe('accountSettings: what the account makes of its node\'s settings', () => {
  it('an empty config: the documented defaults, the memory store, no public URL', () => {
    const s = accountSettings({});
    assert.deepEqual(s, {
      simulator: false,
      publicUrl: '',
      urls: { ...DEFAULT_BASE_URLS },
      options: { timeout: 30_000, connections: 8, flow: { concurrency: 8, rate: 0, queueSize: 1000 }, readRetry: { retries: 2 }, sendRetry: { retries: 2 } },
      store: 'memory',
      redisUrl: undefined,
    });
  });

  it('numbers are clamped to their ranges; empty, null, text and NaN take the default; strings of digits count', () => {
    for (const [name, { default: fallback, min, max }] of Object.entries(NUMBER_SETTINGS)) {
      assert.equal(numberSetting(name, max + 1), max, `${name} above its range`);
      assert.equal(numberSetting(name, min - 1), min, `${name} below its range`);
      for (const empty of ['', undefined, null, 'abc', NaN, Infinity]) assert.equal(numberSetting(name, empty), fallback, `${name}: ${String(empty)}`);
      assert.equal(numberSetting(name, String(min)), min);
    }
    const s = accountSettings({ timeout: '5', concurrency: 300, retries: -1, rateLimit: '250', queueSize: 0 });
    assert.deepEqual(s.options, { timeout: 5000, connections: 256, flow: { concurrency: 256, rate: 250, queueSize: 1 }, readRetry: { retries: 0 }, sendRetry: { retries: 0 } });
  });

  it('URLs are trimmed; an empty one takes the default; the public URL loses its trailing slashes', () => {
    const s = accountSettings({ messagingUrl: '  https://eu.example.com ', obdUrl: '', vmnUrl: 'https://vmn.example.com', publicUrl: ' https://me.example.com/red// ', simulator: 'true' });
    assert.deepEqual(s.urls, { messagingUrl: 'https://eu.example.com', vmnUrl: 'https://vmn.example.com', obdUrl: DEFAULT_BASE_URLS.obdUrl, voiceUrl: DEFAULT_BASE_URLS.voiceUrl });
    assert.equal(s.publicUrl, 'https://me.example.com/red');
    assert.equal(s.simulator, true);
  });

  it('a public URL that is not http(s): a ConfigError naming publicUrl', () => {
    for (const publicUrl of ['ftp://me.example.com', 'me.example.com', 'https:///path']) {
      assert.throws(() => accountSettings({ publicUrl }), (err) => err.code === 'CONFIG' && err.setting === 'publicUrl' && /publicUrl: must be an http\(s\) URL/.test(err.message), publicUrl);
    }
  });

  it('the Redis store: its URL as given, else redis://127.0.0.1:6379', () => {
    assert.equal(accountSettings({ store: 'redis' }).redisUrl, 'redis://127.0.0.1:6379');
    assert.equal(accountSettings({ store: 'redis', redisUrl: ' rediss://cache:6380/1 ' }).redisUrl, 'rediss://cache:6380/1');
    assert.equal(accountSettings({ store: 'other', redisUrl: 'redis://x' }).store, 'memory');
    assert.equal(accountSettings({ store: 'other', redisUrl: 'redis://x' }).redisUrl, undefined);
  });
});
