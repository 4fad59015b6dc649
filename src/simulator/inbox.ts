/** Interface B, VMN inbox (docs/service.md §3) and the VMN trigger URL (§6.3). */
import { appendQuery, fillVariables } from './callback-url';
import { formatDateTime, parseDateParam } from './dates';
import { invalid, type Reply } from './reply';
import type { InboxRecord, SmsInput } from './types';

/** VMN number that injected SMS go to when none is given. */
export const DEFAULT_VMN = '9220092200';
const DEFAULT_LIMIT = 50;

interface Entry {
  record: InboxRecord;
  epochMs: number;
}

/** Numbers match when equal as digits, or when one ends with the other (with or without country code). */
export function sameNumber(a: string, b: string): boolean {
  const x = a.replace(/\D/g, '');
  const y = b.replace(/\D/g, '');
  if (!x || !y) return false;
  return x === y || (Math.min(x.length, y.length) >= 10 && (x.endsWith(y) || y.endsWith(x)));
}

export class Inbox {
  private entries: Entry[] = [];

  constructor(private readonly maxRecords: number) {}

  get records(): InboxRecord[] {
    return this.entries.map((e) => e.record);
  }

  clear(): void {
    this.entries = [];
  }

  /** Stores an incoming SMS (newest last); returns the record and the unix seconds it was received at. */
  add(sms: SmsInput): { record: InboxRecord; ts: number } {
    if (!sms.from || typeof sms.from !== 'string') throw new TypeError('from is required');
    if (typeof sms.message !== 'string') throw new TypeError('message is required');
    if (sms.ts !== undefined && !(Number.isFinite(sms.ts) && sms.ts >= 0)) throw new TypeError('ts must be unix seconds');
    // ts is unix seconds, as the trigger's {ts} (docs/service.md §6.3); a 13-digit value is taken as ms.
    const epochMs = sms.ts === undefined ? Date.now() : sms.ts > 1e12 ? sms.ts : sms.ts * 1000;
    const record: InboxRecord = {
      recipient: sms.number || DEFAULT_VMN,
      keyword: sms.keyword ?? (sms.message.trim().split(/\s+/)[0] ?? '').toUpperCase(),
      sender: sms.from,
      message: sms.message,
      operator: '',
      circle: '',
      response: '',
      received_time: formatDateTime(epochMs),
    };
    this.entries.push({ record, epochMs });
    if (this.entries.length > this.maxRecords) this.entries.splice(0, this.entries.length - this.maxRecords);
    return { record, ts: Math.floor(epochMs / 1000) };
  }

  /** One page of the matching records; several come as an array (undocumented: docs/service.md §8.3). */
  query(params: Record<string, string>): Reply {
    const from = dateParam(params, 'fromdate', false);
    const to = dateParam(params, 'todate', true);
    const limit = positiveInt(params, 'limit', DEFAULT_LIMIT);
    const page = positiveInt(params, 'page', 1);
    const keyword = params.keyword?.trim().toLowerCase();
    const matches = this.entries.filter(
      (e) =>
        (from === undefined || e.epochMs >= from) &&
        (to === undefined || e.epochMs <= to) &&
        (!params.number || sameNumber(e.record.recipient, params.number)) &&
        (!keyword || e.record.keyword.toLowerCase() === keyword) &&
        (!params.mobile || sameNumber(e.record.sender, params.mobile)),
    );
    const rows = matches.slice((page - 1) * limit, page * limit).map((e) => e.record);
    const inbox = rows.length === 1 ? rows[0] : rows;
    return {
      status: '200',
      message: 'OK',
      data: { rows: { inbox }, total: String(matches.length), page: String(page), limit: String(limit) },
    };
  }
}

function dateParam(params: Record<string, string>, name: string, endOfDay: boolean): number | undefined {
  const value = params[name]?.trim();
  if (!value) return undefined;
  const ms = parseDateParam(value, endOfDay);
  if (ms === undefined) throw invalid(`${name} is not a date`);
  return ms;
}

function positiveInt(params: Record<string, string>, name: string, fallback: number): number {
  const value = params[name]?.trim();
  if (!value) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw invalid(`${name} must be a positive integer`);
  return Number(value);
}

/**
 * The trigger URL takes from, message and ts as replaceable variables (docs/service.md §6.3). A URL without any
 * of them gets the three appended as query parameters instead.
 */
export function vmnTriggerUrl(template: string, sms: { from: string; message: string; ts: number }): string {
  const vars = { from: sms.from, message: sms.message, ts: String(sms.ts) };
  const filled = fillVariables(template, vars);
  return filled.replaced > 0 ? filled.url : appendQuery(template, vars);
}
