// Correlation of callbacks with what was sent (see docs/adr/0001-correlation.md).
// The messaging callback carries only status, mobile and timestamp, so every callback URL we build
// carries a `ref` of ours; under that ref the store keeps what was sent (the service's ids per
// recipient, the sender's own reference), and per recipient the furthest delivery state reached. The
// store may be shared by several Node-RED replicas: a callback can reach another replica than its send.
import { randomBytes } from 'node:crypto';
import type { StateStore } from './state-store';

export interface SentRecord {
  kind: 'message' | 'call';
  /** The sender's own reference (msg.ref), if it gave one. */
  userRef?: unknown;
  /** Message ids by recipient (messages), or the call id under "call" (calls), once the service answered. */
  ids: Record<string, string>;
  custom?: string;
  /** Epoch ms when the send started while its answer has not come yet. */
  pending?: number;
  /** Epoch ms when the service accepted the send (its ids came). */
  sentAt?: number;
  /** A message whose callback node has the delivery watchdog on (core/watchdog.ts): its recipients have deadlines. */
  watch?: Watched;
}

/** What a watched message's record keeps for its OVERDUE events. */
export interface Watched {
  /** The callback node whose schedule holds the deadlines. */
  listener: string;
  /** The node's setting, in minutes: the deadline is sentAt + after. */
  after: number;
  /** The recipients' numbers as sent, by their key (mobileKey). */
  to: Record<string, string>;
}

/** A callback node's watchdog setting, as a send that reports to it passes it on. */
export interface WatchSetting {
  listener: string;
  /** Minutes, as set. */
  after: number;
  /** The same in ms (a minute is shorter only in tests). */
  afterMs: number;
}

/** The delivery watchdog (core/watchdog.ts), as the correlation tells it of a watched message. */
export interface DeliveryWatch {
  /** The message was accepted (rec has its ids and sentAt): set its recipients' deadlines, afterMs later. */
  schedule(ref: string, rec: SentRecord, afterMs: number): Promise<void>;
  /** DELIVERED or READ came for a recipient: clears its deadline; true when its OVERDUE was already emitted. */
  reached(ref: string, who: string, rec: SentRecord): Promise<boolean>;
}

/** Order of delivery states; a state never goes back to an earlier one. Others sit between SENT and DELIVERED. */
const RANK: Record<string, number> = { SENT: 1, DELIVERED: 3, READ: 4 };
const rank = (status: string) => RANK[status] ?? 2;

export const CORRELATION_DEFAULTS = {
  /** How long a send's record is kept: delivery and read receipts can come days later. */
  ttlMs: 7 * 24 * 3600 * 1000,
  /** How long a callback that overtook its send's answer waits for it (a backstop: sends end far sooner). */
  answerWaitMs: 120_000,
};

// Refs are drawn from a pool of random bytes, refilled every 100 refs: one randomBytes() call per send
// was a visible share of a send's CPU.
let pool = Buffer.alloc(0);
let used = 0;

export function newRef(): string {
  if (used + 9 > pool.length) {
    pool = randomBytes(900);
    used = 0;
  }
  const bytes = pool.subarray(used, (used += 9));
  return bytes.toString('base64url').replace(/[-_]/g, 'x');
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
  /**
   * True when this status is behind the state already reached (it arrived out of order), or when it is the
   * DELIVERED or READ that first came after the recipient's OVERDUE event (core/watchdog.ts).
   */
  late: boolean;
  /** False when the ref is unknown (expired, or not sent by us). */
  known: boolean;
  /** Epoch ms when the service accepted the send, when known. */
  sentAt?: number;
}

export const recordKey = (ref: string) => `r:${ref}`;
const stateKey = (ref: string, who: string) => `s:${ref}:${who}`;

export class Correlator {
  private readonly chains = new Map<string, Promise<unknown>>();
  /** Sends of this process whose answer has not come yet, by ref: a callback for one waits for it. */
  private readonly unanswered = new Map<string, { answered: Promise<void>; settle: () => void; rec: SentRecord }>();
  private readonly ttlMs: number;
  private readonly answerWaitMs: number;

  constructor(
    private readonly store: StateStore,
    options: Partial<typeof CORRELATION_DEFAULTS> = {},
    private readonly watchdog?: DeliveryWatch,
  ) {
    this.ttlMs = options.ttlMs ?? CORRELATION_DEFAULTS.ttlMs;
    this.answerWaitMs = options.answerWaitMs ?? CORRELATION_DEFAULTS.answerWaitMs;
  }

  /** Runs `fn` after any earlier call for the same ref in this process, so events come out in arrival order. */
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

  private load(ref: string): Promise<SentRecord | undefined> {
    return this.store.get(recordKey(ref)) as Promise<SentRecord | undefined>;
  }

