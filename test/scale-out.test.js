'use strict';
// Scale-out (issue: several Node-RED replicas share one account's state through Redis; ADR 0004). Two real
// Node-RED processes of the project, each with its own user directory and port, run the same flows
// against one real redis-server (AOF on) and one stand-in of the service (the simulator, in this process).
// What each replica emits is posted to a collector here, with the replica's name. Checked: a delivery
// callback that reaches the other replica is correlated; N SMS are emitted exactly once across both while
// both poll; the account's rate limit holds for both together; Redis killed mid-run and started again
// with its data loses and duplicates nothing; Redis back empty makes neither replica emit again; a killed
// replica's polling is taken over; a full redeploy leaves the number of Redis connections as it was. Each
// test brings the state it needs (it passes alone, with --grep). What the shared limiter admitted and when
// the lease changed hands are read from Redis itself (MONITOR, on Redis's clock), not from the time
// requests took to arrive, so a busy machine does not change the verdict.
const assert = require('node:assert/strict');
const { DEMO_KEY } = require('../dist/simulator');
const { twoReplicas } = require('./helpers/replicas');
const { waitFor } = require('./helpers/started-node-red');

const TOKEN = 'scaletoken123';
const POLL_SECONDS = 1;

/** The flows every replica runs; what differs (URLs, names) comes from the environment (${VAR}). */
function flows() {
  const collect = (id, what, wires = []) => [
    { id: `${id}-url`, type: 'change', z: 't1', rules: [{ t: 'set', p: 'url', pt: 'msg', to: `$env('COLLECTOR') & '/${what}?replica=' & $env('REPLICA')`, tot: 'jsonata' }], wires: [[`${id}-post`]] },
    { id: `${id}-post`, type: 'http request', z: 't1', method: 'POST', ret: 'txt', url: '', paytoqs: 'ignore', wires: [wires] },
  ];
  const account = (id, extra) => ({
    id,
    type: 'kaleyra-config',
    name: `account ${id}`,
    messagingUrl: '${SIM_MESSAGING}',
    vmnUrl: '${SIM_VMN}',
    obdUrl: '${SIM_OBD}',
    voiceUrl: '${SIM_VOICE}',
    publicUrl: '${PUBLIC_URL}',
    timeout: 5,
    store: 'redis',
    redisUrl: '${REDIS_URL}',
    concurrency: 8,
    queueSize: 1000,
    ...extra,
  });
  return [
    { id: 't1', type: 'tab', label: 'scale-out' },
    account('acct', {}),
    account('acct-rated', { rateLimit: 5 }),
    // Sends: POST /send { to, payload, ref } answers the ids.
    { id: 'send-in', type: 'http in', z: 't1', url: '/send', method: 'post', wires: [['send-msg']] },
    { id: 'send-msg', type: 'change', z: 't1', rules: [{ t: 'set', p: 'to', pt: 'msg', to: 'payload.to', tot: 'msg' }, { t: 'set', p: 'ref', pt: 'msg', to: 'payload.ref', tot: 'msg' }, { t: 'set', p: 'payload', pt: 'msg', to: 'payload.text', tot: 'msg' }], wires: [['wa']] },
    { id: 'wa', type: 'kaleyra-whatsapp', z: 't1', account: 'acct', reportTo: 'cb', from: '918000000000', wires: [['send-out']] },
    { id: 'send-out', type: 'http response', z: 't1', statusCode: '', headers: {}, wires: [] },
    // Rated sends: POST /rated { to, text }.
    { id: 'rated-in', type: 'http in', z: 't1', url: '/rated', method: 'post', wires: [['rated-msg']] },
    { id: 'rated-msg', type: 'change', z: 't1', rules: [{ t: 'set', p: 'to', pt: 'msg', to: 'payload.to', tot: 'msg' }, { t: 'set', p: 'payload', pt: 'msg', to: 'payload.text', tot: 'msg' }], wires: [['wa-rated']] },
    { id: 'wa-rated', type: 'kaleyra-whatsapp', z: 't1', account: 'acct-rated', from: '918000000000', wires: [['send-out']] },
    // A failed send answers 500 with its code.
    { id: 'on-error', type: 'catch', z: 't1', scope: ['wa', 'wa-rated'], uncaught: false, wires: [['fail']] },
    { id: 'fail', type: 'change', z: 't1', rules: [{ t: 'set', p: 'statusCode', pt: 'msg', to: '500', tot: 'num' }, { t: 'set', p: 'payload', pt: 'msg', to: 'error.code', tot: 'msg' }], wires: [['send-out']] },
    // Delivery events and polled SMS go to the collector.
    { id: 'cb', type: 'kaleyra-callback', z: 't1', account: 'acct', path: '/scale/cb', wires: [['ev-url']] },
    ...collect('ev', 'event'),
    { id: 'poll', type: 'kaleyra-inbox', z: 't1', account: 'acct', pollInterval: POLL_SECONDS, wires: [['in-url']] },
    ...collect('in', 'inbox'),
  ];
}

