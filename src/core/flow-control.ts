// Flow control shared by every node of one account: at most `concurrency` requests in flight, at most
// `rate` starts per second, and a bounded queue in front. A request that finds the queue full fails at
// once with QUEUE_FULL (never dropped silently); one whose signal aborts while queued fails with CLOSED.
import { Codes, TransportError } from './errors';

export interface FlowControlOptions {
  /** Requests in flight at once. */
  concurrency?: number;
  /** Request starts per second; 0 = unlimited. */
  rate?: number;
  /** Requests waiting for a slot. */
  queueSize?: number;
  /**
   * The rate limit kept elsewhere for several processes together (Redis): a request that has its slot asks
   * it for a start. When it fails (unreachable), this process spaces its starts by `rate` alone.
   */
  limiter?: SharedLimiter;
}

/** A rate limit shared by several processes: reserve() admits a start (0) or says how long to wait (ms). */
export interface SharedLimiter {
  reserve(): Promise<number>;
}

interface Waiter {
  start: () => void;
  fail: (err: Error) => void;
  signal?: AbortSignal;
}

export class FlowControl {
  readonly concurrency: number;
  readonly rate: number;
  readonly queueSize: number;
  private active = 0;
  private queue: Waiter[] = [];
  private nextStart = 0;
  private timer?: NodeJS.Timeout;
  private readonly listeners = new Set<() => void>();
  private readonly limiter?: SharedLimiter;
  /** Requests holding a slot while the shared limiter makes them wait. */
  private waitingForRate = 0;
  /** Signals listened to: once each, as one signal (a node's) may stand for thousands of queued requests. */
  private readonly watched = new WeakSet<AbortSignal>();

  constructor(opts: FlowControlOptions = {}) {
    this.concurrency = Math.max(1, Math.floor(opts.concurrency ?? 8));
    this.rate = Math.max(0, opts.rate ?? 0);
    this.queueSize = Math.max(0, Math.floor(opts.queueSize ?? 1000));
    if (this.rate > 0) this.limiter = opts.limiter;
  }

  /** Whether requests wait for the rate limit rather than for a free slot. */
  get rateLimited(): boolean {
    return this.waitingForRate > 0 || (this.rate > 0 && this.queue.length > 0 && this.active < this.concurrency);
  }

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Called whenever the in-flight or queued counts change. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    for (const fn of this.listeners) fn();
  }

  /** Runs `fn` when a slot is free and the rate allows. */
  run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    // A free slot starts `fn` at once, without waiting a turn for an already resolved promise.
    if (!signal?.aborted && this.queue.length === 0 && this.canStart()) {
      this.take();
      return this.exec(fn, signal);
    }
    return this.acquire(signal).then(() => this.exec(fn, signal));
  }

  private async exec<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    try {
      if (this.limiter) await this.admit(this.limiter, signal);
      return await fn();
    } finally {
      this.active--;
      this.changed();
      this.pump();
    }
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(closed());
    if (this.queue.length >= this.queueSize) {
      return Promise.reject(
        new TransportError(Codes.QUEUE_FULL, `too many requests waiting for this account (${this.queueSize} queued, ${this.active} in flight); the message was not sent`, { notSent: true }),
      );
    }
    return new Promise<void>((resolve, reject) => {
      if (signal && !this.watched.has(signal)) {
        this.watched.add(signal);
        signal.addEventListener('abort', () => this.cancel(signal), { once: true });
      }
      this.queue.push({ start: resolve, fail: reject, signal });
      this.changed();
      this.pump();
    });
  }

  /** Fails the queued requests of an aborted signal. */
  private cancel(signal: AbortSignal): void {
    const gone = this.queue.filter((w) => w.signal === signal);
    if (gone.length === 0) return;
    this.queue = this.queue.filter((w) => w.signal !== signal);
    this.changed();
    for (const w of gone) w.fail(closed());
  }

  /** Waits, holding its slot, until the shared limiter admits a start; spaces starts locally if it fails. */
  private async admit(limiter: SharedLimiter, signal?: AbortSignal): Promise<void> {
    for (;;) {
      let wait: number;
      let local = false;
      try {
        wait = await limiter.reserve();
      } catch {
        // This process's own share of the starts: the slot reserved here is taken after the wait.
        const at = Math.max(Date.now(), this.nextStart);
        this.nextStart = at + 1000 / this.rate;
        wait = at - Date.now();
        local = true;
      }
      if (wait <= 0) return;
      if (signal?.aborted) throw closed();
      this.waitingForRate++;
      this.changed();
      try {
        await new Promise((resolve) => setTimeout(resolve, local ? wait : Math.min(wait, 1000)));
      } finally {
        this.waitingForRate--;
        this.changed();
      }
      if (local) return;
    }
  }

  private canStart(): boolean {
    // With a shared limiter the rate is waited for after a slot is taken (admit).
    return this.active < this.concurrency && (this.rate === 0 || !!this.limiter || Date.now() >= this.nextStart);
  }

  private take(): void {
    this.active++;
    if (this.rate > 0 && !this.limiter) this.nextStart = Math.max(Date.now(), this.nextStart) + 1000 / this.rate;
    this.changed();
  }

  private pump(): void {
    while (this.queue.length > 0 && this.canStart()) {
      this.take();
      this.queue.shift()!.start();
    }
    if (this.queue.length > 0 && this.active < this.concurrency && !this.timer) {
      // Waiting for the rate limit, not for a slot: wake up when the next start is allowed.
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, Math.max(1, this.nextStart - Date.now()));
    }
  }

  /** Fails everything still queued (on close). */
  drain(err: Error): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const w of this.queue.splice(0)) w.fail(err);
    this.changed();
  }
}

function closed(): TransportError {
  return new TransportError(Codes.CLOSED, 'cancelled while waiting to be sent; the message was not sent', { notSent: true });
}
