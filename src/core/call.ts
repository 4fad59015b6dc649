// What every interface call needs, and the one way a prepared call is performed. Each interface module
// validates its input and prepares a Call (docs/service.md §2–5); the client then queues it, retries
// it as its kind allows, and performs it here.
import type { Transport, FilePart } from './transport';
import type { Envelope } from './decode';
import type { Idempotency } from './retry';

export interface CallContext {
  transport: Transport;
  apiKey: string;
  baseUrl: string;
  /** Response format to ask for; JSON unless a test or a user asks for another. */
  format?: 'json' | 'xml' | 'php' | 'text';
  signal?: AbortSignal;
}

/**
 * The `format` parameter for the format asked for, among those an interface offers. Plain text is
 * the voice APIs' default, so asking for it means sending none; a format not offered asks for JSON.
 */
export function formatParam(format: CallContext['format'], offered: ReadonlyArray<NonNullable<CallContext['format']>>): string | undefined {
  if (!format || !offered.includes(format)) return 'JSON';
  return format === 'text' ? undefined : format.toUpperCase();
}

/** The normalised answer of a call, with the whole decoded envelope beside it. */
export interface Result<T> {
  payload: T;
  envelope: Envelope;
}

/** A validated request, ready to be sent (once, or again on a retry). */
export interface Call<T> {
  /** 'send' when repeating it could repeat an effect (a message, a phone call). */
  kind: Idempotency;
  method: 'GET' | 'POST';
  path: string;
  params: Record<string, string | undefined>;
  success: 'OK' | '200';
  /** Opens the file parts for one attempt; `close` runs after it, whatever happened. */
  open?: () => { files: FilePart[]; close(): void };
  /** False when a second attempt could not send the same bytes (a caller's stream). */
  repeatable?: boolean;
  /** Releases what the call holds (a caller's stream) once no attempt will follow, sent or not. */
  dispose?(): void;
  normalise(envelope: Envelope): T;
  /** Sets the callback URL of a call built without one (a "Report to" URL, made once the input passed). */
  setCallback?(url: string): void;
}

/** Performs one attempt of a call. */
export async function perform<T>(ctx: CallContext, call: Call<T>): Promise<Result<T>> {
  const opened = call.open?.();
  try {
    return await ctx.transport.call(
      { baseUrl: ctx.baseUrl, path: call.path, method: call.method, params: call.params, files: opened?.files, apiKey: ctx.apiKey, signal: ctx.signal },
      call.success,
      call.normalise,
    );
  } finally {
    opened?.close();
  }
}
