// Inbox polling as a trigger (for a Node-RED that the service cannot reach): each poll reads the inbox
// page by page and hands on each record once. A record is handed on only by the poll that claims its
// identity in the state store (an atomic claim, kept 7 days): whatever granularity the service applies
// to `fromdate` (it may ignore the time of day and return the day's earlier records on every poll), and
// however many Node-RED replicas poll one store, a record reaches the flow once. To keep reads small,
// polls after the first ask only for records from a cursor: the newest received_time seen, less a window.
//
// The store can lose its contents (memory after a restart, a Redis restarted without persistence): the
// claims are then gone, and the service would hand back records already sent on. The poller notices
// (the store's epoch changed, or it holds no cursor while this poller remembers one) and re-seeds it from
// what it still knows: the cursor, a floor below which nothing is handed on again, and the identities of
// its recent records. A record older than the floor is then never handed on, even one never seen: in
// doubt the poller skips rather than sends twice (docs/adr/0004-shared-state.md).
import { createHash } from 'node:crypto';
import type { InboxRecord } from './inbox';
import type { StateStore } from './state-store';

/** Seconds between polls of an inbox node: 0 is off; at most a day. */
export const POLL_LIMITS = { intervalMin: 0, intervalMax: 86_400 };

/** What a poller keeps of its own (in the node's context), to re-seed a store that lost its contents. */
export interface PollSnapshot {
  /** Newest received_time seen, `YYYY-MM-DD HH:mm:SS`. */
  watermark?: string;
  /** Identities of the records handed on within the window before the watermark, with their times. */
  recent: Array<[key: string, time: string]>;
  /** The store's epoch when this was taken. */
  epoch?: string;
}

interface Cursor {
  watermark?: string;
  /** Records received before this time are not handed on (set when the store was re-seeded). */
  floor?: string;
}

export interface PollOptions {
  /** Seconds before the watermark that are read again, in case the service's fromdate is exclusive or clocks differ. */
  windowSeconds?: number;
  /** Most pages read in one poll. */
  maxPages?: number;
  /** How long a record's claim is kept, in ms (its identity is remembered this long). */
  claimTtlMs?: number;
  /** Most record identities kept in the snapshot. */
  maxSnapshotKeys?: number;
}

const TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const CURSOR_TTL_MS = 365 * 24 * 3600 * 1000;

function shift(time: string, seconds: number): string | undefined {
  const m = TIME.exec(time);
  if (!m) return undefined;
  const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) + seconds * 1000);
  return d.toISOString().slice(0, 19).replace('T', ' ');
}

const later = (a: string | undefined, b: string | undefined) => (!a ? b : !b ? a : a > b ? a : b);

/** A short stable identity of a record (the inbox gives records no id). */
export function recordKey(r: InboxRecord): string {
  return createHash('sha1').update(JSON.stringify([r.recipient, r.sender, r.received_time, r.keyword, r.message])).digest('base64url').slice(0, 22);
}

export class InboxPoller {
  private readonly opts: Required<PollOptions>;
  private snapshot?: PollSnapshot;

  constructor(
    /** Reads one page; `fromdate` is set when a watermark is known. */
    private readonly read: (page: number, fromdate: string | undefined) => Promise<InboxRecord[]>,
    /** The store, with keys already scoped to this poller. */
    private readonly store: StateStore,
    /** Where this poller keeps its snapshot (the node's context: across restarts when that is persistent). */
    private readonly local: { load(): Promise<PollSnapshot | undefined>; save(s: PollSnapshot): Promise<void> },
    options: PollOptions = {},
  ) {
    this.opts = { windowSeconds: 60, maxPages: 10_000, claimTtlMs: 7 * 24 * 3600 * 1000, maxSnapshotKeys: 10_000, ...options };
  }

  /** This poller's snapshot (loaded once), the store's epoch, and the cursor the store holds. */
  private async state(): Promise<{ snap: PollSnapshot; epoch: string; stored?: Cursor }> {
    this.snapshot ??= (await this.local.load()) ?? { recent: [] };
    const epoch = await this.store.epoch();
    return { snap: this.snapshot, epoch, stored: (await this.store.get('cursor')) as Cursor | undefined };
  }

