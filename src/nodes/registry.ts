// What outlives one node instance, by node id, for the whole runtime: the deployed listeners (and the
// account each is bound to), the callback-in nodes without an account of their own, adopted by the
// account of the sends that report to them (flows made before callback-in had an account keep working),
// and the memory stores of each account, which outlive a redeploy (ADR 0001) but not the account's removal.
import type { CallEvent, DeliveryEvent } from '../core/callback-events';
import type { WatchSetting } from '../core/correlation';
import { MemoryStore } from '../core/state-store';
import type { OverdueEvent } from '../core/watchdog';
import type { Node } from './red';

/** Where a listener is reached: path and query of its URL below the public base (httpNodeRoot included). */
export type Endpoint = (extra?: Record<string, string>) => string;

/** What the registry needs of an account (src/nodes/account.ts). */
export interface RegisteredAccount {
  register(user: { node: Node; listener: { kind: 'callback' | 'vmn'; endpoint: Endpoint } }): void;
  deregister(node: Node): void;
  /** Without a ref the event stays as it is (the account counts it, uncorrelated). */
  correlate(node: Node, event: DeliveryEvent | CallEvent, ref: string | undefined): Promise<DeliveryEvent | CallEvent>;
  /** Emits the OVERDUE events of callback-in `node` whose deadlines passed. */
  overdue(node: Node, emit: (event: OverdueEvent) => void): Promise<void>;
}

/** Bounds of the memory store, per account (README, ADR 0003). */
export const MEMORY_LIMITS = {
  /**
   * A send's record and each recipient's delivery state are one entry each: about 50,000 one-recipient
   * sends, some 53 MB at the bound (bench/correlation-memory.js). More volume: the Redis store.
   */
  correlationEntries: 100_000,
  /** Records claimed by inbox polling (each kept 7 days). */
  pollEntries: 100_000,
};

const listeners = new Map<string, { endpoint: Endpoint; account?: RegisteredAccount }>();
const adopted = new Map<string, RegisteredAccount>();
/** The callback-in nodes with the delivery watchdog on, and its setting (which sends pass on). */
const watching = new Map<string, { node: Node; setting: WatchSetting }>();
const memory = new Map<string, { correlation: MemoryStore; poll: MemoryStore }>();

/** A deployed listener, with the account it is bound to (if any). */
export function listenerOf(id: string): { endpoint: Endpoint; account?: RegisteredAccount } | undefined {
  return listeners.get(id);
}

/** The delivery watchdog setting of callback-in `id`, when it has the watchdog on. */
export function watchOf(id: string): WatchSetting | undefined {
  return watching.get(id)?.setting;
}

/** A listener bound to `account` comes (or goes). */
export function bindToAccount(id: string, endpoint: Endpoint, account: RegisteredAccount): void {
  listeners.set(id, { endpoint, account });
}
export function unbindFromAccount(id: string, account: RegisteredAccount): void {
  if (listeners.get(id)?.account === account) listeners.delete(id);
}

/** The sends of `account` report to callback-in `id`: it adopts the node when that has no account of its own. */
export function adoptIfFree(id: string, account: RegisteredAccount): void {
  if (!listeners.get(id)?.account) adopted.set(id, account);
}

/** The account closes: the callback-in nodes it adopted are free again; removed, its memory stores go. */
export function releaseAccount(account: RegisteredAccount, accountId: string, removed: boolean): void {
  for (const [id, a] of adopted) if (a === account) adopted.delete(id);
  if (removed) memory.delete(accountId);
}

/** The account's memory stores, made at its first deploy and kept across redeploys. */
export function memoryStores(accountId: string): { correlation: MemoryStore; poll: MemoryStore } {
  let mem = memory.get(accountId);
  if (!mem) memory.set(accountId, (mem = { correlation: new MemoryStore({ maxEntries: MEMORY_LIMITS.correlationEntries }), poll: new MemoryStore({ maxEntries: MEMORY_LIMITS.pollEntries }) }));
  return mem;
}

/**
 * Makes a listener known until it closes: to its account when it has one (a vmn-in of a simulator-mode
 * account then receives the simulator's SMS), else only by its id, so that sends reporting to it find it;
 * with its delivery watchdog setting, when on.
 */
export function bindListener(node: Node, account: Pick<RegisteredAccount, 'register' | 'deregister'> | null, kind: 'callback' | 'vmn', endpoint: Endpoint, watch?: WatchSetting): void {
  if (watch) watching.set(node.id, { node, setting: watch });
  if (account) account.register({ node, listener: { kind, endpoint } });
  else listeners.set(node.id, { endpoint });
  node.on('close', (_removed, done) => {
    if (watching.get(node.id)?.node === node) watching.delete(node.id);
    if (account) account.deregister(node);
    else if (!listeners.get(node.id)?.account) listeners.delete(node.id);
    done();
  });
}

/**
 * Correlates an event received by callback-in `node` through its own account, or else the
 * account whose sends report to it. Without either, or without a ref, the event is left as it is
 * (an account still counts it, uncorrelated).
 */
export function correlate(node: Node, event: DeliveryEvent | CallEvent, ref: string | undefined): Promise<DeliveryEvent | CallEvent> {
  const account = listeners.get(node.id)?.account ?? adopted.get(node.id);
  return account ? account.correlate(node, event, ref) : Promise.resolve(event);
}

/** Emits callback-in `node`'s OVERDUE events, through the same account as its correlation. */
export function sweepOverdue(node: Node, emit: (event: OverdueEvent) => void): Promise<void> {
  const account = listeners.get(node.id)?.account ?? adopted.get(node.id);
  return account ? account.overdue(node, emit) : Promise.resolve();
}
