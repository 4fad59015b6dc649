// "Check account": one harmless read that tells whether an account's key works, before any real send
// (interface C, docs/service.md §4.6): the status of a call id that cannot exist. The service then answers
// A416 (no such call) to a key it knows, "Api Key not found" to one it does not (whatever status comes
// with it), A404 to a suspended account.
import { randomBytes } from 'node:crypto';
import type { KaleyraClient } from './client';
import { ConfigError, ServiceError, TransportError } from './errors';

export type CheckResult = 'works' | 'unknown-key' | 'suspended' | 'service-error' | 'unreachable' | 'config';

export interface AccountCheck {
  result: CheckResult;
  /** What the answer means, in plain words (never the key). */
  message: string;
}

/** What a ConfigError (a setting that cannot work, found before anything is sent) means for the check. */
export function configProblem(err: ConfigError): AccountCheck {
  return { result: 'config', message: `A setting cannot work: ${err.message}` };
}

/** The service's message for a key it does not know (docs/service.md §7.1), in any case and spacing. */
const API_KEY_NOT_FOUND = /\bapi[\s_-]*key\s+not\s+found\b/i;

export async function checkAccountKey(client: KaleyraClient): Promise<AccountCheck> {
  const id = `kaleyracheck${randomBytes(6).toString('hex')}`;
  try {
    await client.callStatus({ id }, 'voice.status');
    return { result: 'works', message: 'The service answered a read made with this key.' };
  } catch (err) {
    if (err instanceof ConfigError) return configProblem(err);
    if (err instanceof ServiceError) {
      const unknown = { result: 'unknown-key', message: `The key does not work: the service does not know it ("${err.message}").` } as const;
      // "Api Key not found" has no documented code (docs/service.md §4.6): with any status, the key is unknown.
      if (API_KEY_NOT_FOUND.test(err.message)) return unknown;
      if (err.code === 'A416') return { result: 'works', message: 'The service knows the key: it answered A416 ("no such call") to a call id made up for the check.' };
      if (err.code === 'A404') return { result: 'suspended', message: 'The account is suspended (A404): the key is known, but the service refuses its requests. Ask Kaleyra.' };
      if (/key.*not\s*found|invalid.*key/i.test(err.message)) return unknown;
      return { result: 'service-error', message: `The service refused the check with ${err.code}: ${err.message}` };
    }
    if (err instanceof TransportError) return { result: 'unreachable', message: `The call status service could not be asked: ${err.message}` };
    throw err;
  }
}
