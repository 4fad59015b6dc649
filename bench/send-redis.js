'use strict';
// Send throughput with the account's state on Redis against the same in memory (ADR 0004), in one run:
// two accounts, `store: memory` and `store: redis` (a real redis-server on loopback, started here), each
// with a kaleyra-whatsapp node that reports to a callback node (correlation on: every send records its ref
// before it goes out and the service's ids after). Same loopback service (bench/lib/server.js), 16
// concurrent, interleaved rounds after a GC each. Target: Redis costs no more than 15% (ratio ≥ 0.85).
// node bench/send-redis.js [--rounds 8] [--messages 4000] [--concurrency 16]
if (require.main === module) require('./lib/common').exposeGc(__filename);

const fs = require('node:fs');
const helper = require('node-red-node-test-helper');
const { nodeRedMain, fromNodeRed } = require('../test/helpers/node-red');
const { RedisServer } = require('../test/helpers/redis');
const { startServer, median, num, unspy, main } = require('./lib/common');
const { driveFlow, measureRounds, ratioOf } = require('./lib/drive');

helper.init(nodeRedMain);
const catchNode = fromNodeRed('@node-red/nodes/core/common/25-catch.js');
const modules = ['kaleyra-config', 'kaleyra-whatsapp', 'kaleyra-callback'].map((t) => require(`../nodes/${t}.js`));

const KEY = 'BenchKey0123456789abcdef';
const STORES = ['memory', 'redis'];

function flow(url, redisUrl, concurrency) {
  const f = [{ id: 't1', type: 'tab', label: 'bench' }];
  for (const store of STORES) {
    f.push(
      { id: `acct-${store}`, type: 'kaleyra-config', name: `bench ${store}`, messagingUrl: url, publicUrl: 'https://public.example', concurrency, store, redisUrl },
      { id: `cb-${store}`, type: 'kaleyra-callback', z: 't1', account: `acct-${store}`, path: `/bench/${store}`, wires: [[]] },
      { id: `wa-${store}`, type: 'kaleyra-whatsapp', z: 't1', account: `acct-${store}`, reportTo: `cb-${store}`, wires: [[`out-${store}`]] },
      { id: `out-${store}`, type: 'helper', z: 't1' },
    );
  }
  f.push({ id: 'c1', type: 'catch', z: 't1', scope: null, uncaught: false, wires: [['caught']] }, { id: 'caught', type: 'helper', z: 't1' });
  return f;
}

async function run(opts = {}) {
  const o = { rounds: 8, messages: 4000, concurrency: 16, warmup: 2000, log: console.log, ...opts };
  const redis = await new RedisServer({ aof: false }).start();
  const server = await startServer();
  const f = flow(server.url, redis.url, o.concurrency);
  const credentials = Object.fromEntries(STORES.flatMap((s) => [[`acct-${s}`, { apiKey: KEY }], [`cb-${s}`, { token: 'benchtoken' }]]));
  await helper.load([catchNode, ...modules], f, credentials);
  unspy(helper, f.map((n) => n.id));
  // redis-server's own CPU per msg, read from /proc (it shares this machine's cores with the rest).
  const redisCpu = [];
  const ticks = () => {
    try {
      const f = fs.readFileSync(`/proc/${redis.child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(f[11]) + Number(f[12])) * 10_000; // utime + stime, in µs at 100 ticks a second
    } catch {
      return NaN;
    }
  };
  // By round: rates, and CPU time of this process per msg (Redis and the service are other processes).
  let rates;
  let cpu;
  try {
    const variants = Object.fromEntries(STORES.map((s) => [s, (n) => driveFlow(helper.getNode(`wa-${s}`), helper.getNode(`out-${s}`), n, o.concurrency)]));
    for (const s of STORES) await variants[s](o.warmup);
    const keys = Number(/:(\d+)/.exec(await redis.command('DBSIZE'))[1]);
    if (keys < o.warmup) throw new Error(`the Redis account recorded ${keys} keys for ${o.warmup} sends: correlation is not on`);
    o.log(`send-redis: correlation on: ${num(keys)} Redis keys after the warm-up`);
    // --only redis (or memory): one of the two, to profile it with node --cpu-prof.
    const names = o.only ? [o.only] : STORES;
    const around = (s) => {
      if (s !== 'redis') return undefined;
      const r0 = ticks();
      return () => redisCpu.push((ticks() - r0) / o.messages);
    };
    ({ rates, cpu } = await measureRounds({ variants, names, rounds: o.rounds, messages: o.messages, label: 'send-redis', log: o.log, around }));
  } finally {
    await helper.unload();
    await server.stop();
    await redis.stop();
  }
  const m = { memory: median(rates.memory), redis: median(rates.redis) };
  const ratio = ratioOf(rates, 'redis', 'memory');
  o.log(`send-redis: CPU of this process per msg (µs, medians): memory ${num(median(cpu.memory))}, redis ${num(median(cpu.redis))}; redis-server's per msg ${num(median(redisCpu))} µs, on the same 2 cores`);
  o.log(`send-redis: medians of ${o.rounds} rounds × ${o.messages} msgs, correlation on (msgs/s): memory ${num(m.memory)}, redis ${num(m.redis)}; redis / memory = ${ratio.toFixed(2)} (target ≥ 0.85)`);
  return {
    rows: [
      {
        bench: 'send with Report to, store: redis',
        value: `${num(m.redis)} msgs/s`,
        compared: `${ratio.toFixed(2)}× store: memory (${num(m.memory)}/s), same run`,
        target: '≥ 0.85× memory (Redis costs ≤ 15%)',
        met: ratio >= 0.85,
      },
    ],
  };
}

module.exports = { run };

if (require.main === module) main('send-redis', run);