  /**
   * The record of a ref a callback carries. On a shared store the sender writes it while its request goes
   * out: a callback that finds none looks again for a moment before it is taken as unknown.
   */
  private async find(ref: string): Promise<SentRecord | undefined> {
    let rec = await this.load(ref);
    if (rec || !this.store.shared || this.unanswered.has(ref)) return rec;
    for (const pause of [20, 60, 200, 500]) {
      await new Promise((resolve) => setTimeout(resolve, pause));
      if ((rec = await this.load(ref))) break;
    }
    return rec;
  }

  /** Records a send before it goes out, so even a very early callback finds it. */
  track(ref: string, kind: SentRecord['kind'], userRef?: unknown, custom?: string): Promise<void> {
    let settle!: () => void;
    const answered = new Promise<void>((resolve) => (settle = resolve));
    const rec: SentRecord = { kind, ids: {}, pending: Date.now() };
    if (userRef !== undefined) rec.userRef = userRef;
    if (custom) rec.custom = custom;
    this.unanswered.set(ref, { answered, settle, rec });
    return this.store.put(recordKey(ref), rec, this.ttlMs).catch((err: unknown) => {
      this.settle(ref);
      throw err;
    });
  }

  /**
   * Adds the ids the service answered with (per recipient for messages; under "call" for calls). A message
   * `watch`ed by its callback node gets its deadlines first: a callback that finds the ids finds them too.
   */
  identified(ref: string, ids: Record<string, string>, watch?: WatchSetting): Promise<void> {
    return this.answer(ref, async () => {
      // The record this process wrote when the send started: no need to read it back (one round trip less).
      const rec = this.unanswered.get(ref)?.rec ?? (await this.load(ref));
      if (!rec) return;
      for (const [who, id] of Object.entries(ids)) rec.ids[rec.kind === 'call' ? who : mobileKey(who)] = id;
      delete rec.pending;
      rec.sentAt = Date.now();
      let unscheduled: unknown;
      if (watch && this.watchdog && rec.kind === 'message') {
        rec.watch = { listener: watch.listener, after: watch.after, to: Object.fromEntries(Object.keys(ids).map((who) => [mobileKey(who), who])) };
        // The ids are recorded even when the deadlines cannot be (the send is then not watched).
        await this.watchdog.schedule(ref, rec, watch.afterMs).catch((err: unknown) => {
          unscheduled = err;
          delete rec.watch;
        });
      }
      await this.store.put(recordKey(ref), rec, this.ttlMs);
      if (unscheduled !== undefined) throw unscheduled;
    });
  }

  /** Forgets a send that failed, so its ref no longer matches anything. */
  forget(ref: string): Promise<void> {
    return this.answer(ref, () => this.store.delete(recordKey(ref)));
  }

  /** Records a send's outcome, then lets the callbacks that waited for it go on (in their order). */
  private answer(ref: string, fn: () => Promise<void>): Promise<void> {
    return fn().finally(() => this.settle(ref));
  }

  private settle(ref: string): void {
    this.unanswered.get(ref)?.settle();
    this.unanswered.delete(ref);
  }

  /**
   * A callback can overtake the HTTP answer of its own send (the ids come with the answer): it waits for
   * the answer, at most answerWaitMs since the send started, so that it names what it belongs to. A send
   * of this process is awaited; one of another replica is looked up again with a growing pause.
   */
  private async answered(ref: string, rec: SentRecord | undefined): Promise<SentRecord | undefined> {
    const local = this.unanswered.get(ref);
    const deadline = (rec?.pending ?? Date.now()) + this.answerWaitMs;
    if (local) {
      let timer: NodeJS.Timeout | undefined;
      const overdue = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))));
      await Promise.race([local.answered, overdue]);
      clearTimeout(timer);
      return this.load(ref);
    }
    for (let pause = 25; rec?.pending !== undefined && Date.now() < deadline; pause = Math.min(pause * 2, 1000)) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, deadline - Date.now())));
      rec = await this.load(ref);
    }
    return rec;
  }

  /** Applies one delivery status for one recipient; the state only moves forward. */
  delivery(ref: string, mobile: string, status: string): Promise<DeliveryCorrelation> {
    return this.serial(ref, async () => {
      const rec = await this.answered(ref, await this.find(ref));
      if (!rec) return { state: status, late: false, known: false };
      const who = mobileKey(mobile);
      const kept = await this.store.advance(stateKey(ref, who), rank(status), status, this.ttlMs);
      const behind = kept.rank > rank(status);
      // A DELIVERED or READ of a watched message clears its deadline, and is late when that had passed.
      const overdue = rank(status) >= rank('DELIVERED') && rec.watch && this.watchdog ? await this.watchdog.reached(ref, who, rec) : false;
      return { id: rec.ids[who], userRef: rec.userRef, state: behind ? kept.value : status, late: behind || overdue, known: true, sentAt: rec.sentAt };
    });
  }

  /** What was recorded for a call's ref. */
  call(ref: string): Promise<{ id?: string; userRef?: unknown; custom?: string; known: boolean }> {
    return this.serial(ref, async () => {
      const rec = await this.answered(ref, await this.find(ref));
      return rec ? { id: rec.ids.call, userRef: rec.userRef, custom: rec.custom, known: true } : { known: false };
    });
  }
}
