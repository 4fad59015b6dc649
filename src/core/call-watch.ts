// Watching calls until they end (interface C read again and again): each watched call is re-read every
// interval (with a growing pause after a failed read) until its status is final or the watch has lasted its
// longest time. Each status change is handed on; the last hand-over says final (and timedOut when the
// time ran out). Reads of due calls that share a group (the id up to its last "-", as the service's
// `voice.groupStatus` reads them) go as one request; at most `parallel` reads are out at once, so that a
// thousand watched calls never fill the account's queue: they wait their turn here.
import type { CallStatusRecord } from './call-status';
import { TransportError } from './errors';

/**
 * Statuses after which a call does not change. The service documents only COMPLETED; the others are the
 * ends the simulator gives a click-to-call (its legs' outcomes) and those of the voice status lists known
 * from elsewhere (docs/service.md §4.5). Status sets are open: a flow can give its own list.
 */
export const DEFAULT_FINAL_STATUSES = [
  'COMPLETED',
  'BUSY',
  'NOANSWER',
  'FAILED',
  'CONGESTION',
  'CANCEL',
  'DNDNUMB',
  'BUSY_LEG1',
  'BUSY_LEG2',
  'NOANSWER_LEG1',
  'NOANSWER_LEG2',
  'FAILED_LEG1',
  'FAILED_LEG2',
  'CONGESTION_LEG1',
  'CONGESTION_LEG2',
] as const;

export const WATCH_LIMITS = {
  /** Seconds between reads of one call: default and range. */
  intervalDefault: 10,
  intervalMin: 2,
  intervalMax: 3600,
  /** Longest watch, minutes: default and range. */
  maxDefault: 30,
  maxMin: 1,
  maxMax: 1440,
  /** Longest pause between reads after failures, ms. */
  backoffMaxMs: 60_000,
};

export interface WatchOptions {
  intervalMs: number;
  maxMs: number;
  finals: ReadonlySet<string>;
}

/** What the watcher hands on: the call's record now, whether it is the last, and whether time ran out. */
export interface WatchEvent<C> {
  context: C;
  record: CallStatusRecord;
  final: boolean;
  timedOut: boolean;
}

interface Watch<C> {
  id: string;
  mobile?: string;
  status?: string;
  record: CallStatusRecord;
  context: C;
  options: WatchOptions;
  until: number;
  nextAt: number;
  failures: number;
  reading: boolean;
}

/** The group of a call id: up to its last "-" (`1700000000.101-2` is in `1700000000.101`), if it has one. */
export function callGroup(id: string): string | undefined {
  const at = id.lastIndexOf('-');
  return at > 0 ? id.slice(0, at) : undefined;
}

export class CallWatcher<C> {
  private readonly watches = new Map<string, Watch<C>>();
  private reads = 0;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    /** Reads the calls of one id (voice.status) or of one group (voice.groupStatus). */
    private readonly read: (id: string, method: 'voice.status' | 'voice.groupStatus', mobile?: string) => Promise<CallStatusRecord[]>,
    private readonly emit: (event: WatchEvent<C>) => void,
    /** A read failed in a way reading again cannot mend: the watch has ended. */
    private readonly failed: (context: C, err: Error) => void,
    private readonly parallel = 4,
  ) {}

  get size(): number {
    return this.watches.size;
  }

  /** Watches the calls of these records (those not final yet), each until final or `options.maxMs`. */
  add(records: readonly CallStatusRecord[], context: C, options: WatchOptions, mobile?: string): void {
    if (this.stopped) return;
    const now = Date.now();
    for (const record of records) {
      if (!record.id || options.finals.has(record.status)) continue;
      this.watches.set(record.id, { id: record.id, mobile, status: record.status, record, context, options, until: now + options.maxMs, nextAt: now + options.intervalMs, failures: 0, reading: false });
    }
    if (this.watches.size > 0) this.timer ??= setInterval(() => this.tick(), 250);
  }

  /** Ends every watch, silently (the node stops). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    this.watches.clear();
  }

  private tick(): void {
    const now = Date.now();
    for (const w of [...this.watches.values()]) {
      if (!w.reading && now >= w.until) this.finish(w, w.record, true);
    }
    // Due calls, by group: a group of two or more is one voice.groupStatus read.
    const due = [...this.watches.values()].filter((w) => !w.reading && now >= w.nextAt);
    const groups = new Map<string, Watch<C>[]>();
    for (const w of due) {
      const group = callGroup(w.id);
      const key = group ? `g:${group}` : `i:${w.id}`;
      const list = groups.get(key);
      if (list) list.push(w);
      else groups.set(key, [w]);
    }
    for (const [key, batch] of groups) {
      if (this.reads >= this.parallel) break;
      // A group of one is read by its id.
      this.readBatch(batch.length > 1 ? key : `i:${batch[0]!.id}`, batch);
    }
    if (this.watches.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private readBatch(key: string, batch: Watch<C>[]): void {
    this.reads++;
    for (const w of batch) w.reading = true;
    const group = key.startsWith('g:');
    const id = key.slice(2);
    this.read(id, group ? 'voice.groupStatus' : 'voice.status', group ? undefined : batch[0]!.mobile)
      .then(
        (records) => {
          for (const w of batch) {
            const record = records.find((r) => r.id === w.id);
            if (record) this.seen(w, record);
            else this.retryLater(w); // not in the group's answer (yet): read again later
          }
        },
        (err: Error) => {
          for (const w of batch) this.retryLater(w, err);
        },
      )
      .finally(() => {
        this.reads--;
        for (const w of batch) w.reading = false;
      });
  }

  private seen(w: Watch<C>, record: CallStatusRecord): void {
    if (!this.watches.has(w.id)) return;
    w.failures = 0;
    w.record = record;
    w.nextAt = Date.now() + w.options.intervalMs;
    if (w.options.finals.has(record.status)) return this.finish(w, record, false);
    if (record.status !== w.status) {
      w.status = record.status;
      this.emit({ context: w.context, record, final: false, timedOut: false });
    }
  }

  /** Reads again after a growing pause; a failure that reading again cannot mend ends the watch. */
  private retryLater(w: Watch<C>, err?: Error): void {
    if (!this.watches.has(w.id)) return;
    if (err && !(err instanceof TransportError)) {
      // Bad input, the account's settings, or the service's own refusal (A416: no such call any more).
      this.watches.delete(w.id);
      this.failed(w.context, err);
      return;
    }
    w.failures++;
    w.nextAt = Date.now() + Math.min(WATCH_LIMITS.backoffMaxMs, w.options.intervalMs * 2 ** Math.min(w.failures, 6));
  }

  private finish(w: Watch<C>, record: CallStatusRecord, timedOut: boolean): void {
    if (!this.watches.delete(w.id)) return;
    this.emit({ context: w.context, record, final: true, timedOut });
  }
}
