// One in-process simulator per Node-RED, shared by every config node in simulator mode. It outlives a
// redeploy by a short grace time, so its inbox and calls are still there when the new flows start.
// vmn-in nodes register their trigger URL here; the newest one receives the injected SMS.
import type { Simulator } from '../simulator';
import type { SimulatorUrls } from '../simulator/types';

const GRACE_MS = 2_000;

let sim: Simulator | undefined;
let started: Promise<SimulatorUrls> | undefined;
let users = 0;
let stopTimer: NodeJS.Timeout | undefined;
const triggers: string[] = [];

export function acquireSimulator(): Promise<SimulatorUrls> {
  users++;
  clearTimeout(stopTimer);
  if (!sim) {
    // Loaded when first used, not when Node-RED starts: most flows never run the simulator.
    const { Simulator } = require('../simulator') as typeof import('../simulator');
    sim = new Simulator({ acceptAnyKey: true });
    sim.vmnTriggerUrl = triggers.at(-1);
    started = sim.start();
  }
  return started!;
}

export function releaseSimulator(): void {
  if (--users > 0) return;
  clearTimeout(stopTimer);
  stopTimer = setTimeout(() => {
    const s = sim;
    sim = undefined;
    started = undefined;
    void s?.stop();
  }, GRACE_MS);
  stopTimer.unref();
}

/** The running simulator, if a config node uses one. */
export function runningSimulator(): Simulator | undefined {
  return sim;
}

export function addTrigger(url: string): void {
  triggers.push(url);
  if (sim) sim.vmnTriggerUrl = url;
}

export function removeTrigger(url: string): void {
  const i = triggers.lastIndexOf(url);
  if (i >= 0) triggers.splice(i, 1);
  if (sim) sim.vmnTriggerUrl = triggers.at(-1);
}
