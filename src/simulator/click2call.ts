/**
 * Interface D, click-to-call (docs/service.md §5, §6.2): validation, the response, and a simulated call whose
 * legs follow the numbers dialled, so flows can exercise every outcome.
 *
 * | number ends in | caller (leg 1)                              | receiver (leg 2) |
 * |----------------|---------------------------------------------|------------------|
 * | 1              | BUSY                                        | BUSY             |
 * | 2              | NOANSWER on every attempt                   | NOANSWER         |
 * | 3              | FAILED                                      | FAILED           |
 * | 4              | NOANSWER on the first attempt, then answers | answers          |
 * | anything else  | answers                                     | answers          |
 *
 * `ivr:<id>` receivers always answer. Several callers (or receivers) are dialled at once and the first
 * listed that answers wins; when none answers, the first number's outcome is the leg's. Only a NOANSWER
 * first leg is retried, up to `retry` times. The consolidated {status} is ANSWER when bridged, otherwise
 * the failed leg's outcome with its suffix (BUSY_LEG1, NOANSWER_LEG2, FAILED_LEG1, ...).
 */
import { fillVariables, isHttpUrl } from './callback-url';
import type { CallbackSender } from './callback-sender';
import type { CallLog } from './calls';
import { alnumId } from './ids';
import { invalid, rejection, type Reply } from './reply';

/** Caller id used when the request gives none (the account's "first active number"). */
export const DEFAULT_CALLER_ID = '8080808080';
const TEN_DIGITS = /^\d{10}$/;
const MAX_DELAY_S = 86_400;

export interface ClickToCall {
  callers: string[];
  /** Phone numbers, or one `ivr:<id>`. */
  receivers: string[];
  retry: number;
  delaySeconds: number;
  callerId: string;
  callback?: string;
}

export function validateClickToCall(params: Record<string, string>): ClickToCall {
  const caller = params.caller?.trim();
  const receiver = params.receiver?.trim();
  if (!caller) throw rejection('E422', 'caller value not provided');
  if (!receiver) throw rejection('E423', 'receiver value not provided');
  const callers = caller.split('-');
  if (!callers.every((n) => TEN_DIGITS.test(n))) throw invalid('caller must be 10-digit numbers separated by -');
  const receivers = /^ivr:/i.test(receiver) ? [receiver] : receiver.split('^');
  if (!receivers.every((n) => TEN_DIGITS.test(n) || /^ivr:[\w-]+$/i.test(n))) {
    throw invalid('receiver must be 10-digit numbers separated by ^, or ivr:<id>');
  }
  const retry = intParam(params, 'retry', 0, 2);
  const delaySeconds = intParam(params, 'delay', 0, MAX_DELAY_S);
  intParam(params, 'return', 0, 1);
  const callerId = params.caller_id?.trim() || DEFAULT_CALLER_ID;
  if (!TEN_DIGITS.test(callerId)) throw invalid('caller_id must be a 10-digit number');
  if (params.custom && !/^[A-Za-z0-9]+$/.test(params.custom)) throw invalid('custom must be alphanumeric');
  let callback = params.callback?.trim() || undefined;
  // The query parser decoded it once; a URL encoded twice still reads "http%3A...".
  if (callback && /^https?%3A/i.test(callback)) callback = safeDecode(callback);
  if (callback && !isHttpUrl(callback)) throw invalid('callback must be a URL-encoded http(s) URL');
  return { callers, receivers, retry, delaySeconds, callerId, callback };
}

function intParam(params: Record<string, string>, name: string, min: number, max: number): number {
  const value = params[name]?.trim();
  if (!value) return min;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw invalid(`${name} must be an integer from ${min} to ${max}`);
  return Number(value);
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

type LegOutcome = 'ANSWER' | 'BUSY' | 'NOANSWER' | 'FAILED';

function legOutcome(number: string, attempt: number): LegOutcome {
  if (number.toLowerCase().startsWith('ivr:')) return 'ANSWER';
  switch (number.at(-1)) {
    case '1':
      return 'BUSY';
    case '2':
      return 'NOANSWER';
    case '3':
      return 'FAILED';
    case '4':
      return attempt === 0 ? 'NOANSWER' : 'ANSWER';
    default:
      return 'ANSWER';
  }
}

/** The legs dialled all at once: the first listed that answers, else the first number's outcome. */
function dial(numbers: string[], attempt: number): { number: string; outcome: LegOutcome } {
  const answered = numbers.find((n) => legOutcome(n, attempt) === 'ANSWER');
  return answered ? { number: answered, outcome: 'ANSWER' } : { number: numbers[0], outcome: legOutcome(numbers[0], attempt) };
}

export interface CallContext {
  sender: CallbackSender;
  calls: CallLog;
  /** Simulated seconds × timeScale = real seconds. */
  timeScale: number;
  /** Real ms a leg rings before it answers (or gives up). */
  ringMs: number;
  /** Real ms from the first leg's answer to the end of the call. */
  talkMs: number;
  recordingUrl: (callId: string) => string;
}

/**
 * Answers at once and plays the call out on timers: the callback fires when the first leg answers and
 * at the end. Variables not known yet at the first-leg answer (endtime, duration, billsec, status,
 * status2, recordpath) are empty there. The call also becomes a record of interface C under its id.
 */
export function startClickToCall(call: ClickToCall, ctx: CallContext): Reply {
  const id = `c2c_${alnumId(20)}`;
  const record = ctx.calls.add({ id, mobile: call.callers[0], status: 'QUEUED' });
  const seconds = (ms: number): number => Math.round(ms / (1000 * ctx.timeScale));
  const initMs = call.delaySeconds * 1000 * ctx.timeScale;
  const starttime = Math.floor((Date.now() + initMs) / 1000);

  let attempt = 0;
  let leg1 = dial(call.callers, attempt);
  while (leg1.outcome === 'NOANSWER' && attempt < call.retry) leg1 = dial(call.callers, ++attempt);
  const leg1At = initMs + (attempt + 1) * ctx.ringMs;
  const leg2 = leg1.outcome === 'ANSWER' ? dial(call.receivers, 0) : undefined;
  const bridged = leg2?.outcome === 'ANSWER';
  const endAt = leg2 ? leg1At + ctx.talkMs : leg1At;

  const base = { caller: leg1.number, receiver: leg2?.number ?? call.receivers[0], starttime: String(starttime), callerid: call.callerId };
  const notify = (vars: Record<string, string>): void => {
    if (call.callback) void ctx.sender.get('click2call', fillVariables(call.callback, vars).url);
  };

  if (leg2) {
    ctx.sender.after(leg1At, () => {
      record.status = 'INPROGRESS';
      notify({ ...base, endtime: '', duration: '', billsec: '', status: '', status1: 'ANSWER', status2: '', recordpath: '' });
    });
  }
  ctx.sender.after(endAt, () => {
    const status = bridged ? 'ANSWER' : leg2 ? `${leg2.outcome}_LEG2` : `${leg1.outcome}_LEG1`;
    record.status = bridged ? 'COMPLETED' : status;
    notify({
      ...base,
      endtime: String(starttime + seconds(endAt - initMs)),
      duration: String(leg2 ? seconds(ctx.talkMs) : 0),
      billsec: String(bridged ? seconds(ctx.talkMs - ctx.ringMs) : 0),
      status,
      status1: leg1.outcome,
      status2: leg2?.outcome ?? '',
      recordpath: bridged ? ctx.recordingUrl(id) : '',
    });
  });
  return { status: '200', message: 'Call initiated', data: { id } };
}
