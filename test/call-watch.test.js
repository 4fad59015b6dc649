'use strict';
// "Watch until final" of kaleyra-call-status: the core CallWatcher over a scripted read (changes, final,
// time running out, groups read together, bounded parallel reads, backoff, errors that end a watch), then
// the node in the real runtime against the simulator: a click-to-call moving through its states, and
// 1,000 calls watched at once within the account's rate limit.
const assert = require('node:assert/strict');
const diagnostics = require('node:diagnostics_channel');
const { CallWatcher, callGroup, DEFAULT_FINAL_STATUSES } = require('../dist/core/call-watch');
const { ServiceError, TransportError } = require('../dist/core/errors');
const { Simulator, DEMO_KEY } = require('../dist/simulator');
const { KaleyraClient } = require('../dist/core/client');
const { FlowControl } = require('../dist/core/flow-control');
const { helper, loadNode, setFlows } = require('./helpers/flow');
const { until } = require('./helpers/http-node');
const { fakeTimers } = require('./helpers/clock');

const finals = new Set(DEFAULT_FINAL_STATUSES);
const opts = (extra = {}) => ({ intervalMs: 40, maxMs: 5000, finals, ...extra });
const rec = (id, status) => ({ id, mobile: '9812345678', status, senttime: '2026-11-24 10:00:00' });

/** A service script: each id's statuses in turn, one per read; records reads as [id, method]. */
function scripted(statuses) {
  const reads = [];
  const seen = new Map();
  const read = async (id, method) => {
    reads.push([id, method]);
    const ids = method === 'voice.groupStatus' ? Object.keys(statuses).filter((k) => callGroup(k) === id) : [id];
    return ids.map((i) => {
      const n = seen.get(i) ?? 0;
      seen.set(i, n + 1);
      const list = statuses[i];
      return rec(i, list[Math.min(n, list.length - 1)]);
    });
  };
  return { read, reads };
}

/** For a deadline's rejection: adds what had happened by then to its message. */
const more = (what) => (err) => {
  err.message += ` (${what()})`;
  throw err;
};

/** A CallWatcher over `read`, and the events it hands on. */
function watcher(read, { failed = () => undefined, parallel } = {}) {
  const events = [];
  return { events, w: new CallWatcher(read, (e) => events.push(e), failed, parallel) };
}

