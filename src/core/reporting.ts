// "Report to" in the core (ADR 0001): a send's record made under its ref, completed with the service's
// ids once it was accepted (or forgotten when it failed), and a callback's event completed from the
// record. Framework-free over any state store; the account (src/nodes/account.ts) adds what Node-RED
// knows (the listener's URL, warnings on a node), test/reporting.test.js drives it alone.
import type { CallEvent, DeliveryEvent } from './callback-events';
import { Correlator, type WatchSetting } from './correlation';
import type { StateStore } from './state-store';
import { DeliveryWatchdog, type OverdueEvent } from './watchdog';

/** Told after each use of the store: `err` when it failed, and at which step. */
export type StoreUse = (err?: unknown, step?: string) => void;

/** Told what a callback's correlation found (for the account's monitor): known, late, when its send was accepted. */
export type Seen = (known: boolean, late: boolean, sentAt?: number) => void;

/** What a reported send does once its answer is known. */
export interface Reported {
  /** The service accepted: remember its ids (per recipient, or { call: id }). Never rejects: a failure goes to the StoreUse. */
  sent(ids: Record<string, string>): Promise<void>;
  /** The request failed: its ref matches nothing any more. */
  failed(): Promise<void>;
}

export class Reporter {
  private readonly correlator: Correlator;
  private readonly watchdog: DeliveryWatchdog;

  constructor(private readonly store: StateStore) {
    this.watchdog = new DeliveryWatchdog(store);
    this.correlator = new Correlator(store, {}, this.watchdog);
  }

  /**
   * Records a send under `ref` before its request goes out. The send goes on even when its record cannot
   * be written: correlation is lost, not the message. A store in this process has the record at once; a
   * shared one (Redis) is written while the request goes out, since no callback can come before the
   * service has it (and one that finds no record yet looks again for a moment: ADR 0004). A message whose
   * callback node has the delivery watchdog on (`watch`) gets its recipients' deadlines once accepted.
   */
  async track(ref: string, kind: 'message' | 'call', userRef: unknown, custom: string | undefined, used: StoreUse, watch?: WatchSetting): Promise<Reported> {
    const tracked = this.correlator.track(ref, kind, userRef, custom).then(
      () => true,
      (err: unknown) => (used(err, ' before a send'), false),
    );
    if (!this.store.shared) await tracked;
    return {
      sent: (ids) => tracked.then((ok) => (ok ? this.correlator.identified(ref, ids, kind === 'message' ? watch : undefined).then(() => used(), (err: unknown) => used(err, ' after the service accepted a send')) : undefined)),
      failed: () => tracked.then((ok) => (ok ? this.correlator.forget(ref).catch(() => undefined) : undefined)),
    };
  }

  /** Emits the OVERDUE events of callback node `listener` whose deadlines passed (core/watchdog.ts). Rejects when the store fails. */
  overdue(listener: string, emit: (event: OverdueEvent) => void, now?: number): Promise<number> {
    return this.watchdog.sweep(listener, emit, now);
  }

  /**
   * The event of a callback that carried `ref`, completed from the send's record: `id`, `ref` (the
   * sender's), and for deliveries the furthest `state` reached and `late`. Rejects when the store fails.
   */
  async correlate(event: DeliveryEvent | CallEvent, ref: string, seen?: Seen): Promise<DeliveryEvent | CallEvent> {
    if (event.event === 'delivery') {
      const c = await this.correlator.delivery(ref, event.mobile, event.status);
      seen?.(c.known, c.late, c.sentAt);
      if (!c.known) return event;
      // Added to the event (ours, just parsed), not spread into a copy (why: core/callback-events.ts).
      return Object.assign(event, { id: c.id, ref: c.userRef, state: c.state, late: c.late });
    }
    const c = await this.correlator.call(ref);
    seen?.(c.known, false);
    if (!c.known) return event;
    return Object.assign(event, { id: c.id, ref: c.userRef, custom: c.custom });
  }
}
