// What every interface call needs: the shared transport, the account's key and the interface's base URL.
import type { Transport } from './transport';
import type { Envelope } from './decode';

export interface CallContext {
  transport: Transport;
  apiKey: string;
  baseUrl: string;
  /** Response format to ask for; JSON unless a test or a user asks for another. */
  format?: 'json' | 'xml' | 'php' | 'text';
  signal?: AbortSignal;
}

/** The normalised answer of a call, with the whole decoded envelope beside it. */
export interface Result<T> {
  payload: T;
  envelope: Envelope;
}
