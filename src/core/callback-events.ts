// Incoming callbacks (docs/service.md §6): delivery status (§6.1), click-to-call (§6.2) and the VMN
// trigger (§6.3), parsed into typed events. A request that is neither is refused with an InputError
// (answered 400).
//
// Why objects made per request get their properties added to a new object (or one of ours) in place, not
// to a spread copy: V8 adds properties to a spread copy about ten times slower. extras() below,
// core/messaging.ts and nodes/account.ts do so and point here.
import { InputError } from './errors';
import { CALLBACK_VARIABLES } from './click-to-call';
import { shown } from './validate';

export type Params = Record<string, string>;

/** A delivery status callback (docs/service.md §6.1); extra query parameters are kept beside the fields. */
export interface DeliveryEvent {
  event: 'delivery';
  status: string;
  mobile: string;
  /** Unix time in seconds, as the service sent it. */
  timestamp: number;
  /** The same instant as an ISO 8601 string. */
  time: string;
  [extra: string]: unknown;
}

/**
 * A click-to-call callback (docs/service.md §6.2): every variable; times and durations as numbers, null
 * when the service left them empty.
 */
export interface CallEvent {
  event: 'call';
  caller: string;
  receiver: string;
  status: string;
  status1: string;
  status2: string;
  callerid: string;
  recordpath: string;
  starttime: number | null;
  endtime: number | null;
  duration: number | null;
  billsec: number | null;
  /** starttime / endtime as ISO 8601 strings, null when absent. */
  startTime: string | null;
  endTime: string | null;
  [extra: string]: unknown;
}

/** An incoming SMS from the VMN trigger (docs/service.md §6.3). */
export interface VmnMessage {
  from: string;
  message: string;
  /** The `ts` parameter: a number when it is an epoch time, else the string as sent. */
  ts: number | string;
  /** `ts` as an ISO 8601 string when it could be read as a time, else null. */
  time: string | null;
  [extra: string]: unknown;
}

const NUMERIC_CALL_FIELDS = ['starttime', 'endtime', 'duration', 'billsec'] as const;
const CALL_ONLY = ['caller', 'receiver', 'status1', 'status2', 'starttime', 'endtime', 'duration', 'billsec', 'recordpath', 'callerid'];
/** Parameters of ours in the callback URL, never part of the event. */
const OURS = new Set(['token', 'kref']);

/** The variables a VMN's trigger URL may hold, replaced by the service (docs/service.md §6.3). */
export const SMS_VARIABLES = ['from', 'message', 'ts'] as const;

/** A `{variable}` the service did not replace counts as empty. */
function value(params: Params, name: string): string {
  const v = (params[name] ?? '').trim();
  return /^\{\w+\}$/.test(v) ? '' : v;
}

function epoch(field: string, raw: string, required: boolean): number | null {
  if (raw === '') {
    if (required) throw new InputError(field, 'is missing');
    return null;
  }
  if (!/^\d{1,13}(\.\d+)?$/.test(raw)) throw new InputError(field, `must be a number, not ${shown(raw, 40)}`);
  return Number(raw);
}

/** Epoch seconds (or milliseconds, when that large) as ISO 8601. */
export function isoTime(t: number | null): string | null {
  if (t === null) return null;
  const ms = t > 1e11 ? t : t * 1000;
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/**
 * Parameter names that would shadow what every object has (`toString`, `valueOf`, `hasOwnProperty`,
 * `__proto__`...): never kept, so String(msg.payload) or payload.hasOwnProperty() in a flow still work.
 */
export function shadows(name: string): boolean {
  return name in Object.prototype;
}

/** The parameters that are not fields, in a new object the parsers add their fields to (see above). */
function extras(params: Params, known: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) {
    if (!known.includes(k) && !OURS.has(k) && !shadows(k)) out[k] = v;
  }
  return out;
}

/** A delivery or a call callback, told apart by their parameters (docs/service.md §6.4). */
export function parseCallback(params: Params): DeliveryEvent | CallEvent {
  if (CALL_ONLY.some((k) => params[k] !== undefined)) return parseCallEvent(params);
  if (params.status !== undefined || params.mobile !== undefined) return parseDeliveryEvent(params);
  throw new InputError('query', 'is neither a delivery-status callback (status, mobile, timestamp) nor a call callback (caller, receiver, status...)');
}

export function parseDeliveryEvent(params: Params): DeliveryEvent {
  const status = value(params, 'status');
  const mobile = value(params, 'mobile');
  if (!status) throw new InputError('status', 'is missing');
  if (!mobile) throw new InputError('mobile', 'is missing');
  const timestamp = epoch('timestamp', value(params, 'timestamp'), true)!;
  return Object.assign(extras(params, ['status', 'mobile', 'timestamp']), { event: 'delivery' as const, status, mobile, timestamp, time: isoTime(timestamp)! });
}

export function parseCallEvent(params: Params): CallEvent {
  const nums = Object.fromEntries(NUMERIC_CALL_FIELDS.map((k) => [k, epoch(k, value(params, k), false)])) as Record<(typeof NUMERIC_CALL_FIELDS)[number], number | null>;
  return Object.assign(extras(params, CALLBACK_VARIABLES), {
    event: 'call' as const,
    caller: value(params, 'caller'),
    receiver: value(params, 'receiver'),
    status: value(params, 'status'),
    status1: value(params, 'status1'),
    status2: value(params, 'status2'),
    callerid: value(params, 'callerid'),
    recordpath: value(params, 'recordpath'),
    ...nums,
    startTime: isoTime(nums.starttime),
    endTime: isoTime(nums.endtime),
  });
}

export function parseVmnMessage(params: Params): VmnMessage {
  const from = value(params, 'from');
  if (!from) throw new InputError('from', 'is missing');
  const message = params.message ?? '';
  const rawTs = value(params, 'ts');
  let ts: number | string = rawTs;
  let time: string | null = null;
  if (/^\d{9,13}$/.test(rawTs)) {
    ts = Number(rawTs);
    time = isoTime(ts);
  } else if (rawTs) {
    // `YYYY-MM-DD HH:mm:SS` without a zone is read as UTC, like the inbox's received_time, so the
    // result does not depend on this host's time zone; other forms are left to Date.parse.
    const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?$/i.exec(rawTs);
    const parsed = Date.parse(m ? `${m[1]}T${m[2]}${m[3] ?? 'Z'}` : rawTs);
    time = Number.isNaN(parsed) ? null : new Date(parsed).toISOString();
  }
  return Object.assign(extras(params, SMS_VARIABLES), { from, message, ts, time });
}
