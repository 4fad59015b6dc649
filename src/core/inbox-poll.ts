// Inbox polling as a trigger (for a Node-RED that the service cannot reach): each poll reads the inbox
// page by page and hands on only records not handed on before. To keep reads and memory small, polls
// after the first ask only for records from a watermark (the newest received_time seen, less a safety
// window) and remember just the records inside that window. The state is saved through a store, so
// nothing is emitted twice across restarts when the store is persistent.
import { createHash } from 'node:crypto';
import type { InboxRecord } from './inbox';

export interface PollState {
  /** Newest received_time seen, `YYYY-MM-DD HH:mm:SS`. */
  watermark?: string;
  /** Keys of the records seen at or after watermark − window (all seen records when there is no watermark). */
  seen: string[];
}

export interface PollStore {
  load(): Promise<PollState | undefined>;
  save(state: PollState): Promise<void>;
}

export interface PollOptions {
  /** Seconds before the watermark that are read again, in case the service's fromdate is exclusive or clocks differ. */
  windowSeconds?: number;
  /** Most pages read in one poll. */
  maxPages?: number;
  /** Most keys remembered: during a poll, and after it when records carry no usable received_time. */
  maxSeen?: number;
}

const TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

function shift(time: string, seconds: number): string | undefined {
  const m = TIME.exec(time);
  if (!m) return undefined;
  const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) + seconds * 1000);
  return d.toISOString().slice(0, 19).replace('T', ' ');
}

/** A short stable identity of a record (the inbox gives records no id). */
export function recordKey(r: InboxRecord): string {
  return createHash('sha1').update(JSON.stringify([r.recipient, r.sender, r.received_time, r.keyword, r.message])).digest('base64url').slice(0, 22);
}

/** Deletes the first-inserted entries of a Set or Map beyond `max`. */
function forgetOldest(entries: Set<string> | Map<string, string>, max: number): void {
  for (const key of entries.keys()) {
    if (entries.size <= max) return;
    entries.delete(key);
  }
}

export class InboxPoller {
  private state?: PollState;
  private readonly opts: Required<PollOptions>;

  constructor(
    /** Reads one page; `fromdate` is set when a watermark is known. */
    private readonly read: (page: number, fromdate: string | undefined) => Promise<InboxRecord[]>,
    private readonly store: PollStore,
    options: PollOptions = {},
  ) {
    this.opts = { windowSeconds: 60, maxPages: 10_000, maxSeen: 100_000, ...options };
  }

  /**
   * Runs one poll; `emit` receives each page's new records as they arrive. `pageSize` is the `limit`
   * the pages are read with: a shorter page is the last. Returns how many records were new.
   */
  async poll(emit: (records: InboxRecord[]) => void, pageSize: number): Promise<number> {
    this.state ??= (await this.store.load()) ?? { seen: [] };
    const { watermark } = this.state;
    const since = watermark ? shift(watermark, -this.opts.windowSeconds) : undefined;
    const seen = new Set(this.state.seen);
    // Every record this poll reads, with its time: the next poll can only read these again.
    const read = new Map<string, string>();
    let newest = watermark;
    let fresh = 0;
    for (let page = 1; page <= this.opts.maxPages; page++) {
      let records: InboxRecord[];
      try {
        records = await this.read(page, since);
      } catch (err) {
        // Keep what earlier pages already emitted (same watermark), so the next poll does not emit it again.
        this.state = { watermark, seen: [...seen] };
        await this.store.save(this.state);
        throw err;
      }
      const news: InboxRecord[] = [];
      for (const r of records) {
        const key = recordKey(r);
        read.set(key, r.received_time);
        if (TIME.test(r.received_time) && (!newest || r.received_time > newest)) newest = r.received_time;
        if (!seen.has(key)) {
          seen.add(key);
          news.push(r);
        }
      }
      if (news.length) emit(news);
      fresh += news.length;
      // Memory stays bounded however many records one poll reads: only records inside the window before
      // the newest time can be read by the next poll (the newest only grows, so the others never will),
      // and at most maxSeen keys are remembered, the oldest forgotten first.
      const cutoff = newest ? shift(newest, -this.opts.windowSeconds) : undefined;
      if (cutoff) for (const [key, time] of read) if (TIME.test(time) && time < cutoff) read.delete(key);
      forgetOldest(read, this.opts.maxSeen);
      forgetOldest(seen, this.opts.maxSeen);
      if (records.length < pageSize) break;
    }
    this.state = { watermark: newest, seen: [...read.keys()] };
    await this.store.save(this.state);
    return fresh;
  }
}
