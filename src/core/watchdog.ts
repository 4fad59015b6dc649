// The delivery watchdog (issue 21): "not delivered within N minutes" for the messages that report to a
// callback node with the watchdog on. When the service accepts such a message, each recipient gets a
// deadline (sentAt + N) in the callback node's schedule in the account's state store; a DELIVERED or READ
// settles it; a sweep (about once a second, by each replica's callback node) takes the deadlines that
// passed and makes one OVERDUE event of each. Taking is atomic in the store (one Lua script on Redis), so
// with several replicas each deadline is taken, and its event emitted, by exactly one of them. Framework-free
// over any state store; the callback node (src/nodes/kaleyra-callback.ts) runs the sweep.
import { CORRELATION_DEFAULTS, recordKey, type DeliveryWatch, type SentRecord } from './correlation';
import type { StateStore } from './state-store';

/** The event of a recipient whose deadline passed without DELIVERED or READ. */
export interface OverdueEvent {
  event: 'delivery';
  state: 'OVERDUE';
  /** The service's message id for this recipient. */
  id?: string;
  /** The sender's msg.ref, as given. */
  ref?: unknown;
  /** The recipient's number as the service answered it (the whatsapp node's output `mobile`). */
  to: string;
  /** When the service accepted the send, ISO 8601. */
  sentAt: string;
  /** The minutes waited: the callback node's setting. */
  after: number;
}

export const WATCHDOG_DEFAULTS = {
  /** Most deadlines kept per callback node (the earliest dropped first): memory, like the records' bound. */
  maxDeadlines: 100_000,
  /** How long a schedule lives after its last deadline was set: as long as the records it points to. */
  ttlMs: CORRELATION_DEFAULTS.ttlMs,
  /** Deadlines taken per store call of a sweep. */
  batch: 100,
};

/** The settings accepted for `after` (minutes): a whole number up to the records' 7 days. */
export const MAX_AFTER_MINUTES = 10_080;

const scheduleKey = (listener: string) => `due:${listener}`;
const member = (ref: string, who: string) => `${ref}:${who}`;

export class DeliveryWatchdog implements DeliveryWatch {
  private readonly opts: typeof WATCHDOG_DEFAULTS;

  constructor(
    /** The correlation's store (the records' keys): the account's share, or a view of it. */
    private readonly store: StateStore,
    options: Partial<typeof WATCHDOG_DEFAULTS> = {},
  ) {
    this.opts = { ...WATCHDOG_DEFAULTS, ...options };
  }

  async schedule(ref: string, rec: SentRecord, afterMs: number): Promise<void> {
    if (!rec.watch || rec.sentAt === undefined) return;
    const key = scheduleKey(rec.watch.listener);
    for (const who of Object.keys(rec.watch.to)) await this.store.schedule(key, member(ref, who), rec.sentAt + afterMs, this.opts.ttlMs, this.opts.maxDeadlines);
  }

  async reached(ref: string, who: string, rec: SentRecord): Promise<boolean> {
    return !!rec.watch && (await this.store.settle(scheduleKey(rec.watch.listener), member(ref, who))) === 'taken';
  }

  /**
   * Takes the deadlines of callback node `listener` that passed by `now` and emits one OVERDUE event for
   * each (a deadline whose record is gone, expired or forgotten, emits nothing). Resolves to the number
   * emitted. A deadline is taken before its event is made: should this process die in between, that event
   * is lost rather than emitted twice.
   */
  async sweep(listener: string, emit: (event: OverdueEvent) => void, now = Date.now()): Promise<number> {
    let emitted = 0;
    for (;;) {
      const taken = await this.store.takeDue(scheduleKey(listener), now, this.opts.batch);
      for (const m of taken) {
        const sep = m.lastIndexOf(':');
        const ref = m.slice(0, sep);
        const who = m.slice(sep + 1);
        const rec = (await this.store.get(recordKey(ref))) as SentRecord | undefined;
        if (!rec?.watch || rec.sentAt === undefined) continue;
        emit({ event: 'delivery', state: 'OVERDUE', id: rec.ids[who], ref: rec.userRef, to: rec.watch.to[who] ?? who, sentAt: new Date(rec.sentAt).toISOString(), after: rec.watch.after });
        emitted++;
      }
      if (taken.length < this.opts.batch) return emitted;
    }
  }
}
