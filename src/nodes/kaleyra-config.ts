// kaleyra-config: one account (base URLs, key, timeouts). It owns the client and so the undici pools
// that every node using the account shares; with `simulator` on it uses the built-in simulator.
import { KaleyraClient } from '../core/client';
import { InputError } from '../core/errors';
import type { AccountNode } from './action';
import { localBase } from './listener';
import type { Node, RED } from './red';
import { acquireSimulator, releaseSimulator } from './shared-simulator';
import { DEMO_KEY } from '../simulator/types';
import { installSimulatorRoutes } from './simulator-routes';

const DEFAULT_URLS = {
  messagingUrl: 'https://global.kaleyra.com',
  vmnUrl: '',
  obdUrl: 'https://obd.kaleyra.com',
  voiceUrl: 'https://api-voice.kaleyra.com',
};

function number(value: unknown, fallback: number, min: number, max: number): number {
  const n = Number(value);
  return value === '' || value === undefined || !Number.isFinite(n) ? fallback : Math.min(max, Math.max(min, n));
}

export = function register(RED: RED) {
  function KaleyraConfigNode(this: Node & AccountNode, config: Record<string, unknown>) {
    RED.nodes.createNode(this, config);
    const concurrency = number(config.concurrency, 8, 1, 256);
    const retries = number(config.retries, 2, 0, 10);
    const options = {
      timeout: number(config.timeout, 30, 1, 600) * 1000,
      connections: concurrency,
      flow: { concurrency, rate: number(config.rateLimit, 0, 0, 100_000), queueSize: number(config.queueSize, 1000, 1, 100_000) },
      readRetry: { retries },
      sendRetry: { retries },
    };
    let client: Promise<KaleyraClient>;
    if (config.simulator) {
      client = acquireSimulator().then((urls) => new KaleyraClient({ apiKey: DEMO_KEY, ...urls, ...options }));
    } else {
      const apiKey = this.credentials?.apiKey;
      const str = (name: keyof typeof DEFAULT_URLS) => String(config[name] ?? '').trim() || DEFAULT_URLS[name];
      client = apiKey
        ? Promise.resolve(new KaleyraClient({ apiKey, messagingUrl: str('messagingUrl'), vmnUrl: str('vmnUrl'), obdUrl: str('obdUrl'), voiceUrl: str('voiceUrl'), ...options }))
        : Promise.reject(new InputError('apiKey', 'the kaleyra-config node has no api key (or turn on its simulator)'));
    }
    client.catch(() => undefined); // reported per message, not as an unhandled rejection
    this.getClient = () => client;

    const publicUrl = String(config.publicUrl ?? '').trim().replace(/\/+$/, '');
    this.publicBase = () => {
      if (publicUrl) return publicUrl;
      // The in-process simulator reaches this Node-RED on loopback.
      if (config.simulator) return localBase(RED);
      throw new InputError('publicUrl', 'is not set in the kaleyra-config node; the service needs it to call back');
    };

    this.on('close', (_removed, done) => {
      client
        .then((c) => c.close())
        .catch(() => undefined)
        .then(() => {
          if (config.simulator) releaseSimulator();
          done();
        });
    });
  }

  RED.nodes.registerType('kaleyra-config', KaleyraConfigNode, { credentials: { apiKey: { type: 'password' } } });
  installSimulatorRoutes(RED);
};
