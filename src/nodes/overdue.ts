// The delivery watchdog of a kaleyra-callback node (core/watchdog.ts): its setting `overdueAfter` (whole
// minutes, 0 or empty = off), and its sweep, about once a second on every replica: the store hands each
// passed deadline to one sweep only, so each OVERDUE event is emitted once. No timer per send.
import type { WatchSetting } from '../core/correlation';
import { MAX_AFTER_MINUTES } from '../core/watchdog';
import type { Node, NodeMessage } from './red';
import { sweepOverdue } from './registry';

const SWEEP_MS = 1_000;

/**
 * How long a watchdog minute lasts, in ms: 60,000, except in tests, which may set
 * KALEYRA_WATCHDOG_MINUTE_MS to a shorter one so that a deadline passes in seconds (README, callback in).
 */
function minuteMs(): number {
  const ms = Number(process.env.KALEYRA_WATCHDOG_MINUTE_MS);
  return Number.isFinite(ms) && ms > 0 ? ms : 60_000;
}

/** The node's setting, or undefined when the watchdog is off (a bad value is warned and counts as off). */
export function watchSetting(node: Node, value: unknown): WatchSetting | undefined {
  const text = String(value ?? '').trim();
  if (text === '' || text === '0') return undefined;
  const after = Number(text);
  if (!Number.isInteger(after) || after < 0 || after > MAX_AFTER_MINUTES) {
    node.warn(`overdueAfter must be a whole number of minutes from 0 to ${MAX_AFTER_MINUTES}, not ${JSON.stringify(text.slice(0, 20))}: the delivery watchdog is off`);
    return undefined;
  }
  return { listener: node.id, after, afterMs: after * minuteMs() };
}

/** Sweeps the node's passed deadlines until it closes, emitting each OVERDUE event as the node's other events. */
export function sweepWhileOpen(node: Node): void {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= sweepOverdue(node, (payload) => node.send({ payload, topic: payload.event } as NodeMessage))
      .catch((err: Error) => node.error(err))
      .finally(() => (running = undefined));
  }, SWEEP_MS).unref();
  node.on('close', (_removed, done) => {
    clearInterval(timer);
    void (running ?? Promise.resolve()).then(() => done());
  });
}
