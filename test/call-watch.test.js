'use strict';
// "Watch until final" of kaleyra-call-status: the core CallWatcher over a scripted read (changes, final,
// time running out, groups read together, bounded parallel reads, backoff, errors that end a watch), then
// the node in the real runtime against the simulator: a click-to-call moving through its states, and
// 1,000 calls watched at once within the account's rate limit.
const assert = require('node:assert/strict');
const { CallWatcher, callGroup, DEFAULT_FINAL_STATUSES } = require('../dist/core/call-watch');
const { ServiceError, TransportError } = require('../dist/core/errors');
const { Simulator, DEMO_KEY } = require('../dist/simulator');
const { KaleyraClient } = require('../dist/core/client');
const { helper, loadNode } = require('./helpers/flow');
const { until } = require('./helpers/http-node');

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

/** A CallWatcher over `read`, and the events it hands on. */
function watcher(read, { failed = () => undefined, parallel } = {}) {
  const events = [];
  return { events, w: new CallWatcher(read, (e) => events.push(e), failed, parallel) };
}

describe('call-status watch', function () {
  this.timeout(60_000);

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

    it('stops after maxMs: one last message, final and timedOut', async () => {
      const { read } = scripted({ c1: ['INPROGRESS'] });
      const { events, w } = watcher(read);
      w.add([rec('c1', 'QUEUED')], 'ctx', opts({ maxMs: 400 }));
      await until(() => events.some((e) => e.final), 'the end of the watch');
      assert.deepEqual(events.map((e) => [e.record.status, e.final, e.timedOut]), [
        ['INPROGRESS', false, false],
        ['INPROGRESS', true, true],
      ]);
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

    it('at most `parallel` reads are out at once, whatever the number of watched calls', async () => {
      let out = 0;
      let most = 0;
      const read = async (id) => {
        most = Math.max(most, ++out);
        await new Promise((r) => setTimeout(r, 20));
        out--;
        return [rec(id, 'COMPLETED')];
      };
      const { events, w } = watcher(read, { parallel: 3 });
      w.add(Array.from({ length: 30 }, (_, i) => rec(`call${i}`, 'QUEUED')), 'ctx', opts({ intervalMs: 10 }));
      await until(() => events.length === 30, 'thirty final statuses');
      assert.ok(most <= 3, `${most} reads at once`);
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
      await until(() => events.length === 1 && failures.length === 1, 'both watches to end', 10_000);
      assert.deepEqual(failures, [['b', 'A416']], 'the refusal ends its watch with an error, once');
      assert.equal(events[0].record.status, 'COMPLETED', 'the timeouts only delayed the other');
      // Pauses after failures double: 400, 800, 1600 ms (read on the watcher's 250 ms tick).
      const gaps = times.slice(1).map((t, i) => t - times[i]);
      assert.equal(gaps.length, 3);
      assert.ok(gaps[2] > gaps[0] + 600, `pauses ${gaps.join(', ')} ms`);
    });

    it('stop() ends every watch: nothing more is read or handed on', async () => {
      const { read, reads } = scripted({ c1: ['INPROGRESS'] });
      const { events, w } = watcher(read);
      w.add([rec('c1', 'QUEUED')], 'ctx', opts());
      w.stop();
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual([reads.length, events.length, w.size], [0, 0, 0]);
    });
  });

  describe('kaleyra-call-status in the runtime, against the simulator', () => {
    // Legs that take 2.5 s to answer and 2.5 s to end: a 2 s watch sees each state of a click-to-call.
    const sim = new Simulator({ clickToCallTimingsMs: [2500, 2500] });
    let urls;
    before(async () => (urls = await sim.start()));
    afterEach(() => helper.unload());
    after(() => sim.stop());

    it('follows a click-to-call through its states until final: each change a message, the last final', async () => {
      const client = new KaleyraClient({ apiKey: DEMO_KEY, ...urls });
      const { payload: call } = await client.startClickToCall({ caller: '9812345678', receiver: '9812345679' });
      await client.close();
      const t = await loadNode('kaleyra-call-status', { watch: true, watchInterval: 2 }, { config: { ...urls }, apiKey: DEMO_KEY });
      t.node.receive({ payload: call.id, ref: 'ticket-9' });
      await until(() => t.outputs.some((m) => m.final), 'the final message', 20_000);
      const seen = t.outputs.map((m) => [m.payload[0].status, m.final, m.topic, m.ref]);
      assert.deepEqual(seen, [
        ['QUEUED', false, 'kaleyra/call-status', 'ticket-9'],
        ['INPROGRESS', false, 'kaleyra/call-status', 'ticket-9'],
        ['COMPLETED', true, 'kaleyra/call-status', 'ticket-9'],
      ]);
      assert.equal(t.errors.length, 0);
    });

    it('a redeploy ends every watch: no read after it, nothing left running', async () => {
      const call = sim.addCall({ id: '1700000001.7-1', mobile: '9812345678', status: 'INPROGRESS' });
      const t = await loadNode('kaleyra-call-status', { watch: true, watchInterval: 2 }, { config: { ...urls }, apiKey: DEMO_KEY });
      const reads = () => sim.requests.filter((r) => r.endpoint === 'obd' && r.fields.id === call.id).length;
      t.node.receive({ payload: call.id });
      await until(() => reads() >= 2, 'a first watch read', 10_000);
      const flows = await helper._redNodes.getFlows();
      await helper.setFlows(flows.flows, 'full', { cfg: { apiKey: DEMO_KEY } });
      const after = reads();
      await new Promise((r) => setTimeout(r, 4500));
      assert.equal(reads(), after, 'no read after the redeploy');
    });

    it('1,000 calls watched at once stay within the account\'s rate limit (250/s), groups read together', async () => {
      sim.clear();
      const records = [];
      for (let g = 0; g < 100; g++) for (let n = 1; n <= 10; n++) records.push(sim.addCall({ id: `1700000000.${g}-${n}`, mobile: '9812345678', status: 'QUEUED' }));
      const t = await loadNode('kaleyra-call-status', { watch: true, watchInterval: 2 }, { config: { ...urls, rateLimit: 250, queueSize: 2000, concurrency: 16 }, apiKey: DEMO_KEY });
      const start = sim.requests.length;
      for (const r of records) t.node.receive({ payload: r.id });
      await until(() => t.outputs.length === 1000, 'the 1,000 first answers', 20_000);
      for (const r of records) r.status = 'COMPLETED';
      await until(() => t.outputs.filter((m) => m.final).length === 1000, 'the 1,000 final messages', 30_000);
      const reads = sim.requests.slice(start).filter((r) => r.endpoint === 'obd');
      const times = reads.map((r) => r.at).sort((a, b) => a - b);
      for (const at of times) {
        const inWindow = times.filter((x) => x >= at && x < at + 950).length;
        assert.ok(inWindow <= 250, `${inWindow} reads within 950 ms`);
      }
      const groupReads = reads.filter((r) => r.fields.method === 'voice.groupStatus').length;
      assert.ok(groupReads >= 100, `${groupReads} group reads`);
      assert.ok(reads.length < 1000 + 300, `${reads.length} reads for 1,000 first answers and their watch`);
      assert.equal(t.errors.length, 0, JSON.stringify(t.errors.slice(0, 2).map((m) => m.error)));
    });
  });
});
