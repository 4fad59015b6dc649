'use strict';
// Inbox polling: the InboxPoller over a fake inbox, a state store and a snapshot (what is emitted, what
// is read, what is remembered; a service that reads fromdate as a day; a store that lost its contents;
// two replicas on one store), and kaleyra-inbox with a poll interval against the built-in simulator in
// the real Node-RED runtime, across a redeploy.
const assert = require('node:assert/strict');
const { InboxPoller, recordKey } = require('../dist/core/inbox-poll');
const { helper, setFlows, NODE_MODULES, catchNode } = require('./helpers/flow');
const { until } = require('./helpers/http-node');
const { MemoryStore } = require('../dist/core/state-store');
const { SlowStore } = require('./helpers/slow-store');
const { hooks } = require('./helpers/node-red').fromNodeRed('@node-red/util');

const T0 = Date.UTC(2024, 0, 2, 10, 0, 0);
const at = (seconds) => new Date(T0 + seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');
const rec = (seconds, message, sender = '919812345678') => ({
  recipient: '919200000000',
  keyword: message.split(' ')[0].toUpperCase(),
  sender,
  message,
  operator: '',
  circle: '',
  response: '',
  received_time: typeof seconds === 'number' ? at(seconds) : seconds,
});

/** An inbox as the service keeps it: newest last, `fromdate` inclusive, pages of `pageSize`. */
class FakeInbox {
  constructor(pageSize = 3) {
    this.records = [];
    this.pageSize = pageSize;
    this.reads = []; // [page, fromdate]
    this.failOn = undefined; // a page number whose read fails once
  }
  add(...records) {
    this.records.push(...records);
  }
  read = async (page, fromdate) => {
    this.reads.push([page, fromdate]);
    if (this.failOn === page) {
      this.failOn = undefined;
      throw new Error('connection reset');
    }
    const matches = this.records.filter((r) => !fromdate || r.received_time >= fromdate);
    return matches.slice((page - 1) * this.pageSize, page * this.pageSize).map((r) => ({ ...r }));
  };
}

/** The poller's snapshot, as the node keeps it in its context (a copy in, a copy out). */
class Snapshot {
  constructor() {
    this.state = undefined;
  }
  async load() {
    return this.state && structuredClone(this.state);
  }
  async save(state) {
    this.state = structuredClone(state);
  }
}

/** A poller over a fresh memory store and snapshot unless given. */
function poller(inbox, { store = new MemoryStore(), local = new Snapshot(), ...options } = {}) {
  return Object.assign(new InboxPoller(inbox.read, store, local, options), { store, local });
}
const cursor = async (p) => (await p.store.get('cursor')) ?? {};

/** One poll; resolves to the messages of the records emitted. */
async function poll(poller, pageSize = 3) {
  const emitted = [];
  const count = await poller.poll((records) => emitted.push(...records), pageSize);
  assert.equal(count, emitted.length);
  return emitted.map((r) => r.message);
}

describe('inbox polling', function () {
  describe('InboxPoller', () => {
    it('the first poll emits every record; the next only new ones, read from the watermark less the window', async () => {
      const inbox = new FakeInbox();
      const p = poller(inbox);
      inbox.add(rec(0, 'a'), rec(10, 'b'), rec(20, 'c'), rec(30, 'd'), rec(40, 'e'));
      assert.deepEqual(await poll(p), ['a', 'b', 'c', 'd', 'e']);
      assert.deepEqual(inbox.reads, [
        [1, undefined],
        [2, undefined],
      ]);
      assert.equal((await cursor(p)).watermark, at(40));

      inbox.reads.length = 0;
      assert.deepEqual(await poll(p), []);
      assert.deepEqual(
        inbox.reads,
        [
          [1, at(-20)],
          [2, at(-20)],
        ],
        'from 60 s before the newest record seen',
      );

      inbox.add(rec(45, 'f'), rec(50, 'g'));
      assert.deepEqual(await poll(p), ['f', 'g']);
      assert.deepEqual(await poll(p), []);
      assert.equal((await cursor(p)).watermark, at(50));
      assert.equal(p.local.state.watermark, at(50));
    });

    it('reads page after page until a short page, handing on each page as it comes', async () => {
      const inbox = new FakeInbox(3);
      const p = poller(inbox);
      inbox.add(...Array.from({ length: 6 }, (_, i) => rec(i, `m${i}`)));
      const batches = [];
      await p.poll((records) => batches.push(records.map((r) => r.message)), 3);
      assert.deepEqual(batches, [
        ['m0', 'm1', 'm2'],
        ['m3', 'm4', 'm5'],
      ]);
      assert.deepEqual(
        inbox.reads.map(([p]) => p),
        [1, 2, 3],
        'a full last page needs one more (empty) read',
      );
    });

    it('stops after maxPages', async () => {
      const inbox = new FakeInbox(1);
      const p = poller(inbox, { maxPages: 2 });
      inbox.add(rec(0, 'a'), rec(1, 'b'), rec(2, 'c'));
      assert.deepEqual(await poll(p, 1), ['a', 'b']);
      assert.equal(inbox.reads.length, 2);
    });

    it('records at the same second as the window boundary are read again but not emitted again', async () => {
      const inbox = new FakeInbox(10);
      const p = poller(inbox);
      // The boundary of the next read is 100 - 60 = 40: records at exactly 40 are read again.
      inbox.add(rec(40, 'edge 1'), rec(40, 'edge 2'), rec(100, 'newest'));
      assert.deepEqual(await poll(p, 10), ['edge 1', 'edge 2', 'newest']);
      // A record of that same second that arrived late, and one at the newest second.
      inbox.add(rec(40, 'edge 3'), rec(100, 'newest 2'));
      assert.deepEqual(await poll(p, 10), ['edge 3', 'newest 2']);
      assert.equal(inbox.reads.at(-1)[1], at(40));
      // Time moves on: the old boundary records fall out of the read window and stay emitted once.
      inbox.add(rec(161, 'later'));
      assert.deepEqual(await poll(p, 10), ['later']);
      assert.deepEqual(await poll(p, 10), []);
      assert.equal(inbox.reads.at(-1)[1], at(101));
    });

    it('a service that reads fromdate as a day (ignoring the time) returns the day again on every poll: each record is still emitted once', async () => {
      const inbox = new FakeInbox(50);
      const day = (time) => time && time.slice(0, 10);
      inbox.read = async (page, fromdate) => {
        inbox.reads.push([page, fromdate]);
        const matches = inbox.records.filter((r) => !fromdate || day(r.received_time) >= day(fromdate));
        return matches.slice((page - 1) * inbox.pageSize, page * inbox.pageSize).map((r) => ({ ...r }));
      };
      const p = poller(inbox);
      const emitted = [];
      for (let hour = 0; hour < 20; hour++) {
        inbox.add(rec(hour * 3600, `h${hour} a`), rec(hour * 3600 + 1, `h${hour} b`));
        emitted.push(...(await poll(p, 50)));
        emitted.push(...(await poll(p, 50)));
      }
      assert.equal(emitted.length, 40, 'each record once');
      assert.equal(new Set(emitted).size, 40);
      assert.ok(inbox.reads.at(-1)[1] > at(18 * 3600), 'the reads asked from the watermark');
    });

    it('a new poller over the same store and snapshot (a redeploy) emits nothing twice', async () => {
      const inbox = new FakeInbox();
      const first = poller(inbox);
      inbox.add(rec(0, 'a'), rec(30, 'b'), rec(30, 'c'));
      assert.deepEqual(await poll(first), ['a', 'b', 'c']);
      const again = () => poller(inbox, { store: first.store, local: first.local });
      assert.deepEqual(await poll(again()), []);
      inbox.add(rec(31, 'd'));
      assert.deepEqual(await poll(again()), ['d']);
    });

    it('a store that lost its contents (a restart of a memory store, with the snapshot in a persistent context) is re-seeded: nothing is emitted twice, new records are', async () => {
      const inbox = new FakeInbox(10);
      const first = poller(inbox);
      inbox.add(rec(0, 'a'), rec(70, 'b'), rec(100, 'c'), rec(100, 'd'));
      assert.deepEqual(await poll(first, 10), ['a', 'b', 'c', 'd']);
      // A new process: an empty store, the snapshot from the node's context.
      const restarted = poller(inbox, { local: first.local });
      inbox.add(rec(100, 'e'), rec(120, 'f'));
      assert.deepEqual(await poll(restarted, 10), ['e', 'f'], 'alone on its store, the poller still hands on a record of the last second');
      assert.deepEqual(await poll(restarted, 10), []);
      // Without any snapshot the poller cannot know: it starts over (the first poll of a new node).
      assert.equal((await poll(poller(inbox), 10)).length, 6);
    });

    it('a shared store that lost its contents: nothing up to the newest time the replica knows is emitted again, newer records are', async () => {
      const inbox = new FakeInbox(10);
      const first = poller(inbox, { store: new SlowStore(new MemoryStore()) });
      inbox.add(rec(0, 'a'), rec(50, 'b'), rec(100, 'c'));
      assert.deepEqual(await poll(first, 10), ['a', 'b', 'c']);
      // The Redis restarted empty: a new epoch. A record of that same second (another replica may have sent it) is skipped.
      const emptied = poller(inbox, { store: new SlowStore(new MemoryStore()), local: first.local });
      inbox.add(rec(100, 'same second'), rec(101, 'newer'));
      assert.deepEqual(await poll(emptied, 10), ['newer']);
      assert.deepEqual(await poll(emptied, 10), []);
      assert.equal((await cursor(emptied)).floor, at(100));
    });

    it('a replica that did not poll (no lease) keeps up with the shared cursor: taking over after a loss, it emits nothing again', async () => {
      const inbox = new FakeInbox(10);
      const shared = new SlowStore(new MemoryStore());
      const leader = poller(inbox, { store: shared });
      const follower = poller(inbox, { store: shared });
      inbox.add(rec(0, 'a'), rec(50, 'b'), rec(100, 'c'));
      assert.deepEqual(await poll(leader, 10), ['a', 'b', 'c']);
      await follower.observe();
      assert.equal(follower.local.state.watermark, at(100));
      // Redis back empty; the follower takes the lease and polls first.
      const emptied = poller(inbox, { store: new SlowStore(new MemoryStore()), local: follower.local });
      inbox.add(rec(101, 'd'));
      assert.deepEqual(await poll(emptied, 10), ['d']);
      // Without observing, a follower knows nothing and would start over: that is what observe() prevents.
      assert.equal((await poll(poller(inbox, { store: new SlowStore(new MemoryStore()) }), 10)).length, 4);
    });

    it('a poll that hands records on and then fails (the store went away as the cursor was written) keeps them in the snapshot: a store back empty does not get them again', async () => {
      const inbox = new FakeInbox(10);
      const store = new SlowStore(new MemoryStore());
      const p = poller(inbox, { store });
      inbox.add(rec(0, 'a'));
      assert.deepEqual(await poll(p, 10), ['a']);
      inbox.add(rec(50, 'b'));
      store.put = async () => {
        throw new Error('Redis did not answer in time');
      };
      const emitted = [];
      await assert.rejects(p.poll((records) => emitted.push(...records.map((r) => r.message)), 10), /did not answer/);
      assert.deepEqual(emitted, ['b'], 'b was handed on before the store failed');
      // Redis back empty: the store is re-seeded from the snapshot, past b.
      const emptied = poller(inbox, { store: new SlowStore(new MemoryStore()), local: p.local });
      inbox.add(rec(60, 'c'));
      assert.deepEqual(await poll(emptied, 10), ['c']);
    });

    it('storeLost: true once the store lost the contents the snapshot came from, until a poll re-seeds it', async () => {
      const inbox = new FakeInbox(10);
      const shared = new SlowStore(new MemoryStore());
      const leader = poller(inbox, { store: shared });
      const follower = poller(inbox, { store: shared });
      assert.equal(await follower.storeLost(), false, 'no snapshot yet: nothing to lose');
      inbox.add(rec(0, 'a'));
      assert.deepEqual(await poll(leader, 10), ['a']);
      await follower.observe();
      assert.equal(await follower.storeLost(), false);
      // Redis back empty, seen by both: lost, until the leader's poll re-seeds it.
      const emptied = new SlowStore(new MemoryStore());
      const [leader2, follower2] = [leader, follower].map((p) => poller(inbox, { store: emptied, local: p.local }));
      assert.equal(await follower2.storeLost(), true);
      assert.deepEqual(await poll(leader2, 10), []);
      assert.equal(await follower2.storeLost(), false, 're-seeded by the leader');
    });

    it('two replicas polling one shared store, each poll interleaved with the other: every record is emitted once in all', async () => {
      const inbox = new FakeInbox(4);
      const store = new SlowStore(new MemoryStore());
      const replicas = [poller(inbox, { store }), poller(inbox, { store })];
      const emitted = [];
      for (let step = 0; step < 30; step++) {
        inbox.add(rec(step * 7, `r${step} a`), rec(step * 7, `r${step} b`), rec(step * 7 + 1, `r${step} c`));
        const batches = await Promise.all(replicas.map((p) => poll(p, 4)));
        emitted.push(...batches.flat());
      }
      assert.equal(emitted.length, 90);
      assert.equal(new Set(emitted).size, 90, 'no record twice');
    });

    it('a poll that fails part way keeps what it emitted: the next poll does not emit it again', async () => {
      const inbox = new FakeInbox(2);
      const p = poller(inbox);
      inbox.add(rec(0, 'a'), rec(1, 'b'), rec(2, 'c'), rec(3, 'd'), rec(4, 'e'));
      inbox.failOn = 2;
      const emitted = [];
      await assert.rejects(
        p.poll((records) => emitted.push(...records.map((r) => r.message)), 2),
        /connection reset/,
      );
      assert.deepEqual(emitted, ['a', 'b']);
      assert.deepEqual(await poll(p, 2), ['c', 'd', 'e']);
    });

    it('the snapshot stays bounded by the window', async () => {
      const inbox = new FakeInbox(50);
      const p = poller(inbox, { windowSeconds: 60 });
      let total = 0;
      let most = 0;
      for (let step = 0; step < 100; step++) {
        // Five records every 10 seconds; about 7 steps' worth fall inside a 60-second window.
        for (let i = 0; i < 5; i++) inbox.add(rec(step * 10, `s${step} r${i}`));
        total += (await poll(p, 50)).length;
        most = Math.max(most, p.local.state.recent.length);
      }
      assert.equal(total, 500, 'each record emitted once');
      assert.ok(most <= 7 * 5, `at most the records of the last 60 s are kept (${most})`);
    });

    it('records without a usable received_time are still emitted once; the snapshot keeps at most maxSnapshotKeys', async () => {
      const inbox = new FakeInbox(100);
      const p = poller(inbox, { maxSnapshotKeys: 5 });
      inbox.add(...Array.from({ length: 4 }, (_, i) => rec('', `undated ${i}`)));
      assert.equal((await poll(p, 100)).length, 4);
      assert.deepEqual(await poll(p, 100), []);
      assert.equal((await cursor(p)).watermark, undefined);
      inbox.add(...Array.from({ length: 4 }, (_, i) => rec('sometime', `odd ${i}`)));
      assert.equal((await poll(p, 100)).length, 4);
      assert.equal(p.local.state.recent.length, 5);
    });

    it('recordKey tells records apart by recipient, sender, time, keyword and message', () => {
      const base = rec(0, 'HELLO there');
      assert.equal(recordKey(base), recordKey({ ...base }));
      for (const change of [{ sender: '1' }, { recipient: '2' }, { received_time: at(1) }, { keyword: 'X' }, { message: 'HELLO there!' }]) {
        assert.notEqual(recordKey({ ...base, ...change }), recordKey(base), JSON.stringify(change));
      }
      assert.equal(recordKey({ ...base, operator: 'op', circle: 'c' }), recordKey(base), 'operator and circle do not count');
    });
  });

  describe('kaleyra-inbox with a poll interval (simulator)', () => {
    let out;
    let polls; // statuses "polled: N new" so far
    const failures = [];

    const flow = () => [
      { id: 'f1', type: 'tab', label: 'poll' },
      { id: 'cfg', type: 'kaleyra-config', name: 'sim', simulator: true, timeout: 60 },
      { id: 'n1', type: 'kaleyra-inbox', z: 'f1', account: 'cfg', pollInterval: 1, wires: [['out']] },
      { id: 'out', type: 'helper', z: 'f1' },
      { id: 'c1', type: 'catch', z: 'f1', scope: null, uncaught: false, wires: [['caught']] },
      { id: 'caught', type: 'helper', z: 'f1' },
    ];

    // What n1 sends is seen through the runtime's onSend hook, so nothing sent while a redeploy is
    // starting the new nodes (before a test could attach listeners to them) can be missed.
    before(() => {
      hooks.add('onSend.inboxPollTest', (events) => {
        for (const e of events) if (e.source && e.source.id === 'n1') out.push(e.msg);
      });
    });
    after(() => hooks.remove('*.inboxPollTest'));

    /** Counts the node's completed polls (its "polled: N new" statuses) and fails on a Catch. */
    function watch() {
      const node = helper.getNode('n1');
      const status = node.status.bind(node);
      node.status = (s) => {
        if (/^polled: /.test(s.text)) polls.push(s.text);
        status(s);
      };
      helper.getNode('caught').on('input', (m) => failures.push(m.error));
    }
    /** Waits for `n` more completed polls. */
    const morePolls = (n) => {
      const target = polls.length + n;
      return until(() => polls.length >= target, `${n} more polls`, 60_000);
    };

    after(() => helper.unload());
    afterEach(() => assert.deepEqual(failures, [], 'no poll failed'));

    it('emits each injected SMS once across polls, and nothing twice after a redeploy', async () => {
      out = [];
      polls = [];
      await helper.load([catchNode, NODE_MODULES['kaleyra-config'], NODE_MODULES['kaleyra-inbox']], flow(), {});
      watch();
      // Through the simulator's control route on the admin API (its permission check passes in the test helper).
      const inject = (from, message) => helper.request().post('/kaleyra-simulator/sms').send({ from, message }).expect(200);
      await until(() => helper.request().post('/kaleyra-simulator/sms').send({}).then((r) => r.status === 400), 'the simulator');

      await inject('919812345678', 'PIZZA one');
      await inject('919812345679', 'PIZZA two');
      await inject('919812345670', 'HELLO three');
      await until(() => out.length >= 3, 'three records');
      await morePolls(2);
      assert.deepEqual(
        out.map((m) => m.payload.message),
        ['PIZZA one', 'PIZZA two', 'HELLO three'],
      );
      for (const m of out) {
        assert.equal(m.topic, 'kaleyra/inbox');
        assert.equal(typeof m.payload.received_time, 'string');
        assert.ok(!Array.isArray(m.payload), 'one msg per record');
      }

      await inject('919812345678', 'PIZZA four');
      await until(() => out.length >= 4, 'the fourth record');
      await morePolls(2);
      assert.equal(out.length, 4);
      assert.equal(out[3].payload.sender, '919812345678');

      // A full redeploy with the same node ids. The runtime deletes a stopped node's memory context
      // (Node.close → context.delete; the helper's context is memory only), so the poll state comes back
      // from what the node's store carries over a redeploy. The shared simulator outlives the redeploy.
      await setFlows(flow(), 'full', {});
      watch();
      await morePolls(2);
      assert.equal(out.length, 4, 'nothing emitted again after the redeploy');
      await inject('919812345671', 'HELLO five');
      await until(() => out.length >= 5, 'the record injected after the redeploy');
      await morePolls(2);
      assert.deepEqual(
        out.map((m) => m.payload.message),
        ['PIZZA one', 'PIZZA two', 'HELLO three', 'PIZZA four', 'HELLO five'],
      );

      // A node removed from the flows and added back (an undo in the editor): the account still knows
      // what was handed on (its claims last 7 days), so nothing comes twice.
      await setFlows(
        flow().filter((n) => n.id !== 'n1'),
        'full',
        {},
      );
      await setFlows(flow(), 'full', {});
      watch();
      await morePolls(2);
      assert.equal(out.length, 5);
    });
  });
});
