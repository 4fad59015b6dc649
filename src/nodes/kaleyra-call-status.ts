// kaleyra-call-status: looks up outbound calls (interface C) by id, from the node or msg.payload.
// The id setting is `callId`: `id` is the node's own id in its config.
import { orMsg, payloadObject, registerAction } from './action';
import type { RED } from './red';

export = function register(RED: RED) {
  registerAction(RED, 'kaleyra-call-status', {
    settings: ['callId', 'mobile'],
    run: ({ client, settings: s, msg, call, config }) => {
      const given = payloadObject(msg);
      const bare = typeof msg.payload === 'string' || typeof msg.payload === 'number' ? msg.payload : given.id;
      const method = config.method ? String(config.method) : undefined;
      return client.callStatus({ id: orMsg(s.callId, bare), mobile: orMsg(s.mobile, given.mobile) }, method, call);
    },
    summary: (records) => (records.length === 1 ? String(records[0]!.status) : `${records.length} records`),
  });
};
