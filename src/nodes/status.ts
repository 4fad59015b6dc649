// Every status a node of this package shows, in one place: its colour, its shape and its text. A text
// that holds no figures is a key of kaleyra-config's catalog, which the editor translates for any node
// (core nodes do the same: `node-red:common.status.connected`); the editor passes no values into a
// status key, so a text with figures (counts, a code) is written here, the same in every language.
import type { KaleyraError } from '../core/errors';
import type { NodeStatus } from './red';

/** A catalog key as a status text; a flow's status node gets the key. */
export function statusText(key: string): string {
  return `@flowcomms/node-red-kaleyra/kaleyra-config:kaleyra-config.status.${key}`;
}

/** What an action node shows, from its account's state and its own messages. */
export interface ActionState {
  /** The account's problem (a status text), when it cannot be used. */
  problem?: string;
  stateDown: boolean;
  rateLimited: boolean;
  queued: number;
  /** This node's messages being requested now. */
  requesting: number;
  /** What the node showed after its last message. */
  last: NodeStatus;
}

export const status = {
  /** An account that cannot be used: its setting named (every msg fails with CONFIG). */
  unusable: (setting: string, noKey: boolean): string => statusText(noKey ? 'noApiKey' : `unusable.${setting}`),

  action(s: ActionState): NodeStatus {
    if (s.problem) return { fill: 'red', shape: 'ring', text: s.problem };
    if (s.requesting === 0 && s.stateDown) return { fill: 'yellow', shape: 'ring', text: `${s.last.text ? `${s.last.text}; ` : ''}state store down: events may come uncorrelated` };
    if (s.requesting === 0) return s.last;
    if (s.rateLimited) return { fill: 'yellow', shape: 'dot', text: `rate limited, ${s.queued} queued (requesting ${s.requesting})` };
    const queued = s.queued > 0 ? `, ${s.queued} queued for the account` : '';
    return { fill: 'blue', shape: 'dot', text: `requesting (${s.requesting})${queued}` };
  },

  /** After a message that succeeded: the node's short summary of its result. */
  done: (summary: string): NodeStatus => ({ fill: 'green', shape: 'dot', text: summary }),

  /** After a failure, as core http request shows one: the code, and for a network failure its reason. */
  failed(err: KaleyraError): NodeStatus {
    const reason = (err as { reason?: string }).reason;
    return { fill: 'red', shape: 'ring', text: reason ? `${err.code}: ${reason}` : err.code };
  },

  polled: (count: number): NodeStatus => ({ fill: 'green', shape: 'dot', text: `polled: ${count} new` }),
  standby: (): NodeStatus => ({ fill: 'grey', shape: 'ring', text: statusText('standby') }),
  pollingPaused: (): NodeStatus => ({ fill: 'yellow', shape: 'ring', text: statusText('pollingPaused') }),

  noToken: (): NodeStatus => ({ fill: 'red', shape: 'ring', text: statusText('noToken') }),
  noHttpNodes: (): NodeStatus => ({ fill: 'red', shape: 'ring', text: statusText('noHttpNodes') }),
};