describe('call-status watch', function () {
  describe('CallWatcher', () => {
    it('hands on each change, the final one last; an unchanged status is not handed on again', async () => {
      const { read } = scripted({ c1: ['RINGING', 'RINGING', 'INPROGRESS', 'INPROGRESS', 'COMPLETED'] });
      const { events, w } = watcher(read, { failed: () => assert.fail('no failure') });
      w.add([rec('c1', 'QUEUED')], 'ctx', opts());
      await until(() => events.some((e) => e.final), 'the final status');
      assert.deepEqual(events.map((e) => [e.record.status, e.final, e.timedOut, e.context]), [
        ['RINGING', false, false, 'ctx'],
        ['INPROGRESS', false, false, 'ctx'],
        ['COMPLETED', true, false, 'ctx'],
      ]);
      assert.equal(w.size, 0);
    });

    it('a call already final is not watched; the list of final statuses can be the flow\'s own', async () => {
      const { read, reads } = scripted({ c1: ['DONE'] });
      const { events, w } = watcher(read);
      w.add([rec('c0', 'COMPLETED')], 'ctx', opts());
      assert.equal(w.size, 0);
      w.add([rec('c1', 'QUEUED')], 'ctx', opts({ finals: new Set(['DONE']) }));
      await until(() => events.length === 1, 'the final status');
      assert.deepEqual([events[0].record.status, events[0].final], ['DONE', true]);
      assert.equal(reads.length, 1);
    });

    it('due calls of one group are read together with voice.groupStatus; a lone call with voice.status', async () => {
      const { read, reads } = scripted({ 'g1-1': ['COMPLETED'], 'g1-2': ['COMPLETED'], 'g1-3': ['COMPLETED'], solo: ['COMPLETED'] });
      const { events, w } = watcher(read);
      w.add(['g1-1', 'g1-2', 'g1-3', 'solo'].map((id) => rec(id, 'QUEUED')), 'ctx', opts());
      await until(() => events.length === 4, 'four final statuses');
      assert.deepEqual(reads.sort(), [
        ['g1', 'voice.groupStatus'],
        ['solo', 'voice.status'],
      ]);
    });

    // Below, the watcher's 250 ms tick and Date.now are a clock the test moves (test/helpers/clock.js): what
    // happens is counted in ticks, whatever the machine's speed.
    describe('on a clock the test moves', () => {
      let clock;
      beforeEach(() => (clock = fakeTimers()));
      afterEach(() => clock.restore());

      it('stops after maxMs: one last message, final and timedOut, at the first tick past maxMs', async () => {
        const { read } = scripted({ c1: ['INPROGRESS'] });
        const { events, w } = watcher(read);
        w.add([rec('c1', 'QUEUED')], 'ctx', opts({ maxMs: 400 }));
        await clock.advance(399);
        assert.deepEqual(events.map((e) => [e.record.status, e.final, e.timedOut]), [['INPROGRESS', false, false]], 'read on the first tick, not ended before maxMs');
        await clock.advance(101); // the tick at 500 ms is the first past maxMs
        assert.deepEqual(events.map((e) => [e.record.status, e.final, e.timedOut]), [
          ['INPROGRESS', false, false],
          ['INPROGRESS', true, true],
        ]);
        assert.equal(w.size, 0);
        assert.equal(clock.pending, 0, 'no timer left once nothing is watched');
      });

      it('at most `parallel` reads are out at once, and that many whenever enough calls are due', async () => {
        // Reads are held open until the test lets them go: a tick can only add reads, never see one end.
        const held = [];
        let out = 0;
        let most = 0;
        const read = (id) =>
          new Promise((resolve) => {
            most = Math.max(most, ++out);
            held.push(() => {
              out--;
              resolve([rec(id, 'COMPLETED')]);
            });
          });
        const { events, w } = watcher(read, { parallel: 3 });
        w.add(Array.from({ length: 30 }, (_, i) => rec(`call${i}`, 'QUEUED')), 'ctx', opts({ intervalMs: 10 }));
        for (let round = 1; round <= 10; round++) {
          await clock.advance(250);
          assert.equal(out, 3, `round ${round}: ${out} reads out after a tick with ${30 - events.length} calls due, not 3`);
          await clock.advance(250);
          assert.equal(out, 3, `round ${round}: ${out} reads out after a further tick while they are held, not 3`);
          for (const done of held.splice(0)) done();
          await clock.settle();
        }
        assert.equal(events.length, 30);
        assert.equal(most, 3);
      });

      it('a failed read is tried again after a growing pause; a service refusal ends the watch with an error', async () => {
        let calls = 0;
        const times = [];
        const read = async (id) => {
          if (id === 'gone') throw new ServiceError('A416', 'invalid call id / mobile', {});
          times.push(Date.now());
          if (++calls <= 3) throw new TransportError('TIMEOUT', 'no answer');
          return [rec(id, 'COMPLETED')];
        };
        const failures = [];
        const { events, w } = watcher(read, { failed: (ctx, err) => failures.push([ctx, err.code]) });
        w.add([rec('flaky', 'QUEUED')], 'a', opts({ intervalMs: 200 }));
        w.add([rec('gone', 'QUEUED')], 'b', opts({ intervalMs: 200 }));
        await clock.advance(10_000);
        assert.deepEqual(failures, [['b', 'A416']], 'the refusal ends its watch with an error, once');
        assert.deepEqual(events.map((e) => [e.record.status, e.final]), [['COMPLETED', true]], 'the timeouts only delayed the other');
        // After the n-th failure the pause is the interval times 2^n (400, 800, 1600 ms); the read comes on
        // the first 250 ms tick after it.
        const gaps = times.slice(1).map((t, i) => t - times[i]);
        const pauses = [400, 800, 1600];
        assert.equal(gaps.length, 3, `reads at ${times.map((t) => t - times[0]).join(', ')} ms`);
        gaps.forEach((gap, i) => assert.ok(gap >= pauses[i] && gap < pauses[i] + 250, `pause ${i + 1}: ${gap} ms, expected ${pauses[i]} ms and the wait for the next tick (gaps ${gaps.join(', ')})`));
      });

      it('stop() ends every watch: nothing more is read or handed on, no timer left running', async () => {
        const { read, reads } = scripted({ c1: ['INPROGRESS'], c2: ['INPROGRESS'] });
        const { events, w } = watcher(read);
        w.add([rec('c1', 'QUEUED')], 'ctx', opts());
        assert.equal(clock.pending, 1, 'a watch runs the tick');
        w.stop();
        assert.equal(clock.pending, 0, 'stop() leaves no timer');
        w.add([rec('c3', 'QUEUED')], 'ctx', opts());
        assert.deepEqual([clock.pending, w.size], [0, 0], 'a stopped watcher starts no new watch');
        // The barrier: a watcher that was not stopped reads and hands on within the same ten ticks.
        const control = watcher(read);
        control.w.add([rec('c2', 'QUEUED')], 'ctx', opts());
        await clock.advance(10 * 250);
        assert.ok(reads.filter(([id]) => id === 'c2').length >= 5 && control.events.length === 1, `the ticks were given: ${JSON.stringify(reads)}`);
        assert.deepEqual([reads.filter(([id]) => id !== 'c2').length, events.length, w.size], [0, 0, 0]);
        control.w.stop();
      });
    });
  });

  describe('kaleyra-call-status in the runtime, against the simulator', () => {
    // The simulator's own click-to-call timers are far off: the test moves a call from state to state.
    const sim = new Simulator({ clickToCallTimingsMs: [3_600_000, 3_600_000] });
    let urls;
    before(async () => (urls = await sim.start()));
    afterEach(() => helper.unload());
    after(() => sim.stop());

    /** Reads of call `id` as the account's client starts them (undici's diagnostics channel), with `label()` at that moment. */
    function readsOf(id, label = () => undefined) {
      const started = [];
      const onCreate = ({ request }) => {
        const url = new URL(request.path, request.origin);
        if (request.origin === new URL(urls.obdUrl).origin && url.searchParams.get('id') === id) started.push(label());
      };
      diagnostics.subscribe('undici:request:create', onCreate);
      return { started, stop: () => diagnostics.unsubscribe('undici:request:create', onCreate) };
    }

    it('follows a click-to-call through its states until final: each change a message, the last final', async () => {
      const client = new KaleyraClient({ apiKey: DEMO_KEY, ...urls });
      const { payload: call } = await client.startClickToCall({ caller: '9812345678', receiver: '9812345679' });
      await client.close();
      // The call moves on as it is read, not on a clock, so that no read, however late, can miss a state:
      // the node's own read sees it QUEUED, the watch's reads QUEUED, INPROGRESS twice, then COMPLETED.
      const states = ['QUEUED', 'QUEUED', 'INPROGRESS', 'INPROGRESS', 'COMPLETED'];
      const record = sim.calls.find((c) => c.id === call.id);
      const onRequest = (r) => {
        if (r.endpoint === 'obd' && r.fields.id === call.id) record.status = states.shift() ?? 'COMPLETED';
      };
      sim.on('request', onRequest);
      try {
        const t = await loadNode('kaleyra-call-status', { watch: true, watchInterval: 2 }, { config: { ...urls }, apiKey: DEMO_KEY });
        t.node.receive({ payload: call.id, ref: 'ticket-9' });
        await until(() => t.outputs.some((m) => m.final), 'the final message');
        const seen = t.outputs.map((m) => [m.payload?.[0]?.status, m.final, m.topic, m.ref]);
        assert.deepEqual(seen, [
          ['QUEUED', false, 'kaleyra/call-status', 'ticket-9'],
          ['INPROGRESS', false, 'kaleyra/call-status', 'ticket-9'],
          ['COMPLETED', true, 'kaleyra/call-status', 'ticket-9'],
        ]);
        assert.equal(states.length, 0, 'every state was read');
        assert.equal(t.errors.length, 0);
      } finally {
        sim.off('request', onRequest);
      }
    });

    it('a redeploy ends every watch: no read after it, nothing left running', async () => {
      const call = sim.addCall({ id: '1700000001.7-1', mobile: '9812345678', status: 'INPROGRESS' });
      const barrier = sim.addCall({ id: '1700000001.8-1', mobile: '9812345678', status: 'INPROGRESS' });
      let closed = false;
      // Each watcher's ticks (its timer), and the reads the account's client starts for the old call.
      const ticks = [];
      const tick = CallWatcher.prototype.tick;
      CallWatcher.prototype.tick = function (...args) {
        ticks.push({ watcher: this, closed });
        return tick.apply(this, args);
      };
      const old = readsOf(call.id, () => (closed ? 'after the redeploy' : 'before'));
      const fresh = readsOf(barrier.id);
      try {
        const t = await loadNode('kaleyra-call-status', { watch: true, watchInterval: 2 }, { config: { ...urls }, apiKey: DEMO_KEY });
        t.node.receive({ payload: call.id });
        await until(() => old.started.length >= 2, 'a first watch read');
        const watching = ticks.at(-1).watcher;
        // The node's own close handler (the watcher's stop) runs first, this one after it.
        t.node.on('close', () => (closed = true));
        const flows = await helper._redNodes.getFlows();
        await setFlows(flows.flows, 'full', { cfg: { apiKey: DEMO_KEY } });
        assert.ok(closed, 'the old node was closed');
        // The barrier: a watch on the new node reads twice, two intervals (eight of the old watcher's ticks);
        // timers fire in the order they are due, so a watch of the old node still running would have ticked.
        helper.getNode('n1').receive({ payload: barrier.id });
        await until(() => fresh.started.length >= 3, "the new node's first read and two watch reads");
        assert.ok(ticks.some((k) => k.watcher !== watching), "the new node's watcher ticked");
        assert.deepEqual(old.started.filter((when) => when !== 'before'), [], 'no read after the redeploy');
        assert.equal(ticks.filter((k) => k.watcher === watching && k.closed).length, 0, "the old node's watcher ticked after the redeploy");
      } finally {
        CallWatcher.prototype.tick = tick;
        old.stop();
        fresh.stop();
      }
    });

    it('1,000 calls watched at once stay within the account\'s rate limit (250/s), groups read together', async () => {
      sim.clear();
      const records = [];
      for (let g = 0; g < 100; g++) for (let n = 1; n <= 10; n++) records.push(sim.addCall({ id: `1700000000.${g}-${n}`, mobile: '9812345678', status: 'QUEUED' }));
      // What the account's limiter admitted (its own clock, when it let a request start), and the requests
      // the client then started: the limit is a property of those starts, whatever the machine's speed
      // makes of the time between a start and its arrival at the service.
      const admitted = [];
      const take = FlowControl.prototype.take;
      FlowControl.prototype.take = function (...args) {
        if (this.rate === 250) admitted.push(Date.now());
        return take.apply(this, args);
      };
      let started = 0;
      const obd = new URL(urls.obdUrl).origin;
      const onCreate = ({ request }) => request.origin === obd && started++;
      diagnostics.subscribe('undici:request:create', onCreate);
      try {
        const t = await loadNode('kaleyra-call-status', { watch: true, watchInterval: 2 }, { config: { ...urls, rateLimit: 250, queueSize: 2000, concurrency: 16 }, apiKey: DEMO_KEY });
        for (const r of records) t.node.receive({ payload: r.id });
        await until(() => t.outputs.length === 1000, 'the 1,000 first answers').catch(more(() => `${t.outputs.length} came, ${sim.requests.length} requests`));
        const switched = sim.requests.length;
        for (const r of records) r.status = 'COMPLETED';
        await until(() => t.outputs.filter((m) => m.final).length === 1000, 'the 1,000 final messages').catch(more(() => `${t.outputs.filter((m) => m.final).length} came`));
        assert.equal(t.errors.length, 0, JSON.stringify(t.errors.slice(0, 2).map((m) => m.error)));

        assert.equal(admitted.length, started, 'every read the client started was admitted by the limiter');
        for (const [i, at] of admitted.entries()) {
          const inWindow = admitted.slice(i).filter((x) => x < at + 1000).length;
          assert.ok(inWindow <= 250, `${inWindow} starts within 1 s of start ${i}`);
        }
        const reads = sim.requests.filter((r) => r.endpoint === 'obd' && r.fields.id?.startsWith('1700000000.'));
        const groupsRead = new Set(reads.filter((r) => r.fields.method === 'voice.groupStatus').map((r) => r.fields.id));
        assert.equal(groupsRead.size, 100, 'each group was read as a group');
        // Once every call is COMPLETED, each must be read once more: a watch that reads calls one by one
        // needs 1,000 reads; one that reads the calls of a group that are due together, far fewer.
        const finalReads = sim.requests.slice(switched).filter((r) => r.endpoint === 'obd').length;
        console.log(`      (${reads.length} reads in all, ${groupsRead.size} groups read as groups, ${finalReads} reads after every call ended)`);
        assert.ok(finalReads <= 500, `${finalReads} reads for the 1,000 final statuses`);
      } finally {
        FlowControl.prototype.take = take;
        diagnostics.unsubscribe('undici:request:create', onCreate);
      }
    });
  });
});
