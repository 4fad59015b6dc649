// kaleyra-vmn-in: the VMN trigger URL (docs/service.md §6.3); emits each incoming SMS as { from, message, ts }.
// Bound to a simulator-mode account, it also receives the SMS injected into the built-in simulator.
import { parseVmnMessage } from '../core/callback-events';
import { serveListener } from './listener';
import type { Node, RED } from './red';

export = function register(RED: RED) {
  function KaleyraVmnInNode(this: Node, config: Record<string, unknown>) {
    RED.nodes.createNode(this, config);
    serveListener(RED, this, config, 'vmn', (params) => {
      const payload = parseVmnMessage(params);
      return Promise.resolve({ payload, topic: payload.from });
    });
  }

  RED.nodes.registerType('kaleyra-vmn-in', KaleyraVmnInNode, { credentials: { token: { type: 'text' } } });
};
