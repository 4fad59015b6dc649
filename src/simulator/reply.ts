/** The envelope every interface answers with, before it is rendered in the requested format. */
export interface Reply {
  status: string;
  message: string;
  /** Top-level `code` (interface A success carries one, as seen in client code). */
  code?: string;
  /** Shape used by json, jsonp, php and text. */
  data?: unknown;
  /** Shape used by xml when it differs from `data` (repeated elements instead of index keys). */
  xmlData?: unknown;
}

/**
 * A request the service refuses: errors come back as HTTP 200 with the code in `status` (docs/service.md §1.4).
 */
export class Rejection extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'Rejection';
  }
}

export function rejection(code: string, message: string): Rejection {
  return new Rejection(code, message);
}

/**
 * Invalid input the service documents no code for: the simulator's E400, naming the field (docs/service.md
 * §8.2).
 */
export function invalid(message: string): Rejection {
  return new Rejection('E400', message);
}

export function errorReply(err: Rejection): Reply {
  return { status: err.code, message: err.message };
}
