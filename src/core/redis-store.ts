// The state store on Redis (docs/adr/0004-shared-state.md): what an account remembers, shared by every
// Node-RED replica that runs the same flows. Each operation that must be atomic across replicas is one
// Redis command (claim = SET NX PX) or one Lua script (advance, lease, epoch, the rate limiter, the
// schedule of delivery deadlines), never a read-then-write. The client (node-redis's @redis/client, no
// dependencies of its own) is loaded only when an account chooses Redis; it reconnects by itself with
// backoff. While Redis cannot be reached, every operation fails at once (no offline queue): the callers
// decide (sends go on, polling pauses).
import { createHash, randomBytes } from 'node:crypto';
import type { RedisClientType } from '@redis/client';
import { ConfigError } from './errors';
import { redactText } from './redact';
import type { SharedLimiter } from './flow-control';
import { RECONNECT, type Settled, type StateStore } from './state-store';

export interface RedisStoreOptions {
  /** redis://host:port/db or rediss://... (TLS). */
  url: string;
  /** Overrides a password in the URL. */
  password?: string;
  /** Every key starts with it (one account's share of the Redis). */
  prefix: string;
  /** A command without an answer in this time fails (a Redis that hangs must not hold a send). */
  commandTimeoutMs?: number;
  /** Told when Redis becomes unreachable (with the reason) and when it is back. */
  onState?(up: boolean, reason?: string): void;
}

/** Checks a Redis URL when the account starts: a ConfigError naming `redisUrl`, never showing the password. */
export function checkRedisUrl(value: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // below
  }
  const shown = () => JSON.stringify(url ? `${url.protocol}//${url.host}${url.pathname}` : value.replace(/\/\/[^@/]*@/, '//***@').slice(0, 80));
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || !url.hostname) {
    throw new ConfigError('redisUrl', `must be a Redis URL such as redis://127.0.0.1:6379/0 (rediss:// for TLS), not ${shown()}`);
  }
  if (url.pathname && url.pathname !== '/' && !/^\/\d{1,2}$/.test(url.pathname)) {
    throw new ConfigError('redisUrl', `names a database by its number (/0 to /15), not ${shown()}`);
  }
  return url;
}

// KEYS[1]: the state; ARGV: rank, value, ttl ms. Keeps "rank:value" of the highest rank (equal replaces).
const ADVANCE = `
local cur = redis.call('GET', KEYS[1])
if cur then
  local sep = string.find(cur, ':', 1, true)
  if sep and tonumber(string.sub(cur, 1, sep - 1)) > tonumber(ARGV[1]) then return cur end
end
local kept = ARGV[1] .. ':' .. ARGV[2]
redis.call('SET', KEYS[1], kept, 'PX', ARGV[3])
return kept`;

// KEYS[1]: the lease; ARGV: owner, ttl ms. Taken when free, renewed by its owner.
const LEASE = `
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

// KEYS[1]: the epoch; ARGV: a new one. A Redis that lost its data has none: this call makes it anew.
const EPOCH = `
local e = redis.call('GET', KEYS[1])
if e then return e end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]`;

// KEYS[1]: a sorted set of the recent starts, by Redis's own clock (one clock for every replica); ARGV:
// the starts allowed per window, the window in ms, a unique member. 0 when this start is admitted, else
// the ms to wait before asking again.
const RATE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window + 1000)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)`;

// A schedule is a sorted set: member -> due time (epoch ms); a member taken when due is kept with score 0
// until it is settled, so that the one who settles it learns it had been taken.
// KEYS[1]: the schedule; ARGV: member, due time, ttl ms, max members. The taken (score 0), then the
// earliest due, are dropped beyond max.
const SCHEDULE = `
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
if over > 0 then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

// KEYS[1]: the schedule; ARGV: now, most members. Takes the due members (each once, whoever asks).
const TAKE_DUE = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '(0', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, m in ipairs(due) do redis.call('ZADD', KEYS[1], 0, m) end
return due`;

