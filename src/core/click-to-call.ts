// Interface D, click-to-call (docs/service.md §5), and its callback URL (§6.2). Validates the request
// before anything is sent, GETs `{voice_url}/v1/?method=dial.click2call`, and returns the call id.
import { Codes, InputError, TransportError } from './errors';
import { asList, type Envelope } from './decode';
import { formatParam, type Call, type CallContext } from './call';
import * as v from './validate';

// ---- Parameters (docs/service.md §5.2) ----

/** What a user gives (msg.payload): the service's parameters by the service's names. */
export interface ClickToCallInput {
  /** First leg: a 10-digit number, several as an array or joined with `-`. */
  caller: string | number | Array<string | number>;
  /** Second leg: a 10-digit number, several as an array or joined with `^`, or `ivr:<ivr_id>`. */
  receiver: string | number | Array<string | number>;
  /** Retries when the first leg does not answer: 0 to 2. */
  retry?: number | string;
  /** Seconds between the request and the call. */
  delay?: number | string;
  /** The caller id shown: a 10-digit number of the account (`callerId` is accepted too). */
  caller_id?: string | number;
  callerId?: string | number;
  /** Extra data: an object (sent as JSON) or a string (sent as given). */
  meta?: unknown;
  /** A custom reference id of the call: alphanumeric. */
  custom?: string | number;
  /** Called at first-leg answer and at call end; may hold the `{variables}` of docs/service.md §6.2. */
  callback?: string;
}

/** The service's limits, and ("ours") the package's own where it documents none (docs/service.md §5.5). */
export const CLICK_TO_CALL_LIMITS = {
  /** 10 digits per number (the service's); ours: at most 10 numbers per leg. */
  legNumbers: 10,
  /** The service's: 0 to 2. */
  retryMax: 2,
  /** Ours (the service gives a default of 0, no maximum): at most a day. */
  delayMax: 86_400,
  /** Ours: a bound for the metadata. */
  metaLength: 2000,
  /** Ours: a bound for the custom reference. */
  customLength: 50,
  /** Ours: a bound for the IVR id. */
  ivrIdLength: 50,
};

/**
 * Validates the input into the query of the request (without `format` and `api_key`). `return=1` is
 * always sent, so the answer carries the call id. Keys the service does not name are ignored.
 */
export function clickToCallParams(input: unknown): Record<string, string | undefined> {
  const req = v.plainObject('request', input ?? {});
  const caller = legs('caller', req.caller, /-/, v.tenDigits);
  if (!caller) throw new InputError('caller', 'is required: the first-leg number (10 digits; several joined with - or as an array)');
  const receiver = legs('receiver', req.receiver, /\^/, receiverItem);
  if (!receiver) {
    // The service's own code, E423 "receiver value not provided" (docs/service.md §5.4).
    throw new InputError('receiver', 'is required (receiver value not provided): a 10-digit number, several joined with ^, or ivr:<ivr_id>', 'E423');
  }
  if (receiver.length > 1 && receiver.some((r) => r.startsWith('ivr:'))) {
    throw new InputError('receiver', 'an IVR (ivr:<ivr_id>) cannot be combined with other receivers');
  }
  return {
    method: 'dial.click2call',
    caller: caller.join('-'),
    receiver: receiver.join('^'),
    retry: v.integerParam('retry', req.retry, 0, CLICK_TO_CALL_LIMITS.retryMax),
    delay: v.integerParam('delay', req.delay, 0, CLICK_TO_CALL_LIMITS.delayMax),
    caller_id: callerId(req),
    meta: meta(req.meta),
    custom: custom(req.custom),
    callback: v.url('callback', req.callback),
    return: '1',
  };
}

/** An empty array or a blank string counts as "not given". */
function legs(field: string, value: unknown, separator: RegExp, item: (f: string, v: string) => string): string[] | undefined {
  if ((Array.isArray(value) && value.length === 0) || (typeof value === 'string' && !value.trim())) return undefined;
  return v.list(field, value, separator, CLICK_TO_CALL_LIMITS.legNumbers, item);
}

function receiverItem(field: string, value: string): string {
  if (!value.startsWith('ivr:')) return v.tenDigits(field, value);
  const id = value.slice(4);
  if (!/^[A-Za-z0-9_-]+$/.test(id) || id.length > CLICK_TO_CALL_LIMITS.ivrIdLength) {
    throw new InputError(field, `must be ivr:<ivr_id> with an id of letters, digits, _ or - (at most ${CLICK_TO_CALL_LIMITS.ivrIdLength}), not ${v.shown(value, 60)}`);
  }
  return value;
}

