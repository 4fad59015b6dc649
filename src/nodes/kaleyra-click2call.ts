// kaleyra-click2call: starts a click-to-call bridge call (interface D); parameters from the node, else
// from the same keys of msg.payload.
import type { ClickToCallInput } from '../core/click-to-call';
import { orMsg, payloadObject, registerAction, reported } from './action';
import type { RED } from './red';

export = function register(RED: RED) {
  registerAction(RED, 'kaleyra-click2call', {
    settings: ['caller', 'receiver', 'callerId', 'retry', 'delay', 'custom', 'meta', 'callback'],
    async run({ client, account, node, settings: s, msg, call, config }) {
      const p = payloadObject(msg);
      const custom = orMsg(s.custom, p.custom);
      const report = config.reportTo ? () => account.report(node, String(config.reportTo), 'call', msg.ref, custom) : undefined;
      // The node's caller id wins; the payload's goes on under its own spelling, so that the core names
      // it in an error and refuses caller_id and callerId that differ.
      const callerIds = s.callerId === undefined ? { caller_id: p.caller_id, callerId: p.callerId } : { caller_id: s.callerId };
      const input = {
        caller: orMsg(s.caller, p.caller),
        receiver: orMsg(s.receiver, p.receiver),
        ...callerIds,
        retry: orMsg(s.retry, p.retry),
        delay: orMsg(s.delay, p.delay),
        custom,
        meta: orMsg(s.meta, p.meta),
        // With Report to, the client takes the report's callback URL (made once the input passed its checks).
        callback: report ? undefined : orMsg(s.callback, p.callback),
      };
      // From a msg: core checks it.
      return reported(report, call, (c) => client.startClickToCall(input as ClickToCallInput, c), (result) => ({ call: result.payload.id }));
    },
    summary: (placed) => `call ${placed.id}`,
  });
};
