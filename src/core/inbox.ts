// Interface B, the VMN inbox (docs/service.md §3). Validates the filters before anything is sent, GETs
// `{vmn_url}/v1/?method=inbox`, and turns whatever shape `data.rows.inbox` comes back in into an array
// of records with every documented field.
import { InputError } from './errors';
import { asList, isRecord, recordOf, type Envelope } from './decode';
import { formatParam, type Call, type CallContext } from './call';
import * as v from './validate';

// ---- Parameters (docs/service.md §3.2) ----

/** The filters, as a user gives them. */
export interface InboxQuery {
  /** Results from this date: a string in any format or a number (both sent as given), or a Date. */
  fromdate?: string | number | Date;
  /** Results up to this date: as `fromdate`. */
  todate?: string | number | Date;
  /** The VMN number. */
  number?: string | number;
  keyword?: string;
  /** The sender's number. */
  mobile?: string | number;
  /** Results per request, 1 to 1000; the service's default is 50. */
  limit?: number | string;
  /** Page to fetch, from 1. */
  page?: number | string;
}

/** Bounds of the package's own: the service documents none (docs/service.md §3.5). */
export const INBOX_LIMITS = {
  /** A bound for a free-form date string. */
  dateLength: 64,
  /** One SMS worth of keyword. */
  keywordLength: 160,
  /** The service's default is 50: a bound so one request cannot ask for everything. */
  limitMax: 1000,
  /** A bound for the page number. */
  pageMax: 1_000_000,
};

/**
 * Validates the filters into the query of the request (without `format` and `api_key`). Absent filters are left
 * out, so the service's defaults apply (limit 50). Keys the service does not name are ignored.
 * `undefined`/`null` mean "no filters".
 */
export function inboxParams(q: unknown): Record<string, string | undefined> {
  const query = v.isEmpty(q) ? {} : v.plainObject('query', q);
  const from = dateParam('fromdate', query.fromdate);
  const to = dateParam('todate', query.todate);
  if (from?.time !== undefined && to?.time !== undefined && from.time > to.time) {
    throw new InputError('todate', `(${to.text}) is before fromdate (${from.text})`);
  }
  const number = v.text('number', query.number);
  if (number !== undefined && !/^\+?\d{3,15}$/.test(number)) {
    throw new InputError('number', `must be a VMN number (3 to 15 digits, optional leading +), not ${v.shown(number, 40)}`);
  }
  const mobile = v.text('mobile', query.mobile);
  return {
    method: 'inbox',
    fromdate: from?.text,
    todate: to?.text,
    number,
    keyword: v.text('keyword', query.keyword, { max: INBOX_LIMITS.keywordLength }),
    mobile: mobile === undefined ? undefined : v.phone('mobile', mobile),
    limit: v.integerParam('limit', query.limit, 1, INBOX_LIMITS.limitMax),
    page: v.integerParam('page', query.page, 1, INBOX_LIMITS.pageMax),
  };
}

/**
 * "Any date format" (docs/service.md §3.2): a string is sent as given, and a number as its digits (20261101 is
 * sent as "20261101": the service reads it as it reads the text). A Date is sent as `YYYY-MM-DD HH:mm:ss` read
 * from its UTC fields, so the result does not depend on the time zone of the machine running Node-RED.
 */
function dateParam(field: string, value: unknown): { text: string; time?: number } | undefined {
  if (v.isEmpty(value)) return undefined;
  if (typeof value === 'string' || typeof value === 'number') {
    if (typeof value === 'number' && (!Number.isSafeInteger(value) || value < 0)) {
      throw new InputError(field, `must be a date string, a Date or a whole number, not ${v.describe(value)}`);
    }
    const text = v.text(field, value, { max: INBOX_LIMITS.dateLength });
    return text === undefined ? undefined : { text };
  }
  if (!(value instanceof Date)) throw new InputError(field, `must be a date string, a Date or a whole number, not ${v.describe(value)}`);
  const time = value.getTime();
  if (Number.isNaN(time)) throw new InputError(field, 'is an invalid Date');
  return { text: utcDateTime(value), time };
}

function utcDateTime(d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getUTCFullYear(), 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
}

// ---- The inbox record (docs/service.md §3.3) ----

export const INBOX_FIELDS = ['recipient', 'keyword', 'sender', 'message', 'operator', 'circle', 'response', 'received_time'] as const;

/** One incoming SMS: every documented field a string ('' when the service left it out), other fields kept. */
export type InboxRecord = { [K in (typeof INBOX_FIELDS)[number]]: string } & { [field: string]: unknown };

/**
 * The records of `data.rows.inbox`. The shape for several messages is not documented, so any of
 * these is read: one record object, an array, an object keyed by index ("0", "1", ...: JSON of a PHP
 * array, and PHP serialize), repeated `<inbox>` elements of XML (one element decodes as an object),
 * and `rows` itself being a list of `{ inbox: record }` or of records. Empty or absent rows: no records.
 */
export function normaliseInbox(envelope: Envelope): InboxRecord[] {
  const data = envelope.data;
  if (!isRecord(data)) return [];
  const rows = data.rows;
  if (isRecord(rows) && 'inbox' in rows) return asList(rows.inbox).filter((r) => Object.keys(r).length > 0).map((raw) => recordOf(raw, INBOX_FIELDS));
  return asList(rows).flatMap((row) => ('inbox' in row ? asList(row.inbox) : [row])).filter(looksLikeRecord).map((raw) => recordOf(raw, INBOX_FIELDS));
}

function looksLikeRecord(row: Record<string, unknown>): boolean {
  return INBOX_FIELDS.some((f) => f in row);
}


// ---- The request (docs/service.md §3.1) ----

/** The validated request; success is status "200" (docs/service.md §1.4); the payload is the list of records. */
export function inboxCall(q: unknown, format?: CallContext['format']): Call<InboxRecord[]> {
  const { method, ...filters } = inboxParams(q);
  return { kind: 'read', method: 'GET', path: '/v1/', params: { method, format: formatParam(format, ['json', 'php', 'xml']), ...filters }, success: '200', normalise: normaliseInbox };
}
