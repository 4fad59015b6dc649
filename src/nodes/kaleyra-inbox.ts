// kaleyra-inbox: reads the VMN inbox (interface B); filters from the node, else from msg.payload.
// With a poll interval it also reads the inbox by itself and sends each record not sent before.
import { InboxPoller, type PollState } from '../core/inbox-poll';
import { nodeStore, type NodeContext } from './context-store';
import { orMsg, payloadObject, registerAction, type SetupApi } from './action';
import type { Node, RED } from './red';

const INBOX_FILTERS = ['number', 'keyword', 'mobile', 'fromdate', 'todate', 'limit', 'page'] as const;
const SERVICE_PAGE_SIZE = 50; // spec 8: the inbox's default page size

export = function register(RED: RED) {
  registerAction(RED, 'kaleyra-inbox', {
    settings: INBOX_FILTERS,
    run: ({ client, settings: s, msg, signal }) => {
      const given = payloadObject(msg);
      const query: Record<string, unknown> = {};
      for (const name of INBOX_FILTERS) query[name] = orMsg(s[name], given[name]);
      return client.readInbox(query, signal);
    },
    summary: (records) => `${records.length} record${records.length === 1 ? '' : 's'}`,
    setup: startPolling,
  });
};

function startPolling({ node, account, config, evaluate }: SetupApi): void {
  const seconds = Number(config.pollInterval);
  if (!account || !Number.isFinite(seconds) || seconds <= 0) return;
  const store = nodeStore(node as Node & { context(): NodeContext });
  const abort = new AbortController();
  let filters: Record<string, unknown> = {};
  const poller = new InboxPoller(
    async (page, since) => {
      const client = await account.getClient();
      const query = { ...filters, page, fromdate: filters.fromdate ?? since };
      return (await client.readInbox(query, abort.signal)).payload;
    },
    { load: () => store.get('poll') as Promise<PollState | undefined>, save: (state) => store.set('poll', state) },
  );

  let running: Promise<void> | undefined;
  const tick = () => {
    if (running) return; // the previous poll is still reading
    running = (async () => {
      filters = await evaluate({});
      const emit = (records: object[]) => records.forEach((payload) => node.send({ payload, topic: 'kaleyra/inbox' }));
      const count = await poller.poll(emit, Number(filters.limit) || SERVICE_PAGE_SIZE);
      node.status({ fill: 'green', shape: 'dot', text: `polled: ${count} new` });
    })()
      .catch((err: Error & { code?: string }) => {
        if (abort.signal.aborted) return;
        node.status({ fill: 'red', shape: 'ring', text: err.code ?? 'error' });
        node.error(err, { payload: undefined, topic: 'kaleyra/inbox' });
      })
      .finally(() => (running = undefined));
  };
  const timer = setInterval(tick, Math.max(1, seconds) * 1000);
  setImmediate(tick);
  node.on('close', (_removed, done) => {
    clearInterval(timer);
    abort.abort();
    void (running ?? Promise.resolve()).then(done);
  });
}