// KEYS[1]: the schedule; ARGV: member. 0: absent, 1: was waiting, 2: had been taken; removed either way.
const SETTLE = `
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
if tonumber(s) == 0 then return 2 end
return 1`;

const sha1 = (script: string) => createHash('sha1').update(script).digest('hex');

/** A TTL as Redis takes it: whole milliseconds, at least 1 (PX 0 is an error). */
const px = (ttlMs: number) => Math.max(1, Math.round(ttlMs));

/** How long the first connection may take before operations fail rather than wait for it. */
const FIRST_CONNECT_MS = 3_000;

export class RedisStore implements StateStore {
  readonly shared = true;
  private readonly client: RedisClientType;
  private readonly prefix: string;
  private readonly connected: Promise<void>;
  private up = false;
  private everUp = false;
  private closed = false;

  constructor(private readonly options: RedisStoreOptions) {
    const url = checkRedisUrl(options.url);
    this.prefix = options.prefix;
    const { createClient } = require('@redis/client') as typeof import('@redis/client');
    this.client = createClient({
      url: url.href,
      password: options.password || undefined,
      disableOfflineQueue: true,
      // No per-command timeout of the client's: it makes a timer signal per command, which cost a fifth
      // of the send rate (bench/send-redis.js). One watchdog below bounds every operation instead.
      commandOptions: { timeout: 0 },
      commandsQueueMaxLength: 10_000,
      socket: {
        connectTimeout: 3_000,
        // Back off to 5 s between attempts, with jitter so replicas do not reconnect in step.
        reconnectStrategy: (retries: number) => Math.min(RECONNECT.maxPauseMs, 100 * 2 ** Math.min(retries, 6)) + Math.floor(Math.random() * RECONNECT.jitterMs),
      },
    }) as unknown as RedisClientType;
    // An 'error' without a listener would end the process; the reason is told once per outage.
    this.client.on('error', (err: Error) => this.state(false, err));
    this.client.on('ready', () => this.state(true));
    this.connected = this.client.connect().then(
      () => undefined,
      () => undefined, // reconnectStrategy goes on trying; operations fail meanwhile
    );
  }

  /** Operations waiting for Redis, oldest first, and the one timer that fails those overdue. */
  private readonly waiting = new Set<{ at: number; fail: (err: Error) => void }>();
  private watchdog?: NodeJS.Timeout;

