// kaleyra-call-status: looks up outbound calls (interface C) by id, from the node or msg.payload, and
// with "watch until final" (or msg.watch) reads them again until they end, sending each status change.
// The id setting is `callId`: `id` is the node's own id in its config.
import type { CallStatusInput, CallStatusMethod } from '../core/call-status';
import { CallWatcher, DEFAULT_FINAL_STATUSES, WATCH_LIMITS, type WatchOptions } from '../core/call-watch';
import { orMsg, payloadObject, registerAction, type SetupApi } from './action';
import type { Node, NodeMessage, RED } from './red';

const TOPIC = 'kaleyra/call-status';

const within = (n: number, min: number, max: number) => Math.min(max, Math.max(min, n));

/** The node's watch settings: seconds between reads and minutes at most (within WATCH_LIMITS), the final statuses. */
function watchOptions(config: Record<string, unknown>): WatchOptions {
  const seconds = Number(config.watchInterval);
  const minutes = Number(config.watchMax);
  const finals = String(config.finalStatuses ?? '').split(/[\s,]+/).filter(Boolean);
  return {
    intervalMs: 1000 * within(Number.isFinite(seconds) && seconds > 0 ? seconds : WATCH_LIMITS.intervalDefault, WATCH_LIMITS.intervalMin, WATCH_LIMITS.intervalMax),
    maxMs: 60_000 * within(Number.isFinite(minutes) && minutes > 0 ? minutes : WATCH_LIMITS.maxDefault, WATCH_LIMITS.maxMin, WATCH_LIMITS.maxMax),
    finals: new Set(finals.length ? finals.map((f) => f.toUpperCase()) : DEFAULT_FINAL_STATUSES),
  };
}

export = function register(RED: RED) {
  // Each node's watcher, with its watch settings (read once, when the node starts).
  const watchers = new WeakMap<Node, { watcher: CallWatcher<NodeMessage>; options: WatchOptions }>();

  registerAction(RED, 'kaleyra-call-status', {
    settings: ['callId', 'mobile'],
    async run({ client, node, settings: s, msg, call, config }) {
      const given = payloadObject(msg);
      const bare = typeof msg.payload === 'string' || typeof msg.payload === 'number' ? msg.payload : given.id;
      const method = config.method ? String(config.method) : undefined;
      const mobile = orMsg(s.mobile, given.mobile);
      // From a msg: any type; core checks it (a bad one is an InputError naming the field).
      const result = await client.callStatus({ id: orMsg(s.callId, bare), mobile } as CallStatusInput, method as CallStatusMethod | undefined, call);
      const watching = typeof msg.watch === 'boolean' ? msg.watch : config.watch === true;
      const watch = watchers.get(node);
      if (watching && watch) {
        const { watcher, options } = watch;
        msg.topic = TOPIC;
        msg.final = result.payload.every((r) => options.finals.has(r.status));
        const context = RED.util.cloneMessage(msg);
        delete context.payload;
        delete context.kaleyra;
        watcher.add(result.payload, context, options, typeof mobile === 'string' || typeof mobile === 'number' ? String(mobile) : undefined);
      }
      return result;
    },
    summary: (records) => (records.length === 1 ? String(records[0]!.status) : `${records.length} records`),
    setup: ({ node, account, config }: SetupApi) => {
      if (!account) return;
      const stopping = new AbortController();
      const watcher = new CallWatcher<NodeMessage>(
        async (id, method, mobile) => (await (await account.client()).callStatus({ id, mobile }, method, { signal: stopping.signal })).payload,
        ({ context, record, final, timedOut }) => {
          const out: NodeMessage = { ...RED.util.cloneMessage(context), payload: [record], topic: TOPIC, final };
          if (timedOut) out.timedOut = true;
          node.send(out);
        },
        (context, err) => node.error(err, { ...RED.util.cloneMessage(context), topic: TOPIC }),
      );
      watchers.set(node, { watcher, options: watchOptions(config) });
      // A redeploy ends the watches at once: nothing left reading.
      node.on('close', (_removed, done) => {
        watcher.stop();
        stopping.abort();
        done();
      });
    },
  });
};
