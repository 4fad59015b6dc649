// kaleyra-config: one account. Its runtime is the account hub (./account.ts): the nodes that use the
// account call the hub's methods on this node (register, client, report, ...) and nothing else of it.
import { Account } from './account';
import { installAccountCheck } from './check-account-route';
import { installMetrics } from './metrics-route';
import { installMonitorFeed } from './monitor-feed';
import type { Node, RED } from './red';

export = function register(RED: RED) {
  function KaleyraConfigNode(this: Node, config: Record<string, unknown>) {
    RED.nodes.createNode(this, config);
    const account = new Account(RED, this, config);
    Object.assign(this, account.api());
    this.on('close', (removed, done) => void account.close(removed).then(done, done));
  }

  RED.nodes.registerType('kaleyra-config', KaleyraConfigNode, { credentials: { apiKey: { type: 'password' }, redisPassword: { type: 'password' } } });
  installAccountCheck(RED);
  installMonitorFeed(RED);
  installMetrics(RED);
};