  /** `op`, failed when Redis has not answered within commandTimeoutMs (a Redis that hangs must not hold a send). */
  private timed<T>(op: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry = { at: Date.now(), fail: reject };
      this.waiting.add(entry);
      this.watchdog ??= setInterval(() => this.expire(), 250).unref();
      op.then(
        (v) => (this.waiting.delete(entry), resolve(v)),
        (e) => (this.waiting.delete(entry), reject(e)),
      );
    });
  }

  private expire(): void {
    const limit = Date.now() - (this.options.commandTimeoutMs ?? 2_000);
    for (const entry of this.waiting) {
      if (entry.at > limit) break;
      this.waiting.delete(entry);
      entry.fail(new Error('Redis did not answer in time'));
    }
    if (this.waiting.size === 0) {
      clearInterval(this.watchdog);
      this.watchdog = undefined;
    }
  }

  private state(up: boolean, err?: Error): void {
    if (up === this.up || this.closed) return;
    this.up = up;
    if (up) this.everUp = true;
    const reason = err ? redactText(String((err as NodeJS.ErrnoException).code ?? err.message), this.options.password) : undefined;
    this.options.onState?.(up, reason);
  }

  /** The client, once connected: at start an operation waits a little for the first connection. */
  private async ready(): Promise<RedisClientType> {
    if (this.client.isReady) return this.client;
    if (!this.everUp && !this.closed) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.connected, new Promise((r) => (timer = setTimeout(r, FIRST_CONNECT_MS)))]);
      clearTimeout(timer);
      if (this.client.isReady) return this.client;
    }
    throw new Error(this.closed ? 'the Redis state store is closed' : 'the Redis state store cannot be reached');
  }

  private key(key: string): string {
    return this.prefix + key;
  }

  private async script(script: string, keys: string[], args: string[]): Promise<unknown> {
    const c = this.client.isReady ? this.client : await this.ready();
    try {
      return await this.timed(c.evalSha(sha1(script), { keys, arguments: args }));
    } catch (err) {
      if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
      return this.timed(c.eval(script, { keys, arguments: args }));
    }
  }

  async get(key: string): Promise<unknown> {
    const text = await this.timed((this.client.isReady ? this.client : await this.ready()).get(this.key(key)));
    return text === null || text === undefined ? undefined : JSON.parse(String(text));
  }

  async put(key: string, value: unknown, ttlMs: number): Promise<void> {
    await this.timed((this.client.isReady ? this.client : await this.ready()).set(this.key(key), JSON.stringify(value), { PX: px(ttlMs) }));
  }

  async claim(key: string, ttlMs: number, value: unknown = 1): Promise<boolean> {
    const r = await this.timed((this.client.isReady ? this.client : await this.ready()).set(this.key(key), JSON.stringify(value), { NX: true, PX: px(ttlMs) }));
    return r === 'OK';
  }

  async claimAll(keys: readonly string[], ttlMs: number): Promise<boolean[]> {
    if (keys.length === 0) return [];
    const c = this.client.isReady ? this.client : await this.ready();
    // One round trip: commands of one tick are pipelined, and Redis runs them in order.
    const replies = await this.timed(Promise.all(keys.map((k) => c.set(this.key(k), '1', { NX: true, PX: px(ttlMs) }))));
    return replies.map((r) => r === 'OK');
  }

  async advance(key: string, rank: number, value: string, ttlMs: number): Promise<{ rank: number; value: string }> {
    const kept = String(await this.script(ADVANCE, [this.key(key)], [String(rank), value, String(px(ttlMs))]));
    const sep = kept.indexOf(':');
    return { rank: Number(kept.slice(0, sep)), value: kept.slice(sep + 1) };
  }

  async delete(key: string): Promise<void> {
    await this.timed((this.client.isReady ? this.client : await this.ready()).del(this.key(key)));
  }

  async lease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return Number(await this.script(LEASE, [this.key(key)], [owner, String(px(ttlMs))])) === 1;
  }

  async schedule(key: string, member: string, at: number, ttlMs: number, max: number): Promise<void> {
    await this.script(SCHEDULE, [this.key(key)], [member, String(Math.max(1, Math.round(at))), String(px(ttlMs)), String(Math.max(1, max))]);
  }

  async takeDue(key: string, now: number, limit: number): Promise<string[]> {
    return ((await this.script(TAKE_DUE, [this.key(key)], [String(Math.round(now)), String(limit)])) as unknown[]).map(String);
  }

  async settle(key: string, member: string): Promise<Settled> {
    return ([undefined, 'waiting', 'taken'] as const)[Number(await this.script(SETTLE, [this.key(key)], [member]))];
  }

  async epoch(): Promise<string> {
    return String(await this.script(EPOCH, [this.key('epoch')], [randomBytes(8).toString('hex')]));
  }

  /**
   * The account's rate limit, for all replicas together: at most `perSecond` starts in any second (a
   * fraction: ceil(perSecond) starts per window of ceil(perSecond) / perSecond seconds).
   */
  limiter(key: string, perSecond: number): SharedLimiter {
    const limit = Math.max(1, Math.ceil(perSecond));
    const window = String(Math.round((1000 * limit) / perSecond));
    return {
      reserve: async () => Number(await this.script(RATE, [this.key(key)], [String(limit), window, randomBytes(8).toString('hex')])),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.watchdog);
    try {
      if (this.client.isReady) await this.client.close();
      else this.client.destroy();
    } catch {
      this.client.destroy();
    }
  }
}
