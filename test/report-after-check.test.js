'use strict';
// "Report to" with bad input (issue 20, item 1): the client checks and builds a call first; the node asks
// its account for a report (a correlation record, written to the state store) only for a call that passed.
// So a refused message writes nothing, in the memory store and in Redis, and sends nothing. Then a good
// message through the same node is reported and sent, so the checks above could see a write had there been one.
const assert = require('node:assert/strict');
const { loadNode } = require('./helpers/flow');
const { Recorder } = require('./helpers/recorder');
const { RedisServer } = require('./helpers/redis');
const { Correlator } = require('../dist/core/correlation');

const FROM = '918000000000';
const TO = '919812345678';
const SENT = { body: JSON.stringify({ status: 'OK', message: 'ok', data: [{ id: 'wa-1', mobile: TO }] }) };
const CALLED = { body: JSON.stringify({ status: '200', message: 'ok', data: { id: 'call-1' } }) };

/** The nodes of the flow beside the node under test: a callback-in node to report to. */
const callbackIn = [{ id: 'cb', type: 'kaleyra-callback', z: 'f1', account: 'cfg', path: '/kaleyra/report-check', wires: [[]] }];

/** Bad inputs of both sends: each refused, naming its field. */
const CASES = [
  ['kaleyra-whatsapp', { from: FROM, reportTo: 'cb' }, { payload: 'hi', to: '12' }, 'INVALID_INPUT', /\bto\b/, { payload: 'hi', to: TO }, SENT],
  ['kaleyra-whatsapp', { from: FROM, reportTo: 'cb' }, { payload: { type: 'template', template: { namespace: 'ns' } }, to: TO }, 'E603', /template_name/, { payload: 'hi', to: TO }, SENT],
  ['kaleyra-click2call', { reportTo: 'cb' }, { payload: { caller: '98', receiver: '9812345679' } }, 'INVALID_INPUT', /caller/, { payload: { caller: '9812345678', receiver: '9812345679' } }, CALLED],
];

describe('"Report to" with bad input writes nothing and sends nothing (issue 20, item 1)', () => {
  const service = new Recorder();
  let tracked;
  const track = Correlator.prototype.track;
  before(() => service.start());
  after(() => service.stop());
  beforeEach(() => {
    service.requests.length = 0;
    tracked = [];
    Correlator.prototype.track = function (ref, ...rest) {
      tracked.push(ref);
      return track.call(this, ref, ...rest);
    };
  });
  afterEach(async () => {
    Correlator.prototype.track = track;
    await require('./helpers/flow').helper.unload();
  });

  async function check(store, redis) {
    for (const [type, props, bad, code, field, good, reply] of CASES) {
      service.reply = () => reply;
      const urls = { messagingUrl: service.url, voiceUrl: service.url, publicUrl: 'https://example.com' };
      const t = await loadNode(type, props, { config: { ...urls, ...store }, apiKey: 'GoodKey12345', extra: callbackIn });
      const before = redis && (await writes(redis));
      const { output, error } = await t.run(structuredClone(bad));
      assert.equal(output, undefined, `${type}: no output`);
      assert.equal(error.error.code, code, `${type}: ${error.error.message}`);
      assert.match(error.error.message, field);
      assert.deepEqual(tracked, [], `${type}: no correlation record was made`);
      assert.equal(service.requests.length, 0, `${type}: nothing was sent`);
      if (redis) assert.deepEqual(await writes(redis), before, `${type}: nothing was written to Redis`);
      // The same node with a good message: reported (a record, and a write to Redis) and sent.
      const ok = await t.run(structuredClone(good));
      assert.ok(ok.output, `${type}: the good message is sent (${ok.error?.error?.message})`);
      assert.equal(tracked.length, 1, `${type}: one record for the good message`);
      assert.equal(service.requests.length, 1);
      assert.match(service.requests[0].raw?.toString() + JSON.stringify(service.requests[0]), /kref/, `${type}: its callback URL carries the report's reference`);
      if (redis) assert.notDeepEqual(await writes(redis), before, `${type}: the good message's record reached Redis`);
      await require('./helpers/flow').helper.unload();
      service.requests.length = 0;
      tracked = [];
    }
  }

  it('memory store: no record, no request; the good message after it is reported and sent', () => check({}));

  describe('Redis store', () => {
    const redis = new RedisServer({ aof: false });
    before(() => redis.start());
    after(() => redis.stop());

    it('no key written (Redis counts no write command), no request; the good message after it writes and is sent', () => check({ store: 'redis', redisUrl: redis.url }, redis));
  });
});

/** The calls of each command Redis counted that can write (INFO commandstats), e.g. { set: 3, eval: 1 }. */
async function writes(redis) {
  const text = await redis.command('INFO', 'commandstats');
  const counts = {};
  for (const m of text.matchAll(/cmdstat_([a-z|]+):calls=(\d+)/g)) {
    if (/^(set|hset|hsetnx|setnx|psetex|setex|del|unlink|expire|pexpire|eval|evalsha|fcall|incr|incrby|zadd|sadd|lpush|rpush|multi|exec|getdel|getex)$/.test(m[1])) counts[m[1]] = Number(m[2]);
  }
  return counts;
}
