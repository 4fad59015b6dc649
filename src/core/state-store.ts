// What an account remembers between messages (docs/adr/0003-account-hub.md): correlation records of
// sends and their delivery deadlines, the inbox poller's cursor and the records it already handed on. One
// small interface, so that the same code runs on this process's memory (the default) or on a store shared
// by several Node-RED replicas (Redis, docs/adr/0004-shared-state.md). Every operation that must be atomic
// across replicas is one call here (claim = SET NX; advance, lease and the schedule's operations = a
// server-side script), never a read-then-write.
import { randomBytes } from 'node:crypto';
import { DueSet, type Settled } from './due-set';

export type { Settled } from './due-set';

/**
 * How the shared store's client reconnects (src/core/redis-store.ts): pauses doubling up to maxPauseMs
 * between attempts, each with up to jitterMs added. Here, where code on any store may read it without
 * loading the Redis client (inbox polling waits for a replica that reconnects last).
 */
export const RECONNECT = { maxPauseMs: 5_000, jitterMs: 100 };

export interface StateStore {
  /** True when other Node-RED processes may use the same contents (Redis). */
  readonly shared: boolean;
  get(key: string): Promise<unknown>;
  /** Stores a JSON-able value for `ttlMs`. */
  put(key: string, value: unknown, ttlMs: number): Promise<void>;
  /** Stores `value` only if the key is absent; true when this call stored it (the caller owns it). */
  claim(key: string, ttlMs: number, value?: unknown): Promise<boolean>;
  /** claim() for several keys at once, in order (a key given twice is claimed once). */
  claimAll(keys: readonly string[], ttlMs: number): Promise<boolean[]>;
  /**
   * Keeps, under `key`, the value of the highest rank given so far (an equal rank replaces it) and returns
   * what is kept: a state that only ever moves forward, whatever order its updates arrive in.
   */
  advance(key: string, rank: number, value: string, ttlMs: number): Promise<{ rank: number; value: string }>;
  delete(key: string): Promise<void>;
  /** Takes or renews a lease on `key` for `owner`; false while another owner holds it. */
  lease(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /**
   * Schedules `member` in the schedule `key` to be due at `at` (epoch ms). The schedule keeps at most `max`
   * members (the taken ones dropped first, then the earliest due) and lives `ttlMs` after its last schedule.
   */
  schedule(key: string, member: string, at: number, ttlMs: number, max: number): Promise<void>;
  /**
   * Takes up to `limit` members of schedule `key` due by `now`, earliest first: each is taken by one caller
   * only, however many replicas ask at once. A taken member stays, as taken, until it is settled.
   */
  takeDue(key: string, now: number, limit: number): Promise<string[]>;
  /** Removes `member` from schedule `key`: 'waiting' when it was not due yet or not taken, 'taken' when it had been taken, undefined when absent. */
  settle(key: string, member: string): Promise<Settled>;
  /**
   * An id of the store's present contents: it changes when the store lost its data (a restart without
   * persistence), so that state derived from it can be re-seeded rather than trusted.
   */
  epoch(): Promise<string>;
  close(): Promise<void>;
}

export interface MemoryStoreOptions {
  /** Most entries kept; beyond it the oldest written are forgotten first. */
  maxEntries?: number;
}

interface Entry {
  value: unknown;
  /** Expiry, epoch ms. */
  exp: number;
}

/**
 * The store in this process's memory: bounded by each entry's TTL and by a count, the oldest written
 * forgotten first (a Map keeps insertion order, and a write moves its key to the end).
 */
export class MemoryStore implements StateStore {
  readonly shared = false;
  private readonly entries = new Map<string, Entry>();
  /** Schedules, apart from the entries: they have their own bound (schedule's max) and TTL. */
  private readonly schedules = new Map<string, { set: DueSet; exp: number }>();
  private readonly maxEntries: number;
  private readonly id = randomBytes(8).toString('hex');
  private writes = 0;

