// "Report to": an action node sending through a kaleyra-callback node builds the callback URL itself
// (public URL + httpNodeRoot + path + token + a correlation ref) and records the send under that ref,
// so the callback's events can name the message or call they belong to.
import { buildCallbackUrl } from '../core/click-to-call';
import { newRef, type Correlator } from '../core/correlation';
import { InputError } from '../core/errors';
import type { AccountNode } from './action';
import type { ListenerNode } from './listener';
import type { RED } from './red';

export interface CallbackNode extends ListenerNode {
  correlator: Correlator;
}

export interface Report {
  /** The callback URL to send with the request. */
  url: string;
  /** The service accepted: remember its ids (per recipient, or { call: id }). */
  sent(ids: Record<string, string>): Promise<void>;
  /** The request failed: its ref matches nothing any more. */
  failed(): Promise<void>;
}

export async function openReport(RED: RED, reportTo: unknown, account: AccountNode, kind: 'message' | 'call', userRef: unknown, custom?: unknown): Promise<Report | undefined> {
  if (!reportTo) return undefined;
  const listener = RED.nodes.getNode(String(reportTo)) as CallbackNode | null;
  if (!listener?.correlator) throw new InputError('reportTo', 'the kaleyra-callback node to report to is not deployed');
  const ref = newRef();
  const local = account.publicBase() + listener.localUrl({ kref: ref });
  // Click-to-call fills {variables} into its callback URL (spec 6.2); messaging appends its parameters.
  const url = kind === 'call' ? buildCallbackUrl(local) : local;
  const { correlator } = listener;
  await correlator.track(ref, kind, userRef, typeof custom === 'string' ? custom : undefined);
  return { url, sent: (ids) => correlator.identified(ref, ids), failed: () => correlator.forget(ref) };
}
