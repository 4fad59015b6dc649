// Interface C, outbound call status (docs/service.md §4).
// Validates the call id before anything is sent, GETs `{obd_url}/api/v1/`, and turns whatever shape
// `data` comes back in (index-keyed, a list, one record, XML `voice` elements) into an array of records.
import { InputError } from './errors';
import { asList, isRecord, recordOf, type Envelope } from './decode';
import { formatParam, type Call, type CallContext } from './call';
import * as v from './validate';

// ---- Parameters (docs/service.md §4.2) ----

/**
 * The service's request example uses `voice.status`, its parameter table `voice.groupStatus`: both are allowed.
 */
export const CALL_STATUS_METHODS = ['voice.status', 'voice.groupStatus'] as const;
export type CallStatusMethod = (typeof CALL_STATUS_METHODS)[number];

/** What a user gives: a call id, or `{ id, mobile }`. */
export type CallStatusInput = string | number | { id: string | number; mobile?: string | number };

export const CALL_STATUS_LIMITS = {
  /** Ours (docs/service.md §4.7): a bound for the call id. */
  idLength: 100,
};

/**
 * Validates the input into the query of the request (without `format` and `api_key`).
 * `id` is "numeric with symbols": letters are allowed too (ids seen elsewhere are alphanumeric), as are
 * `. _ : + -`; no whitespace. `mobile` is "numeric". Other keys of an object input are ignored.
 */
export function callStatusParams(input: unknown, method: unknown = 'voice.status'): Record<string, string | undefined> {
  const m = v.isEmpty(method) ? 'voice.status' : v.oneOf('method', method, CALL_STATUS_METHODS)!;
  const given: Record<string, unknown> =
    typeof input === 'object' && input !== null && !Array.isArray(input) && !Buffer.isBuffer(input)
      ? v.plainObject('input', input)
      : { id: input };
  return { method: m, id: callId(given.id), mobile: mobile(given.mobile) };
}

function callId(value: unknown): string {
  if (typeof value === 'number' && !(Number.isSafeInteger(value) && value >= 0)) {
    throw new InputError('id', `must be a call id (a string, or a whole number), not ${v.describe(value)}`);
  }
  if (!v.isEmpty(value) && typeof value !== 'string' && typeof value !== 'number') {
    throw new InputError('id', `must be a call id string, or an object { id, mobile }, not ${v.describe(value)}`);
  }
  const id = v.text('id', value, { required: true, max: CALL_STATUS_LIMITS.idLength })!;
  if (/\s/.test(id)) throw new InputError('id', `must not contain whitespace: ${v.shown(id, 40)}`);
  if (!/^[0-9A-Za-z._:+-]+$/.test(id)) {
    throw new InputError('id', `must contain only letters, digits and . _ : + -, not ${v.shown(id, 40)}`);
  }
  return id;
}

function mobile(value: unknown): string | undefined {
  const m = v.text('mobile', value);
  if (m !== undefined && !/^\d{6,15}$/.test(m)) {
    throw new InputError('mobile', `must be a phone number of 6 to 15 digits (numeric, no +), not ${v.shown(m, 40)}`);
  }
  return m;
}

// ---- The call status record (docs/service.md §4.3) ----

export const CALL_STATUS_FIELDS = ['id', 'mobile', 'status', 'senttime'] as const;

/**
 * One call. Every documented field is a string ('' when missing); `status` is passed through whatever it
 * is (the set of values is open, docs/service.md §4.5); other fields are kept.
 */
export type CallStatusRecord = { [K in (typeof CALL_STATUS_FIELDS)[number]]: string } & { [field: string]: unknown };

/**
 * The records of `data`: keyed by index ("0", "1": JSON, PHP serialize, and the plain-text
 * form's `data.0.id` lines), a list, one record (`data.id`), or XML `voice` elements (`data.voice`, an
 * object for one element, an array for several). Empty or absent data: no records.
 */
export function normaliseCallStatus(envelope: Envelope): CallStatusRecord[] {
  const data = envelope.data;
  const rows = isRecord(data) && 'voice' in data && !('id' in data) ? data.voice : data;
  return asList(rows)
    .flatMap((row) => (isRecord(row.voice) || Array.isArray(row.voice) ? asList(row.voice) : [row]))
    .filter((row) => Object.keys(row).length > 0)
    .map((raw) => recordOf(raw, CALL_STATUS_FIELDS));
}


// ---- The request (docs/service.md §4.1) ----

/**
 * The validated request. Success is status "200"; an unknown id or mobile is the service's A416
 * (docs/service.md §4.4), surfacing as a ServiceError. The payload is the list of records.
 */
export function callStatusCall(input: unknown, method?: unknown, format?: CallContext['format']): Call<CallStatusRecord[]> {
  const { method: m, ...rest } = callStatusParams(input, method);
  return { kind: 'read', method: 'GET', path: '/api/v1/', params: { method: m, format: formatParam(format, ['json', 'xml', 'php', 'text']), ...rest }, success: '200', normalise: normaliseCallStatus };
}
