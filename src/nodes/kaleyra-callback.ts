// kaleyra-callback: receives the delivery-status callbacks of interface A (docs/service.md §6.1) and the
// call callbacks of interface D (§6.2), and emits one typed event per accepted request, correlated by its
// account with the message or call it belongs to when a node that "reports to" it built the URL; with its
// delivery watchdog on, also an OVERDUE event per recipient not delivered in time (./overdue.ts).
import { parseCallback } from '../core/callback-events';
import { correlate } from './registry';
import { serveListener } from './listener';
import { sweepWhileOpen, watchSetting } from './overdue';
import type { Node, RED } from './red';

export = function register(RED: RED) {
  function KaleyraCallbackNode(this: Node, config: Record<string, unknown>) {
    RED.nodes.createNode(this, config);
    const node = this;
    const watch = watchSetting(node, config.overdueAfter);
    serveListener(RED, node, config, 'callback', (params) => {
      const event = parseCallback(params);
      return correlate(node, event, params.kref).then((payload) => ({ payload, topic: payload.event }));
    }, watch);
    if (watch) sweepWhileOpen(node);
  }

  RED.nodes.registerType('kaleyra-callback', KaleyraCallbackNode, { credentials: { token: { type: 'text' } } });
};