  constructor(options: MemoryStoreOptions = {}) {
    this.maxEntries = Math.max(1, options.maxEntries ?? 100_000);
  }

  get size(): number {
    return this.entries.size;
  }

  private live(key: string, now = Date.now()): Entry | undefined {
    const e = this.entries.get(key);
    if (e && e.exp <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  private write(key: string, value: unknown, ttlMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, exp: Date.now() + ttlMs });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    // Now and then, drop the expired entries at the old end (entries of one TTL expire in write order).
    if (++this.writes % 256 === 0) {
      const now = Date.now();
      for (const [k, e] of this.entries) {
        if (e.exp > now) break;
        this.entries.delete(k);
      }
    }
  }

  async get(key: string): Promise<unknown> {
    return this.live(key)?.value;
  }

  async put(key: string, value: unknown, ttlMs: number): Promise<void> {
    this.write(key, value, ttlMs);
  }

  async claim(key: string, ttlMs: number, value: unknown = 1): Promise<boolean> {
    if (this.live(key)) return false;
    this.write(key, value, ttlMs);
    return true;
  }

  async claimAll(keys: readonly string[], ttlMs: number): Promise<boolean[]> {
    const now = Date.now();
    return keys.map((key) => {
      if (this.live(key, now)) return false;
      this.write(key, 1, ttlMs);
      return true;
    });
  }

  async advance(key: string, rank: number, value: string, ttlMs: number): Promise<{ rank: number; value: string }> {
    const kept = this.live(key)?.value as { rank: number; value: string } | undefined;
    if (kept && kept.rank > rank) return kept;
    const next = { rank, value };
    this.write(key, next, ttlMs);
    return next;
  }

  async delete(key: string): Promise<void> {
    this.entries.delete(key);
  }

  async lease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    const held = this.live(key);
    if (held && held.value !== owner) return false;
    this.write(key, owner, ttlMs);
    return true;
  }

  private liveSchedule(key: string): DueSet | undefined {
    const s = this.schedules.get(key);
    if (s && s.exp <= Date.now()) {
      this.schedules.delete(key);
      return undefined;
    }
    return s?.set;
  }

  async schedule(key: string, member: string, at: number, ttlMs: number, max: number): Promise<void> {
    const set = this.liveSchedule(key) ?? new DueSet();
    this.schedules.set(key, { set, exp: Date.now() + ttlMs });
    set.add(member, at);
    set.trim(Math.max(1, max));
  }

  async takeDue(key: string, now: number, limit: number): Promise<string[]> {
    return this.liveSchedule(key)?.take(now, limit) ?? [];
  }

  async settle(key: string, member: string): Promise<Settled> {
    return this.liveSchedule(key)?.settle(member);
  }

  async epoch(): Promise<string> {
    return this.id;
  }

  async close(): Promise<void> {
    // Nothing to release: the entries live as long as whoever holds the store (ADR 0003).
  }
}

/** A view of a store whose keys all start with `prefix` (one account's share, or one poller's). */
export function prefixed(store: StateStore, prefix: string): StateStore {
  return {
    shared: store.shared,
    get: (key) => store.get(prefix + key),
    put: (key, value, ttlMs) => store.put(prefix + key, value, ttlMs),
    claim: (key, ttlMs, value) => store.claim(prefix + key, ttlMs, value),
    claimAll: (keys, ttlMs) => store.claimAll(keys.map((k) => prefix + k), ttlMs),
    advance: (key, rank, value, ttlMs) => store.advance(prefix + key, rank, value, ttlMs),
    delete: (key) => store.delete(prefix + key),
    lease: (key, owner, ttlMs) => store.lease(prefix + key, owner, ttlMs),
    schedule: (key, member, at, ttlMs, max) => store.schedule(prefix + key, member, at, ttlMs, max),
    takeDue: (key, now, limit) => store.takeDue(prefix + key, now, limit),
    settle: (key, member) => store.settle(prefix + key, member),
    epoch: () => store.epoch(),
    close: () => Promise.resolve(), // a view does not own the store
  };
}