function callerId(req: Record<string, unknown>): string | undefined {
  const a = v.text('caller_id', req.caller_id);
  const b = v.text('callerId', req.callerId);
  if (a !== undefined && b !== undefined && a !== b) {
    throw new InputError('caller_id', `and callerId are both given and differ (${v.shown(a, 20)}, ${v.shown(b, 20)}): give one`);
  }
  if (a !== undefined) return v.tenDigits('caller_id', a);
  return b === undefined ? undefined : v.tenDigits('callerId', b);
}

function meta(value: unknown): string | undefined {
  if (v.isEmpty(value)) return undefined;
  let text: string;
  if (typeof value === 'string') {
    text = value;
  } else if (typeof value === 'object' && !Buffer.isBuffer(value)) {
    try {
      text = JSON.stringify(value);
    } catch (err) {
      throw new InputError('meta', `cannot be written as JSON (${(err as Error).message})`);
    }
  } else {
    throw new InputError('meta', `must be an object (sent as JSON) or a string, not ${v.describe(value)}`);
  }
  v.checkLength('meta', text, CLICK_TO_CALL_LIMITS.metaLength, ' (as JSON)');
  return text;
}

function custom(value: unknown): string | undefined {
  const c = v.text('custom', value, { max: CLICK_TO_CALL_LIMITS.customLength });
  if (c !== undefined && !/^[A-Za-z0-9]+$/.test(c)) throw new InputError('custom', `must be alphanumeric (letters and digits), not ${v.shown(c, 40)}`);
  return c;
}

// ---- The answer (docs/service.md §5.3) ----

/** The started call. */
export interface ClickToCallResult {
  /** The call id (alphanumeric, at most 50 characters, seen with a `c2c_` prefix). */
  id: string;
}

/**
 * The call id from `data.id` (JSON, XML `<data><id>`, the plain-text `data.id:` line), or
 * `data` itself when it is the id, or the first record's id when `data` is a list.
 */
export function callIdOf(envelope: Envelope): string | undefined {
  const data = envelope.data;
  const id = typeof data === 'string' || typeof data === 'number' ? data : asList(data)[0]?.id;
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  return typeof id === 'string' && id.trim() ? id.trim() : undefined;
}

// ---- The request (docs/service.md §5.1) ----

/**
 * The validated request. Success is status "200"; a missing receiver is the service's E423
 * (refused here before sending). The payload is `{ id }`. A success without a call id is a BAD_RESPONSE
 * TransportError whose text says the call may nevertheless have been placed.
 */
export function clickToCallCall(input: unknown, format?: CallContext['format']): Call<ClickToCallResult> {
  const { method, ...rest } = clickToCallParams(input);
  const params: Record<string, string | undefined> = { method, format: formatParam(format, ['json', 'xml', 'text']), ...rest };
  return { kind: 'send', method: 'GET', path: '/v1/', params, success: '200', normalise: callResult, setCallback: (url) => (params.callback = url) };
}

function callResult(envelope: Envelope): ClickToCallResult {
  const id = callIdOf(envelope);
  if (!id) {
    throw new TransportError(
      Codes.BAD_RESPONSE,
      'the service accepted the click-to-call (status 200) but sent no call id (data.id); the call may have been placed',
    );
  }
  return { id };
}

// ---- The callback URL (docs/service.md §6.2) ----

/** The replaceable variables, in the service's order. */
export const CALLBACK_VARIABLES = [
  'caller',
  'receiver',
  'starttime',
  'endtime',
  'duration',
  'billsec',
  'status',
  'status1',
  'status2',
  'recordpath',
  'callerid',
] as const;
export type CallbackVariable = (typeof CALLBACK_VARIABLES)[number];

/**
 * `base` with a query parameter `name={name}` for every variable, braces kept
 * literally so the service can replace them, then `extra` parameters (percent-encoded as usual).
 * A variable whose name the base query or `extra` already uses is not added again. The fragment, if
 * any, stays at the end. Encoding it once as the `callback` parameter happens when the request's query
 * is built.
 */
export function buildCallbackUrl(base: string, extra: Record<string, string> = {}): string {
  const checked = v.url('callback', base);
  if (!checked) throw new InputError('callback', 'is required: the base URL of the callback');
  const hashAt = checked.indexOf('#');
  const head = hashAt < 0 ? checked : checked.slice(0, hashAt);
  const hash = hashAt < 0 ? '' : checked.slice(hashAt);
  const taken = new Set([...new URL(head).searchParams.keys(), ...Object.keys(extra)]);
  const parts = CALLBACK_VARIABLES.filter((name) => !taken.has(name)).map((name) => `${name}={${name}}`);
  for (const [k, val] of Object.entries(extra)) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(val)}`);
  if (parts.length === 0) return checked;
  const sep = !head.includes('?') ? '?' : head.endsWith('?') || head.endsWith('&') ? '' : '&';
  return head + sep + parts.join('&') + hash;
}
