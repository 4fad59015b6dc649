// Correlation of callbacks with what was sent (see docs/adr/0001-correlation.md).
// The messaging callback carries only status, mobile and timestamp, so every callback URL we build
// carries a `ref` of ours; under that ref the store keeps what was sent (the service's ids per
// recipient, the sender's own reference) and the furthest delivery state reached per recipient.
import { randomBytes } from 'node:crypto';

/** A key-value store; the node passes Node-RED context, so it lasts as long as the context store does. */
export interface Store {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown): Promise<void>;
  keys(): Promise<string[]>;
}

export interface SentRecord {
  kind: 'message' | 'call';
  /** The sender's own reference (msg.ref), if it gave one. */
  userRef?: unknown;
  /** Message ids by recipient (messages), or the call id (calls, once the service answered). */
  ids: Record<string, string>;
  /** Furthest delivery state per recipient. */
  states: Record<string, string>;
  custom?: string;
  /** Expiry, epoch ms. */
  exp: number;
}

/** Order of delivery states; a state never goes back to an earlier one. Others sit between SENT and DELIVERED. */
const RANK: Record<string, number> = { SENT: 1, DELIVERED: 3, READ: 4 };
const rank = (status: string) => RANK[status] ?? 2;

const PREFIX = 'kaleyra_ref_';

export function newRef(): string {
  return randomBytes(9).toString('base64url').replace(/[-_]/g, 'x');
}

/** The last 10 digits identify a recipient whatever prefix (+, 00, country code) either side wrote. */
export function mobileKey(mobile: string): string {
  const digits = mobile.replace(/\D/g, '');
  return digits.length > 10 ? digits.slice(-10) : digits;
}

export interface DeliveryCorrelation {
  /** The service's message id for this recipient, when known. */
  id?: string;
  userRef?: unknown;
  /** The furthest state now reached (this status, unless it arrived late). */
  state: string;
  /** True when this status is behind the state already reached (it arrived out of order). */
  late: boolean;
  /** False when the ref is unknown (expired, or not sent by us). */
  known: boolean;
}

export class Correlator {
  private readonly chains = new Map<string, Promise<unknown>>();
  /** Sends tracked whose answer has not come yet, by ref: a callback for one waits for it. */
  private readonly unanswered = new Map<string, { answered: Promise<void>; settle: () => void; since: number }>();
  private writes = 0;

  /**
   * `answerWaitMs` bounds how long a callback that overtook its send's answer waits for the ids (a send
   * always ends, answered or failed, well within the account's timeout; this is only a backstop).
   */
  constructor(
    private readonly store: Store,
    private readonly ttlMs = 7 * 24 * 3600 * 1000,
    private readonly answerWaitMs = 120_000,
  ) {}

  /** Runs `fn` after any earlier update of the same ref, so concurrent callbacks never lose a state. */
  private serial<T>(ref: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.chains.get(ref) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.chains.set(ref, tail);
    void tail.then(() => {
      if (this.chains.get(ref) === tail) this.chains.delete(ref);
    });
    return next;
  }

  private async load(ref: string): Promise<SentRecord | undefined> {
    const rec = (await this.store.get(PREFIX + ref)) as SentRecord | undefined;
    return rec && rec.exp > Date.now() ? rec : undefined;
  }

  /** Records a send before it goes out, so even a very early callback finds it. */
  track(ref: string, kind: SentRecord['kind'], userRef?: unknown, custom?: string): Promise<void> {
    let settle!: () => void;
    const answered = new Promise<void>((resolve) => (settle = resolve));
    this.unanswered.set(ref, { answered, settle, since: Date.now() });
    return this.serial(ref, async () => {
      const rec: SentRecord = { kind, ids: {}, states: {}, exp: Date.now() + this.ttlMs };
      if (userRef !== undefined) rec.userRef = userRef;
      if (custom) rec.custom = custom;
      await this.store.set(PREFIX + ref, rec);
      if (++this.writes % 200 === 0) await this.prune();
    });
  }

  /** Adds the ids the service answered with (per recipient for messages; under "call" for calls). */
  identified(ref: string, ids: Record<string, string>): Promise<void> {
    return this.answer(ref, async () => {
      const rec = await this.load(ref);
      if (!rec) return;
      for (const [who, id] of Object.entries(ids)) rec.ids[rec.kind === 'call' ? who : mobileKey(who)] = id;
      await this.store.set(PREFIX + ref, rec);
    });
  }

  /** Forgets a send that failed, so its ref no longer matches anything. */
  forget(ref: string): Promise<void> {
    return this.answer(ref, () => this.store.set(PREFIX + ref, undefined));
  }

  /** Records a send's outcome, then lets the callbacks that waited for it go on (in their order). */
  private answer(ref: string, fn: () => Promise<void>): Promise<void> {
    return this.serial(ref, fn).finally(() => this.settle(ref));
  }

  private settle(ref: string): void {
    this.unanswered.get(ref)?.settle();
    this.unanswered.delete(ref);
  }

  /**
   * A callback can overtake the HTTP answer of its own send (the ids come with the answer): it waits for
   * the answer, at most answerWaitMs, so that it names the message or call it belongs to.
   */
  private async answered(ref: string): Promise<void> {
    const pending = this.unanswered.get(ref);
    if (!pending) return;
    let timer: NodeJS.Timeout | undefined;
    const overdue = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, this.answerWaitMs, true)));
    const timedOut = await Promise.race([pending.answered.then(() => false), overdue]);
    clearTimeout(timer);
    if (timedOut) this.settle(ref); // later callbacks of this send need not wait for it again
  }

  /** Applies one delivery status for one recipient; the state only moves forward. */
  async delivery(ref: string, mobile: string, status: string): Promise<DeliveryCorrelation> {
    await this.answered(ref);
    return this.serial(ref, async () => {
      const rec = await this.load(ref);
      if (!rec) return { state: status, late: false, known: false };
      const who = mobileKey(mobile);
      const current = rec.states[who];
      const late = current !== undefined && rank(status) < rank(current);
      const state = late ? current! : status;
      if (state !== current) {
        rec.states[who] = state;
        await this.store.set(PREFIX + ref, rec);
      }
      return { id: rec.ids[who], userRef: rec.userRef, state, late, known: true };
    });
  }

  /** What was recorded for a call's ref. */
  async call(ref: string): Promise<{ id?: string; userRef?: unknown; custom?: string; known: boolean }> {
    await this.answered(ref);
    const rec = await this.serial(ref, () => this.load(ref));
    return rec ? { id: rec.ids.call, userRef: rec.userRef, custom: rec.custom, known: true } : { known: false };
  }

  /** Removes expired records, and gives up on answers overdue by far (a send that never ended). */
  async prune(): Promise<void> {
    const now = Date.now();
    for (const [ref, pending] of this.unanswered) if (now - pending.since > this.answerWaitMs) this.settle(ref);
    for (const key of await this.store.keys()) {
      if (!key.startsWith(PREFIX)) continue;
      const rec = (await this.store.get(key)) as SentRecord | undefined;
      if (!rec || rec.exp <= now) await this.store.set(key, undefined);
    }
  }
}
