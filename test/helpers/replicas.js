'use strict';
// Two replicas of a scale-out: two real Node-RED processes of the project (A and B), each with its own user
// directory and port, run the same flows against one real redis-server (AOF on) and one stand-in of the
// service (the simulator, in this process). Each replica gives the service the other one's address as its
// public URL, so every callback reaches the other replica. What their flows post to $env('COLLECTOR')
// (with ?replica=$env('REPLICA')) is kept here. Used by test/scale-out.test.js and
// test/overdue-replicas.test.js; twoReplicas() adds the mocha hooks that start and stop all of it.
const { Simulator } = require('../../dist/simulator');
const { RedisServer } = require('./redis');
const { NodeRedProcess } = require('./node-red-process');
const { Recorder } = require('./recorder');
const { freePort } = require('./started-node-red');

/**
 * flows: what every replica runs (URLs and names from the environment: ${SIM_MESSAGING}, ${SIM_VMN},
 * ${SIM_OBD}, ${SIM_VOICE}, ${PUBLIC_URL}, ${REDIS_URL}); credentials: by node id; env: more
 * environment for both.
 */
function twoReplicas({ name, flows, credentials, env = {} }) {
  const h = { redis: new RedisServer({ aof: true }), collector: new Recorder(), replicas: {}, sim: undefined };

  /** What the replicas posted to the collector on `path`, each with the replica that posted it. */
  h.posted = (path) => h.collector.requests.filter((r) => r.path === path).map((r) => ({ replica: r.query.replica, ...JSON.parse(r.raw.toString()) }));

  /**
   * Redis's MONITOR from now on: every command Redis runs, the commands of scripts too (from "lua"), each
   * with Redis's own clock in ms; and the keys of a pattern, read on a second connection.
   */
  h.monitor = async () => {
    const { createClient } = require('@redis/client');
    const client = createClient({ url: h.redis.url });
    await client.connect();
    const lines = [];
    await client.monitor((line) => lines.push(line));
    const parse = (line) => {
      const [, sec, usec, from, rest] = /^(\d+)\.(\d+) \[\d+ ([^\]]+)\] (.*)$/.exec(line);
      const [command, ...args] = [...rest.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
      return { at: Number(sec) * 1000 + Number(usec) / 1000, from, command: command.toUpperCase(), args };
    };
    const other = createClient({ url: h.redis.url });
    await other.connect();
    return {
      commands: () => lines.map(parse),
      keys: (pattern) => other.keys(pattern),
      stop: async () => (client.destroy(), await other.close()),
    };
  };

  before(async function () {
    this.timeout(300_000);
    await h.redis.start();
    await h.collector.start();
    h.collector.reply = () => ({ body: 'ok' });
    h.sim = new Simulator({ deliveryDelaysMs: [100, 50, 50] }); // numbers ending in 0000 get SENT only
    const urls = await h.sim.start();
    const ports = { A: await freePort(), B: await freePort() };
    for (const [replica, other] of [['A', 'B'], ['B', 'A']]) {
      h.replicas[replica] = new NodeRedProcess({
        name: `${name}-${replica}`,
        flows: flows(),
        credentials,
        env: {
          REPLICA: replica,
          COLLECTOR: h.collector.url,
          REDIS_URL: h.redis.url,
          PUBLIC_URL: `http://127.0.0.1:${ports[other]}`,
          SIM_MESSAGING: urls.messagingUrl,
          SIM_VMN: urls.vmnUrl,
          SIM_OBD: urls.obdUrl,
          SIM_VOICE: urls.voiceUrl,
          ...env,
        },
      });
      h.replicas[replica].port = ports[replica];
    }
    await Promise.all(Object.values(h.replicas).map((r) => r.start()));
  });

  afterEach(function () {
    // What the replicas logged, when a test failed: the reason is usually there.
    if (this.currentTest.state !== 'failed') return;
    for (const [replica, r] of Object.entries(h.replicas)) console.log(`\n--- replica ${replica} log (end) ---\n${r.output.slice(-3000)}`);
  });

  after(async function () {
    this.timeout(60_000);
    for (const r of Object.values(h.replicas)) {
      await r.stop().catch(() => r.kill());
      r.cleanup();
    }
    await h.sim?.stop();
    await h.collector.stop();
    await h.redis.stop();
  });

  return h;
}

module.exports = { twoReplicas };
