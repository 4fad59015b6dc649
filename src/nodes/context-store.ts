// Node-RED context as the correlation and dedupe store, so state survives a restart whenever the user
// has configured a persistent context store.
import type { Store } from '../core/correlation';

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