  /** The cursor, re-seeded first when the store lost what this poller remembers. */
  private async cursor(): Promise<{ cursor: Cursor; epoch: string }> {
    const { snap, epoch, stored } = await this.state();
    let cursor = stored ?? {};
    const lost = (snap.epoch !== undefined && snap.epoch !== epoch) || (!cursor.watermark && !!snap.watermark);
    if (lost && snap.watermark) {
      // Alone on the store, this poller knows all it handed on: the window's identities go back, and only
      // records older than the window are skipped. On a shared store another replica may have handed on
      // records this one never saw: nothing up to the newest time it knows is handed on again.
      const floor = this.store.shared ? snap.watermark : shift(snap.watermark, -this.opts.windowSeconds);
      cursor = { watermark: later(cursor.watermark, snap.watermark), floor: later(cursor.floor, floor) };
      await this.store.claimAll(snap.recent.map(([k]) => `rec:${k}`), this.opts.claimTtlMs);
      await this.store.put('cursor', cursor, CURSOR_TTL_MS);
    }
    return { cursor, epoch };
  }

  /**
   * Whether the store lost the contents this poller's snapshot was taken from (its epoch changed) and no one
   * has re-seeded it yet.
   */
  async storeLost(): Promise<boolean> {
    const { snap, epoch, stored } = await this.state();
    return snap.epoch !== undefined && snap.epoch !== epoch && !stored?.floor;
  }

  /**
   * For a replica that does not hold the lease: keeps its snapshot up with the shared cursor, so that if the
   * store later loses its contents, this replica too knows how far records were handed on. A cursor of
   * another epoch that no one has re-seeded yet is not taken: the loss must still be noticed.
   */
  async observe(): Promise<void> {
    const { snap, epoch, stored: cursor } = await this.state();
    if (!cursor?.watermark) return;
    if (snap.epoch !== undefined && snap.epoch !== epoch && !cursor.floor) return;
    if (later(snap.watermark, cursor.watermark) === snap.watermark && snap.epoch === epoch) return;
    this.snapshot = { watermark: later(snap.watermark, cursor.watermark), recent: snap.recent, epoch };
    await this.local.save(this.snapshot);
  }

  /**
   * Runs one poll; `emit` receives each page's new records as they arrive. `pageSize` is the `limit`
   * the pages are read with: a shorter page is the last. Returns how many records were new.
   */
  async poll(emit: (records: InboxRecord[]) => void, pageSize: number): Promise<number> {
    const { cursor, epoch } = await this.cursor();
    const since = cursor.watermark ? shift(cursor.watermark, -this.opts.windowSeconds) : undefined;
    let newest = cursor.watermark;
    // Identities handed on by this poll and earlier ones, with their times: the snapshot keeps the window's.
    const recent = new Map<string, string>(this.snapshot!.recent);
    let fresh = 0;
    // The newest time this poll handed on: a poll that fails after handing records on (the store went away
    // as the cursor was written) keeps them in the snapshot, so that a store back empty is re-seeded past them.
    let handedOn = this.snapshot!.watermark;
    try {
      for (let page = 1; page <= this.opts.maxPages; page++) {
        const records = await this.read(page, since);
        const keys = records.map(recordKey);
        const eligible = records.map((r) => !cursor.floor || !TIME.test(r.received_time) || r.received_time > cursor.floor || (!this.store.shared && r.received_time === cursor.floor));
        const claimed = await this.store.claimAll(
          keys.filter((_, i) => eligible[i]).map((k) => `rec:${k}`),
          this.opts.claimTtlMs,
        );
        const news: InboxRecord[] = [];
        let c = 0;
        records.forEach((r, i) => {
          if (TIME.test(r.received_time)) newest = later(newest, r.received_time);
          if (!eligible[i] || !claimed[c++]) return;
          news.push(r);
          recent.set(keys[i]!, r.received_time);
          if (TIME.test(r.received_time)) handedOn = later(handedOn, r.received_time);
        });
        if (news.length) emit(news);
        fresh += news.length;
        // The cursor after every page: a poll cut short still moves on from what it handed on.
        await this.store.put('cursor', { ...cursor, watermark: newest }, CURSOR_TTL_MS);
        if (records.length < pageSize) break;
      }
    } catch (err) {
      if (fresh > 0) await this.keep(recent, handedOn, epoch).catch(() => undefined);
      throw err;
    }
    await this.keep(recent, newest, epoch);
    return fresh;
  }

  /** The snapshot: the watermark and the identities handed on inside the window before it, bounded. */
  private async keep(recent: Map<string, string>, watermark: string | undefined, epoch: string): Promise<void> {
    const cutoff = watermark ? shift(watermark, -this.opts.windowSeconds) : undefined;
    const kept = [...recent].filter(([, time]) => !cutoff || !TIME.test(time) || time >= cutoff);
    this.snapshot = { watermark, recent: kept.slice(-this.opts.maxSnapshotKeys), epoch };
    await this.local.save(this.snapshot);
  }
}
