// kaleyra-inbox: reads the VMN inbox (interface B); filters from the node, else from msg.payload.
// With a poll interval it also reads the inbox by itself and sends each record once: the account's state
// store remembers what was sent (shared by every replica with a shared store, where one replica at a time
// holds the lease to poll), and the node's context keeps a snapshot to re-seed a store that lost it.
import { randomBytes } from 'node:crypto';
import { KaleyraError } from '../core/errors';
import type { InboxQuery } from '../core/inbox';
import { InboxPoller, POLL_LIMITS, type PollSnapshot } from '../core/inbox-poll';
import { escapeControl } from '../core/redact';
import { RECONNECT } from '../core/state-store';
import { orMsg, payloadObject, registerAction, type SetupApi } from './action';
import type { RED } from './red';
import { status } from './status';

const INBOX_FILTERS = ['number', 'keyword', 'mobile', 'fromdate', 'todate', 'limit', 'page'] as const;
const SERVICE_PAGE_SIZE = 50; // the inbox's default page size (docs/service.md §3.2)
const PROCESS = randomBytes(8).toString('hex');

export = function register(RED: RED) {
  registerAction(RED, 'kaleyra-inbox', {
    settings: INBOX_FILTERS,
    run: ({ client, settings: s, msg, call }) => {
      const given = payloadObject(msg);
      const query: Record<string, unknown> = {};
      for (const name of INBOX_FILTERS) query[name] = orMsg(s[name], given[name]);
      return client.readInbox(query as InboxQuery, call); // from a msg: core checks it
    },
    summary: (records) => `${records.length} record${records.length === 1 ? '' : 's'}`,
    setup: startPolling,
  });
};

function startPolling({ node, account, config, evaluate }: SetupApi): void {
  const seconds = Number(config.pollInterval);
  if (!account || !Number.isFinite(seconds) || seconds <= 0) return;
  const interval = Math.min(POLL_LIMITS.intervalMax, Math.max(1, seconds)) * 1000;
  // A replica that stops holding the lease is replaced within max(2 intervals, 5 s): the lease lasts a
  // second less than that, and the others try for it every second.
  const leaseMs = Math.max(2 * interval, 5_000) - 1_000;
  // The same owner for this node after a redeploy in this process: it takes its lease back at once.
  const owner = `${PROCESS}:${node.id}`;
  const store = account.pollState(node.id);
  const context = node.context();
  const stats = account.monitor?.()?.poll(node.id, node.name ?? '');
  const abort = new AbortController();
  let filters: Record<string, unknown> = {};
  const poller = new InboxPoller(
    async (page, since) => (await (await account.client()).readInbox({ ...filters, page, fromdate: filters.fromdate ?? since } as InboxQuery, abort.signal)).payload,
    store,
    {
      load: () => new Promise((resolve, reject) => context.get('poll', (err, v) => (err ? reject(err) : resolve(v as PollSnapshot | undefined)))),
      save: (snapshot) => new Promise((resolve, reject) => context.set('poll', snapshot, (err) => (err ? reject(err) : resolve()))),
    },
  );

  let running: Promise<void> | undefined;
  let nextPoll = 0;
  let standby = false;
  /** Until when a standby leaves a lease the store lost to the replica that held it. */
  let leaveLostLease = 0;
  let paused = false;
  const tick = () => {
    if (running || Date.now() < nextPoll) return; // the previous poll is still reading, or not due
    running = (async () => {
      // A standby's snapshot lags the shared cursor by up to a tick: when the store has lost its contents
      // (a lease with them), the replica that held the lease knows best what was handed on and re-seeds
      // the store. A standby leaves it the lease for as long as the lease would have lasted, and as long as
      // that replica's client may take to reconnect after this one did, then takes over as it would from a
      // replica that died.
      if (standby && (await poller.storeLost())) {
        leaveLostLease ||= Date.now() + leaseMs + RECONNECT.maxPauseMs + RECONNECT.jitterMs;
        if (Date.now() < leaveLostLease) return;
      }
      leaveLostLease = 0;
      if (!(await store.lease('lease', owner, leaseMs))) {
        if (!standby) node.status(status.standby());
        standby = true;
        stats?.set('standby');
        await poller.observe(); // how far the polling replica has got, should this one take over
        return;
      }
      standby = false;
      nextPoll = Date.now() + interval;
      filters = await evaluate({});
      const emit = (records: object[]) => records.forEach((payload) => node.send({ payload, topic: 'kaleyra/inbox' }));
      const count = await poller.poll(emit, Number(filters.limit) || SERVICE_PAGE_SIZE);
      if (paused) node.log('the state store works again: polling resumed');
      paused = false;
      stats?.set('polling', count);
      node.status(status.polled(count));
    })()
      .catch((err: Error & { code?: string }) => {
        if (abort.signal.aborted) return;
        if (err instanceof KaleyraError) {
          stats?.set('failed');
          node.status(status.failed(err));
          node.error(err, { payload: undefined, topic: 'kaleyra/inbox' });
          return;
        }
        // The state store failed: pause rather than risk sending a record twice; the next tick tries again.
        if (!paused) node.warn(`polling paused: the state store failed (${escapeControl(err.message)}); it resumes by itself`);
        paused = true;
        stats?.set('paused');
        nextPoll = 0;
        node.status(status.pollingPaused());
      })
      .finally(() => (running = undefined));
  };
  const timer = setInterval(tick, Math.min(interval, 1_000));
  setImmediate(tick);
  node.on('close', (_removed, done) => {
    clearInterval(timer);
    abort.abort();
    void (running ?? Promise.resolve()).then(done);
  });
}