describe('scale-out: two Node-RED replicas on one Redis', function () {
  this.timeout(240_000);
  const h = twoReplicas({ name: 'replica', flows, credentials: { acct: { apiKey: DEMO_KEY }, 'acct-rated': { apiKey: DEMO_KEY }, cb: { token: TOKEN } } });
  const { redis, replicas, posted, monitor } = h;

  const events = () => posted('/event');
  const polled = () => posted('/inbox');
  const send = (replica, path, body) => replicas[replica].fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(60_000) });
  const other = (name) => (name === 'A' ? 'B' : 'A');
  let sms = 0;
  const inject = (n) => {
    const injected = [];
    for (let i = 0; i < n; i++) injected.push(h.sim.injectSms({ from: `9198765${String(10000 + sms++).padStart(5, '0')}`, message: `SMS ${sms}` }).message);
    return injected;
  };
  /** Waits until every given SMS was polled. */
  const allPolled = (messages, what) => waitFor(() => messages.every((m) => polled().some((p) => p.message === m)), `${what}: every SMS polled`);
  /**
   * Waits until every given SMS was polled, then for two more polls (a barrier SMS each, injected once the
   * one before was polled), and checks each SMS came exactly once.
   */
  async function polledOnce(messages, what) {
    await allPolled(messages, what);
    for (let i = 0; i < 2; i++) await allPolled(inject(1), `${what}: barrier ${i + 1}`);
    const by = new Map();
    for (const p of polled()) by.set(p.message, [...(by.get(p.message) ?? []), p.replica]);
    const twice = [...by].filter(([, replicas]) => replicas.length > 1).map(([m, replicas]) => `${m} by ${replicas.join(' and ')}`);
    assert.deepEqual(twice, [], `${what}: polled more than once`);
  }

  /** Waits until both replicas' accounts said Redis cannot be reached, in their logs since `logged` (lengths). */
  async function outageNoticed(logged) {
    for (const name of ['A', 'B']) {
      await waitFor(() => /account acct\] the shared state store \(Redis at [^)]+\) cannot be reached/.test(replicas[name].log.slice(logged[name])), `replica ${name} to notice the outage`);
    }
  }

  it('a delivery callback that reaches the other replica is correlated: id, ref, state', async () => {
    for (const [from, ref] of [['A', 'order-A'], ['B', 'order-B']]) {
      const res = await send(from, '/send', { to: '919812345678', text: `hello from ${from}`, ref });
      assert.equal(res.status, 200, await res.clone().text());
      const [{ id }] = await res.json();
      await waitFor(() => events().filter((e) => e.id === id).length >= 3, `the SENT, DELIVERED and READ events of ${from}'s send`, 20_000);
      const mine = events().filter((e) => e.id === id);
      assert.deepEqual(new Set(mine.map((e) => e.replica)), new Set([from === 'A' ? 'B' : 'A']), 'received by the other replica');
      assert.deepEqual(mine.map((e) => [e.ref, e.status, e.state]), [
        [ref, 'SENT', 'SENT'],
        [ref, 'DELIVERED', 'DELIVERED'],
        [ref, 'READ', 'READ'],
      ]);
    }
  });

  it("the account's keys in Redis are those ADR 0004 lists, each prefixed once", async () => {
    // A send reporting to the callback node, and its SENT event: a record and a delivery state to look at.
    const res = await send('A', '/send', { to: '919812345678', text: 'keys', ref: 'keys' });
    assert.equal(res.status, 200, await res.clone().text());
    const [{ id }] = await res.json();
    await waitFor(() => events().some((e) => e.id === id), 'the SENT event of the send');
    await allPolled(inject(1), 'a poll');
    const { createClient } = require('@redis/client');
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const prefix = 'kaleyra:{acct}:';
      const keys = (await client.keys(`${prefix}*`)).map((k) => k.slice(prefix.length));
      const listed = /^(corr:r:[\w-]+|corr:s:[\w-]+:[^:]+|corr:due:[\w.-]+|poll:poll:(cursor|lease|rec:[\w-]+)|rate|epoch)$/;
      assert.deepEqual(keys.filter((k) => !listed.test(k)), [], 'keys not laid out as ADR 0004 says');
      assert.ok(keys.some((k) => k.startsWith('corr:r:')), "a send's record");
      assert.ok(keys.some((k) => k.startsWith('corr:s:')), 'a delivery state');
    } finally {
      await client.close();
    }
  });

  it('N SMS are emitted exactly once across both replicas while both poll, by one replica at a time', async () => {
    const messages = [];
    for (let round = 0; round < 5; round++) {
      messages.push(...inject(4));
      await new Promise((r) => setTimeout(r, 400));
    }
    await polledOnce(messages, 'both polling');
    const by = new Set(polled().filter((p) => messages.includes(p.message)).map((p) => p.replica));
    assert.equal(by.size, 1, `one replica holds the lease (${[...by]})`);
  });

  it("the account's rate limit (5/s) holds for both replicas together", async () => {
    const before = h.sim.requests.length;
    const watch = await monitor();
    try {
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => send(i % 2 ? 'A' : 'B', '/rated', { to: '919812345670', text: `rated ${i}` })));
      assert.deepEqual(results.map((r) => r.status), Array(20).fill(200));
      const received = h.sim.requests.slice(before).filter((r) => r.endpoint === 'messaging' && /rated/.test(r.fields.body ?? ''));
      assert.equal(received.length, 20);
      // The starts the shared limiter admitted: its script's ZADD of each, scored by Redis's clock.
      const admitted = watch
        .commands()
        .filter((c) => c.from === 'lua' && c.command === 'ZADD' && c.args[0] === 'kaleyra:{acct-rated}:rate')
        .map((c) => Number(c.args[1]))
        .sort((a, b) => a - b);
      assert.equal(admitted.length, 20, 'each send admitted once by the limiter both replicas share');
      const shown = admitted.map((t) => t - admitted[0]).join(', ');
      for (const start of admitted) {
        const inWindow = admitted.filter((t) => t > start - 1000 && t <= start).length;
        assert.ok(inWindow <= 5, `${inWindow} starts within the second up to ${start - admitted[0]} ms: ${shown}`);
      }
      // 20 starts at 5 per second span at least 3 seconds (the first 5 at once); each replica alone at 5/s, 1.5.
      assert.ok(admitted.at(-1) - admitted[0] >= 3000, `20 starts within ${admitted.at(-1) - admitted[0]} ms: ${shown}`);
    } finally {
      await watch.stop();
    }
  });

  it('Redis killed mid-run and started again with its data: sends go on, polling pauses and resumes, nothing lost or twice', async () => {
    const earlier = polled().length;
    const logged = { A: replicas.A.log.length, B: replicas.B.log.length };
    await redis.kill();
    // Sends go on while the shared state is down (their events may come uncorrelated).
    const res = await send('A', '/send', { to: '919812345679', text: 'during the outage', ref: 'outage' });
    assert.equal(res.status, 200, await res.clone().text());
    const during = inject(3);
    // Both replicas noticed the outage, and polling was tried and paused (a replica says so once, until it
    // polls again): nothing was emitted.
    await outageNoticed(logged);
    await waitFor(() => ['A', 'B'].some((name) => /polling paused: the state store failed/.test(replicas[name].log.slice(logged[name]))), 'the polling to pause');
    assert.equal(polled().length, earlier, 'polling paused: nothing emitted while Redis is down');
    await redis.start();
    const after = inject(2);
    await polledOnce([...during, ...after], 'after the restart with AOF');
    for (const name of ['A', 'B']) assert.match(replicas[name].log, /shared state store \(Redis at 127\.0\.0\.1:\d+\) cannot be reached/);
  });

  it('Redis back empty (no persistence): neither replica emits again what it emitted; new SMS come once', async () => {
    const earlier = inject(3);
    await polledOnce(earlier, 'before the loss');
    const already = new Set(polled().map((p) => p.message));
    const count = polled().length;
    const logged = { A: replicas.A.log.length, B: replicas.B.log.length };
    await redis.kill();
    // An outage both replicas notice (their clients then reconnect on their own schedules), then Redis empty.
    await outageNoticed(logged);
    redis.wipe();
    await redis.start();
    // New SMS, and two barrier polls after them: what the first polls after the loss emit has come by then.
    const fresh = inject(3);
    await polledOnce(fresh, 'after the loss');
    for (const p of polled().slice(count)) assert.ok(!already.has(p.message), `${p.message} emitted again`);
  });

  // The lease lasts max(2 intervals, 5 s) − 1 s and the other replica tries for it every second, so a
  // replica that dies is replaced within max(2 intervals, 5 s) on a machine that keeps its timers. What
  // holds whatever the machine's speed, and is checked on Redis's clock: the lease is set for that long,
  // no replica takes it while it runs, and the other replica's first try after it ran out takes it.
  it('a replica killed while it holds the lease: the lease (max(2 intervals, 5 s) − 1 s) runs out, and the other takes it at its first try after that', async () => {
    const LEASE = 'kaleyra:{acct}:poll:poll:lease';
    const probe = inject(1);
    await allPolled(probe, 'the probe');
    const holder = polled().find((p) => p.message === probe[0]).replica;
    const survivor = other(holder);
    const watch = await monitor();
    const leaseSets = () => watch.commands().filter((c) => c.from === 'lua' && c.command === 'SET' && c.args[0] === LEASE);
    try {
      await waitFor(() => leaseSets().length >= 1, "the holder's renewal of its lease");
      replicas[holder].kill();
      await replicas[holder].exited;
      const killedAt = Date.now();
      const messages = inject(2);
      await waitFor(() => messages.every((m) => polled().some((p) => p.message === m && p.replica === survivor)), 'the survivor to poll');
      console.log(`      (${survivor} polled ${Date.now() - killedAt} ms after ${holder} was killed)`);

      const commands = watch.commands();
      const sets = leaseSets();
      const held = sets[0].args[1]; // only the holder renews a lease it holds: the others' tries fail
      const renewals = sets.filter((c) => c.args[1] === held);
      assert.deepEqual([...new Set(renewals.map((c) => c.args.slice(2).join(' ')))], ['PX 4000'], 'the lease lasts max(2 × 1 s, 5 s) − 1 s');
      const ranOut = renewals.at(-1).at + 4000;
      const taken = sets.find((c) => c.args[1] !== held);
      assert.ok(taken, 'the survivor took the lease');
      console.log(`      (the lease ran out ${Math.round(ranOut - renewals.at(-1).at)} ms after its last renewal; taken ${Math.round(taken.at - ranOut)} ms after that, by Redis's clock)`);
      assert.ok(taken.at >= ranOut - 1, `taken ${Math.round(ranOut - taken.at)} ms before the lease ran out`);
      const tries = commands.filter((c) => ['EVALSHA', 'EVAL'].includes(c.command) && c.args.includes(LEASE) && c.args.includes(taken.args[1]));
      const triesAfter = tries.filter((c) => c.at >= ranOut && c.at <= taken.at);
      assert.equal(triesAfter.length, 1, "the survivor's first try after the lease ran out took it");
      await polledOnce(messages, 'after the takeover');
    } finally {
      await watch.stop();
      // The killed replica comes back for the tests that follow.
      if (replicas[holder].exit) await replicas[holder].start();
    }
  });

  it('a full redeploy leaves the number of Redis connections as it was (CLIENT LIST)', async () => {
    // Two accounts on each replica, one connection each (a replica an earlier test restarted connects as its
    // flows start; a client an earlier test closed goes a moment later).
    await waitFor(async () => (await redis.clients()) === 4, 'one connection for each of the two accounts on each replica');
    const before = await redis.clients();
    const flowsNow = await (await replicas.A.fetch('/flows')).json();
    const started = replicas.A.log.length;
    await replicas.A.deploy(flowsNow);
    await waitFor(() => /Started flows/.test(replicas.A.log.slice(started)), 'the redeployed flows');
    await waitFor(async () => (await redis.clients()) === before, `the connections back to ${before}`, 10_000).catch(() => undefined);
    assert.equal(await redis.clients(), before);
  });
});
