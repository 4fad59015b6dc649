// kaleyra-vmn-in: the VMN trigger URL (spec 6.3); emits each incoming SMS as { from, message, ts }.
import { parseVmnMessage } from '../core/callbacks';
import { listen, type ListenerNode } from './listener';
import type { RED } from './red';

export = function register(RED: RED) {
  function KaleyraVmnInNode(this: ListenerNode, config: Record<string, unknown>) {
    RED.nodes.createNode(this, config);
    listen(RED, this, config, (params) => {
      const payload = parseVmnMessage(params);
      return Promise.resolve({ payload, topic: payload.from });
    });
  }

  RED.nodes.registerType('kaleyra-vmn-in', KaleyraVmnInNode, { credentials: { token: { type: 'text' } } });
};
