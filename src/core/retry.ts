// The retry policy (docs/adr/0002-retry-policy.md). Reads (inbox, call status) are idempotent: they are
// retried on any transient failure. Sends and click-to-call are not (a retry could text or ring someone
// twice): they are retried only when the request provably did not reach the service, or when the service
// refused it with 429/503 and said when to come back (Retry-After).
import { Codes, TransportError } from './errors';

export type Idempotency = 'read' | 'send';

export interface RetryOptions {
  /** Retries after the first attempt. */
  retries?: number;
  /** Backoff before the first retry, in ms; it doubles each time, with full jitter. */
  baseDelay?: number;
  /** Longest wait between attempts, in ms (a longer Retry-After is not waited for: the error stands). */
  maxDelay?: number;
}

const DEFAULTS: Required<RetryOptions> = { retries: 2, baseDelay: 200, maxDelay: 10_000 };

function transient(err: TransportError): boolean {
  if (err.code === Codes.TIMEOUT || err.code === Codes.NETWORK) return true;
  const status = err.statusCode ?? 0;
  return err.code === Codes.HTTP_STATUS && (status === 429 || status >= 500);
}

/** Whether this failure may be retried for a call of this kind. */
export function retryable(err: unknown, kind: Idempotency): err is TransportError {
  if (!(err instanceof TransportError) || err.code === Codes.CLOSED || err.code === Codes.QUEUE_FULL) return false;
  if (kind === 'read') return transient(err);
  if (err.notSent) return true;
  return err.code === Codes.HTTP_STATUS && (err.statusCode === 429 || err.statusCode === 503) && err.retryAfter !== undefined;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(new TransportError(Codes.CLOSED, 'cancelled while waiting to retry'));
    }
    signal?.addEventListener('abort', abort, { once: true });
  });
}

/** Runs `attempt` and retries it as the policy allows. The last error is the one thrown. */
export async function withRetry<T>(kind: Idempotency, attempt: () => Promise<T>, opts: RetryOptions = {}, signal?: AbortSignal): Promise<T> {
  const o = { retries: opts.retries ?? DEFAULTS.retries, baseDelay: opts.baseDelay ?? DEFAULTS.baseDelay, maxDelay: opts.maxDelay ?? DEFAULTS.maxDelay };
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (n >= o.retries || !retryable(err, kind) || signal?.aborted) throw err;
      const backoff = Math.random() * Math.min(o.maxDelay, o.baseDelay * 2 ** n);
      const wait = err.retryAfter !== undefined ? err.retryAfter * 1000 : backoff;
      if (wait > o.maxDelay) throw err;
      await sleep(wait, signal);
    }
  }
}
