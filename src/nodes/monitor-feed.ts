// The account view's feed to the editor (issue 21): a snapshot of every deployed account from an admin GET
// (behind Node-RED's own authorisation), and deltas through RED.comms.publish on `kaleyra/accounts`, not
// retained, at most one a second per account and only when something changed. A delta holds the account's
// id, `at`, and only the changed top-level sections of its view, each whole; a new account's first delta is
// its whole view, a removed one's is { id, removed: true }. The monitors are made by the accounts
// (src/nodes/account.ts); this file only keeps the deployed ones and paces what goes out.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import type { AccountMonitor } from '../core/monitor';
import { answerJson, type HttpApp, type Req } from './http';
import type { RED } from './red';

export const FEED_TOPIC = 'kaleyra/accounts';
/** At most one delta per account this often. */
export const FEED_INTERVAL_MS = 1_000;
/** How often idle accounts are looked at for an hour of counts that moved on by a minute. */
const MINUTE_CHECK_MS = 10_000;

interface Feed {
  id: string;
  RED: RED;
  /** Unset once the account closed: the next delta says it was removed. */
  monitor?: AccountMonitor;
  timer?: NodeJS.Timeout;
  /** When the last delta went out. */
  lastAt: number;
}

const feeds = new Map<string, Feed>();
let minuteTimer: NodeJS.Timeout | undefined;

/** The monitors of the deployed accounts. */
export function monitors(): AccountMonitor[] {
  const list: AccountMonitor[] = [];
  for (const feed of feeds.values()) if (feed.monitor) list.push(feed.monitor);
  return list;
}

/** An account started: its whole view goes out (a redeployed one's replaces the old without a removal). */
export function attachMonitor(RED: RED, monitor: AccountMonitor): void {
  const id = monitor.info.id;
  let feed = feeds.get(id);
  if (feed) Object.assign(feed, { RED, monitor });
  else feeds.set(id, (feed = { id, RED, monitor, lastAt: 0 }));
  const f = feed;
  monitor.onChange = () => schedule(f);
  schedule(f);
  if (!minuteTimer) {
    minuteTimer = setInterval(() => {
      for (const each of feeds.values()) if (each.monitor?.minutesMoved()) schedule(each);
    }, MINUTE_CHECK_MS);
    minuteTimer.unref();
  }
}

/** An account closed: unless it is deployed again before its next delta is due, the editors are told it went. */
export function detachMonitor(monitor: AccountMonitor): void {
  monitor.onChange = undefined;
  const feed = feeds.get(monitor.info.id);
  if (!feed || feed.monitor !== monitor) return; // already replaced by its redeployed self
  feed.monitor = undefined;
  schedule(feed);
}

function schedule(feed: Feed): void {
  if (feed.timer) return;
  const wait = Math.max(0, feed.lastAt + FEED_INTERVAL_MS - Date.now());
  feed.timer = setTimeout(() => flush(feed), wait);
  feed.timer.unref();
}

function flush(feed: Feed): void {
  feed.timer = undefined;
  let delta: object | undefined;
  if (feed.monitor) delta = feed.monitor.delta();
  else {
    delta = { id: feed.id, removed: true };
    feeds.delete(feed.id);
    if (feeds.size === 0) {
      clearInterval(minuteTimer);
      minuteTimer = undefined;
    }
  }
  if (!delta) return;
  feed.lastAt = Date.now();
  feed.RED.comms?.publish(FEED_TOPIC, delta, false);
}

let pkg: { name: string; version: string } | undefined;
function packageInfo(): { name: string; version: string } {
  if (!pkg) {
    const { name, version } = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { name: string; version: string };
    pkg = { name, version };
  }
  return pkg;
}

/** The snapshot the account view loads: versions, and each deployed account's whole view. */
export function snapshot(RED: RED): object {
  let nodeRed: string | undefined;
  try {
    nodeRed = RED.version?.() ?? (RED.settings.version as string | undefined);
  } catch {
    // a runtime without it
  }
  return { package: packageInfo(), nodeRed, node: process.version, accounts: monitors().map((m) => m.view()) };
}

/** GET /kaleyra/accounts on httpAdmin, behind the read permission of kaleyra-config. */
export function installMonitorFeed(RED: RED): void {
  const app = RED.httpAdmin as HttpApp | undefined;
  if (!app) return;
  app.get('/kaleyra/accounts', RED.auth.needsPermission('kaleyra-config.read'), (_req: Req, res: ServerResponse) => answerJson(res, 200, snapshot(RED)));
}
