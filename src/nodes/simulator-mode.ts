// The one way from the nodes to the built-in simulator (src/simulator), used only by accounts in
// simulator mode. One simulator per Node-RED, shared by those accounts; it outlives a redeploy by a short
// grace time, so its inbox and calls are still there when the new flows start. While it runs, its control
// routes sit on Node-RED's admin API behind its own authorisation, as core nodes' admin endpoints do:
// POST {httpAdminRoot}/kaleyra-simulator/sms (from, message, number, keyword) and /calls (mobile, id,
// status, senttime). They are removed with the simulator. Injected SMS go to the trigger URL of the newest
// vmn-in node bound to a simulator-mode account, through its normal token-checked path.
import type { ServerResponse } from 'node:http';
import type { Simulator } from '../simulator';
import { DEMO_KEY, type SimulatorUrls } from '../simulator/types';
import { answerJson, localBase, readParams, removeRoutes, type HttpApp, type Req } from './http';
import type { RED } from './red';
import type { Endpoint } from './registry';

const GRACE_MS = 2_000;

let sim: Simulator | undefined;
let started: Promise<SimulatorUrls> | undefined;
let users = 0;
let stopTimer: NodeJS.Timeout | undefined;
let routes: { app: HttpApp; handlers: unknown[] } | undefined;
const triggers: { nodeId: string; url: string }[] = [];

/** The key an account in simulator mode sends (its simulator takes any). */
export const SIMULATOR_KEY = DEMO_KEY;

/** Starts (or joins) the simulator; resolves to its base URLs. */
export function acquireSimulator(RED: RED): Promise<SimulatorUrls> {
  users++;
  clearTimeout(stopTimer);
  if (!sim) {
    // Loaded when first used, not when Node-RED starts: most flows never run the simulator.
    const { Simulator } = require('../simulator') as typeof import('../simulator');
    sim = new Simulator({ acceptAnyKey: true });
    sim.vmnTriggerUrl = triggers.at(-1)?.url;
    started = sim.start();
  }
  installRoutes(RED);
  return started!;
}

export function releaseSimulator(): void {
  if (--users > 0) return;
  clearTimeout(stopTimer);
  stopTimer = setTimeout(() => {
    const s = sim;
    sim = undefined;
    started = undefined;
    if (routes) removeRoutes(routes.app, routes.handlers);
    routes = undefined;
    void s?.stop();
  }, GRACE_MS);
  stopTimer.unref();
}

/**
 * A vmn-in node bound to a simulator-mode account: the simulator forwards its SMS to the node's trigger
 * URL (docs/service.md §6.3) on this Node-RED, the last one bound when there are several.
 */
export function addTrigger(RED: RED, nodeId: string, endpoint: Endpoint): void {
  const url = localBase(RED) + endpoint();
  triggers.push({ nodeId, url });
  if (sim) sim.vmnTriggerUrl = url;
}

export function removeTrigger(nodeId: string): void {
  const i = triggers.map((t) => t.nodeId).lastIndexOf(nodeId);
  if (i < 0) return;
  triggers.splice(i, 1);
  if (sim) sim.vmnTriggerUrl = triggers.at(-1)?.url;
}

/** The control routes, on this runtime's admin app (moved if the simulator outlived another one's). */
function installRoutes(RED: RED): void {
  const app = RED.httpAdmin as HttpApp | undefined;
  if (!app || routes?.app === app) return;
  if (routes) removeRoutes(routes.app, routes.handlers);
  const route = (inject: (s: Simulator, params: Record<string, string>) => unknown) => (req: Req, res: ServerResponse) => {
    void readParams(req).then((params) => {
      if (!sim) return answerJson(res, 404, { error: 'no kaleyra-config node runs the simulator' });
      if (typeof params === 'string') return answerJson(res, params === 'too-large' ? 413 : 400, { error: params });
      try {
        answerJson(res, 200, inject(sim, params));
      } catch (err) {
        answerJson(res, 400, { error: (err as Error).message });
      }
    });
  };
  const sms = route((s, p) => s.injectSms({ from: p.from ?? '', message: p.message ?? '', number: p.number, keyword: p.keyword }));
  const calls = route((s, p) => s.addCall({ mobile: p.mobile ?? '', id: p.id, status: p.status, senttime: p.senttime }));
  const permission = RED.auth.needsPermission('kaleyra-config.write');
  app.post('/kaleyra-simulator/sms', permission, sms);
  app.post('/kaleyra-simulator/calls', permission, calls);
  routes = { app, handlers: [sms, calls] };
}
