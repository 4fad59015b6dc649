// kaleyra-vmn-in: the VMN trigger URL (spec 6.3); emits each incoming SMS as { from, message, ts }.
import { parseVmnMessage } from '../core/callbacks';
import { listen, localBase, type ListenerNode } from './listener';
import { addTrigger, removeTrigger } from './shared-simulator';
import type { RED } from './red';

export = function register(RED: RED) {
  function KaleyraVmnInNode(this: ListenerNode, config: Record<string, unknown>) {
    RED.nodes.createNode(this, config);
    listen(RED, this, config, (params) => {
      const payload = parseVmnMessage(params);
      return Promise.resolve({ payload, topic: payload.from });
    });
    // With the built-in simulator, injected SMS come here (spec 6.3's trigger URL).
    const trigger = localBase(RED) + this.localUrl();
    addTrigger(trigger);
    this.on('close', (_removed, done) => {
      removeTrigger(trigger);
      done();
    });
  }

  RED.nodes.registerType('kaleyra-vmn-in', KaleyraVmnInNode, { credentials: { token: { type: 'text' } } });
};
