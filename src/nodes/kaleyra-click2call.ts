// kaleyra-click2call: starts a click-to-call bridge call (interface D); parameters from the node, else
// from the same keys of msg.payload.
import { orMsg, payloadObject, registerAction } from './action';
import type { RED } from './red';

export = function register(RED: RED) {
  registerAction(RED, 'kaleyra-click2call', {
    settings: ['caller', 'receiver', 'callerId', 'retry', 'delay', 'custom', 'meta', 'callback'],
    run: (client, s, msg, signal) => {
      const p = payloadObject(msg);
      return client.startClickToCall(
        {
          caller: orMsg(s.caller, p.caller),
          receiver: orMsg(s.receiver, p.receiver),
          caller_id: orMsg(s.callerId, p.caller_id ?? p.callerId),
          retry: orMsg(s.retry, p.retry),
          delay: orMsg(s.delay, p.delay),
          custom: orMsg(s.custom, p.custom),
          meta: orMsg(s.meta, p.meta),
          callback: orMsg(s.callback, p.callback),
        },
        signal,
      );
    },
    summary: (call) => `call ${call.id}`,
  });
};
