// Node-RED context as the correlation and dedupe store, so state survives a restart whenever the user
// has configured a persistent context store.
import type { Store } from '../core/correlation';
import type { Node } from './red';

export interface NodeContext {
  get(key: string, cb: (err: Error | null, value: unknown) => void): void;
  set(key: string, value: unknown, cb: (err: Error | null) => void): void;
  keys(cb: (err: Error | null, keys: string[]) => void): void;
}

export function contextStore(ctx: NodeContext): Store {
  const call = <T>(fn: (cb: (err: Error | null, v?: T) => void) => void) =>
    new Promise<T>((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v as T))));
  return {
    get: (key) => call((cb) => ctx.get(key, cb)),
    set: (key, value) => call<void>((cb) => ctx.set(key, value, cb)),
    keys: () => call<string[]>((cb) => ctx.keys(cb)),
  };
}

// Unless settings.js configures a context store, Node-RED deletes a node's context whenever the node
// stops (Node.close → context.delete), so a plain redeploy would forget every correlation record and
// the inbox poll state (and the inbox would emit every record again). The values are therefore also
// kept here per node id; a node started again under the same id gets back the keys its context lost.
// A node removed from the flows drops them.
const carried = new Map<string, Map<string, unknown>>();

/** The node's context as a Store, carried over a redeploy of the same node within this process. */
export function nodeStore(node: Node & { context(): NodeContext }): Store {
  const store = contextStore(node.context());
  const kept = carried.get(node.id) ?? new Map<string, unknown>();
  carried.set(node.id, kept);
  const restored = (async () => {
    for (const [key, value] of kept) if ((await store.get(key)) === undefined) await store.set(key, value);
  })();
  node.on('close', (removed, done) => {
    if (removed && carried.get(node.id) === kept) carried.delete(node.id);
    done();
  });
  return {
    get: (key) => restored.then(() => store.get(key)),
    set: (key, value) => {
      if (value === undefined) kept.delete(key);
      else kept.set(key, value);
      return restored.then(() => store.set(key, value));
    },
    keys: () => restored.then(() => store.keys()),
  };
}
