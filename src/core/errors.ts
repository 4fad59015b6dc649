// The three kinds of failure a caller can meet, each with a stable machine-readable `code`
// (what Catch nodes read as msg.error.code) and a message a person can act on.
import { escapeControl } from './redact';

/** Codes of ours, for failures the service itself did not name. */
export const Codes = {
  INVALID_INPUT: 'INVALID_INPUT',
  TIMEOUT: 'TIMEOUT',
  NETWORK: 'NETWORK',
  HTTP_STATUS: 'HTTP_STATUS',
  BAD_RESPONSE: 'BAD_RESPONSE',
  QUEUE_FULL: 'QUEUE_FULL',
  CLOSED: 'CLOSED',
  CONFIG: 'CONFIG',
} as const;

export abstract class KaleyraError extends Error {
  abstract readonly code: string;

  /**
   * `InputError [E603]: template.template_name: is missing`. Node-RED puts this text in msg.error.message;
   * before 4.0 it does not copy err.code to msg.error.code, so the code is in the text for every version.
   */
  override toString(): string {
    return `${this.name} [${this.code}]: ${this.message}`;
  }
}

/**
 * Bad input, refused before anything is sent. `code` is the service's where it has one (E603...,
 * docs/service.md §7.1).
 */
export class InputError extends KaleyraError {
  readonly code: string;
  readonly field: string;
  constructor(field: string, message: string, code: string = Codes.INVALID_INPUT) {
    super(`${escapeControl(field)}: ${message}`); // a field path can hold a msg's own key names
    this.name = 'InputError';
    this.field = field;
    this.code = code;
  }
}

/**
 * The account's own settings are unusable (no key, a key that is not one, a base URL that is not http(s)).
 * Found when the account starts; every call through it then fails with CONFIG, with no request or retry.
 */
export class ConfigError extends KaleyraError {
  readonly code = Codes.CONFIG;
  readonly setting: string;
  constructor(setting: string, message: string) {
    super(`${setting}: ${message}`);
    this.name = 'ConfigError';
    this.setting = setting;
  }
}

/** The service answered with an error envelope; `code` is its status (A404, A416, E423...). */
export class ServiceError extends KaleyraError {
  readonly code: string;
  readonly envelope: Record<string, unknown>;
  constructor(code: string, message: string, envelope: Record<string, unknown>) {
    super(message || 'the service answered with an error');
    this.name = 'ServiceError';
    this.code = code;
    this.envelope = envelope;
  }
}

/** The exchange itself failed: no answer, a non-2xx answer, or an answer that cannot be decoded. */
export class TransportError extends KaleyraError {
  readonly code: string;
  readonly statusCode?: number;
  /** Seconds the service asked us to wait (Retry-After), when it said so. */
  readonly retryAfter?: number;
  /** True when the request provably never reached the service (safe to resend a non-idempotent call). */
  readonly notSent: boolean;
  /** For a failed connection, what it means in a word or two (`refused`, `host not found`, `TLS`...): the node's status. */
  readonly reason?: string;
  constructor(
    code: string,
    message: string,
    extra: { statusCode?: number; retryAfter?: number; notSent?: boolean; reason?: string; cause?: { code: string; host: string } } = {},
  ) {
    // `cause` is the system's code and the host (msg.error.cause on Node-RED 4+): flows can switch on it.
    super(message, extra.cause ? { cause: extra.cause } : undefined);
    this.name = 'TransportError';
    this.code = code;
    this.statusCode = extra.statusCode;
    this.retryAfter = extra.retryAfter;
    this.notSent = extra.notSent ?? false;
    if (extra.reason) this.reason = extra.reason;
  }
}
