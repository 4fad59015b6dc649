import { Agent, request } from 'undici';
import type { CallbackAttempt } from './types';

const CALLBACK_TIMEOUT_MS = 10_000;

/**
 * Sends the simulator's callbacks (GET, docs/service.md §6.4) and owns their timers and sockets, so
 * stop() can cancel everything still pending. Failures are recorded, never retried: none is documented.
 */
export class CallbackSender {
  private readonly agent = new Agent({ keepAliveTimeout: 1_000, headersTimeout: CALLBACK_TIMEOUT_MS, bodyTimeout: CALLBACK_TIMEOUT_MS });
  private readonly timers = new Set<NodeJS.Timeout>();
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];
  private closed = false;

  constructor(private readonly onAttempt: (attempt: CallbackAttempt) => void) {}

  /** Runs `fn` after `ms` unless the simulator stops first. */
  after(ms: number, fn: () => void): void {
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
      this.settle();
    }, ms);
    this.timers.add(timer);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.after(ms, resolve));
  }

  async get(kind: CallbackAttempt['kind'], url: string): Promise<CallbackAttempt> {
    const attempt: CallbackAttempt = { kind, url, at: Date.now() };
    if (this.closed) return attempt;
    this.inFlight++;
    try {
      const res = await request(url, { method: 'GET', dispatcher: this.agent });
      await res.body.dump();
      attempt.statusCode = res.statusCode;
    } catch (err) {
      attempt.error = err instanceof Error ? err.message : String(err);
    }
    this.inFlight--;
    if (!this.closed) this.onAttempt(attempt);
    this.settle();
    return attempt;
  }

  /**
   * Resolves once nothing is scheduled or in flight: the callbacks made so far are all there will be,
   * until the next request. Lets a test prove that nothing more comes without sleeping.
   */
  idle(): Promise<void> {
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.settle();
    });
  }

  /** Wakes idle() waiters once idle, after the callers' own continuations (a delivery's next step) ran. */
  private settle(): void {
    if (this.idleWaiters.length === 0) return;
    setImmediate(() => {
      if (this.timers.size > 0 || this.inFlight > 0 || this.idleWaiters.length === 0) return;
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.settle();
    await this.agent.destroy();
  }
}
