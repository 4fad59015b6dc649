// How one account is doing, told by the account's hooks and read by the editor's account view and the
// Prometheus metrics (issue 21). Framework-free: the account (src/nodes/account.ts) wires it to Node-RED,
// test/monitor.test.js drives it alone on a fake clock. Everything is bounded: counts by interface, code
// and state, the last 20 failures, 1,000 times to DELIVERED, 60 minutes. The hooks are told on the hot
// path, so they only bump counters (no allocation); the views are built when asked. Phone numbers never
// enter it: a failure's text is masked before it is kept.
import { PHONE_RULE } from './validate';

export const INTERFACES = ['whatsapp', 'vmn', 'call-status', 'click2call'] as const;
export type Interface = (typeof INTERFACES)[number];
export type PollRole = 'polling' | 'standby' | 'paused' | 'failed';
export type ListenerKind = 'callback' | 'vmn';
export type RefusedReason = 'token' | 'tooLarge' | 'other';
export type AccountState = 'ok' | 'rateLimited' | 'storeDown' | 'unusable';

/** Upper bounds (seconds) of the request-duration histogram. */
export const REQUEST_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Upper bounds (seconds) of the time-to-DELIVERED histogram: seconds to a day. */
export const DELIVERED_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 21600, 86400];
export const RECENT_FAILURES = 20;
/** Times to DELIVERED kept for the median and 95th percentile. */
export const DELIVERED_SAMPLE = 1000;
const MINUTES = 60;
const MINUTE_MS = 60_000;
const MESSAGE_MAX = 200;

/** What the account reads at view time (and at a scrape). */
export interface Gauges {
  queued: number;
  inFlight: number;
  rateLimited: boolean;
  storeUp: boolean;
  /** The unusable setting's name. */
  problem?: string;
}

/** What never changes while the account runs. */
export interface AccountInfo {
  id: string;
  name: string;
  mode: 'simulator' | 'live';
  store: 'memory' | 'redis';
  settings: Record<string, unknown>;
}

export interface MonitorOptions {
  now?: () => number;
  /** Masks what must not be kept of a failure's text besides phone numbers (the account's key). */
  redact?: (text: string) => string;
}

/** A histogram's cumulative counts, as Prometheus wants them. */
export class Buckets {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }
  observe(v: number): void {
    this.sum += v;
    this.count++;
    for (let i = 0; i < this.bounds.length; i++) if (v <= this.bounds[i]) this.counts[i]++;
  }
}

export interface PollView {
  node: string;
  nodeName: string;
  role: PollRole;
  lastPoll: number | null;
  emitted: number;
}

/** One inbox poller's state: the inbox node sets it directly. */
export class PollStats {
  role: PollRole = 'standby';
  lastPoll: number | null = null;
  emitted = 0;
  constructor(
    private readonly monitor: AccountMonitor,
    readonly node: string,
    readonly nodeName: string,
  ) {}
  /** Its role now (polling holds the lease); `emitted` records handed on by a poll that just ended. */
  set(role: PollRole, emitted?: number): void {
    if (emitted !== undefined) {
      this.lastPoll = this.monitor.now();
      this.emitted += emitted;
    } else if (role === this.role) return;
    this.role = role;
    this.monitor.touch(Section.polls);
  }
  view(): PollView {
    return { node: this.node, nodeName: this.nodeName, role: this.role, lastPoll: this.lastPoll, emitted: this.emitted };
  }
}

export interface ListenerView {
  node: string;
  nodeName: string;
  kind: ListenerKind;
  received: number;
  correlated: number;
  uncorrelated: number;
  refused: Record<RefusedReason, number>;
}

/** What one listener node received; its counts also go to the account's totals by kind (which never go down). */
export class ListenerStats {
  received = 0;
  correlated = 0;
  uncorrelated = 0;
  readonly refusedBy: Record<RefusedReason, number> = { token: 0, tooLarge: 0, other: 0 };
  constructor(
    private readonly monitor: AccountMonitor,
    readonly node: string,
    readonly nodeName: string,
    readonly kind: ListenerKind,
    private readonly totals: ListenerTotals,
  ) {}
  /** A request was accepted (answered 200). */
  accepted(): void {
    this.received++;
    this.totals.received++;
    this.monitor.touch(Section.listeners);
  }
  refused(reason: RefusedReason): void {
    this.refusedBy[reason]++;
    this.totals.refused[reason]++;
    this.monitor.touch(Section.listeners);
  }
  /** An accepted event was (or was not) matched with a send of ours. */
  matched(known: boolean): void {
    if (known) {
      this.correlated++;
      this.totals.correlated++;
    } else {
      this.uncorrelated++;
      this.totals.uncorrelated++;
    }
    this.monitor.touch(Section.listeners);
  }
  view(): ListenerView {
    const { node, nodeName, kind, received, correlated, uncorrelated } = this;
    return { node, nodeName, kind, received, correlated, uncorrelated, refused: { ...this.refusedBy } };
  }
}

export interface ListenerTotals {
  received: number;
  correlated: number;
  uncorrelated: number;
  refused: Record<RefusedReason, number>;
}

export interface Failure {
  code: string;
  node: string;
  nodeName: string;
  at: number;
  message: string;
}

export interface AccountView extends AccountInfo {
  state: AccountState;
  problem?: string;
  queued: number;
  inFlight: number;
  minutes: { start: number; requests: Record<Interface, number[]>; sends: { sent: number[]; failed: number[] } };
  funnel: { sent: number; delivered: number; read: number; failed: number; overdue: number; deliveredMs: { p50: number; p95: number } | null };
  failures: { byCode: Record<string, number>; recent: Failure[] };
  polls: PollView[];
  listeners: ListenerView[];
}

/** The sections of the view that events change (bits); state, queued and inFlight are compared instead. */
export const enum Section {
  minutes = 1,
  funnel = 2,
  failures = 4,
  polls = 8,
  listeners = 16,
  gauges = 32,
}

/** The sections in the order a view or a delta holds them. */
const SECTIONS = [Section.minutes, Section.funnel, Section.failures, Section.polls, Section.listeners] as const;

export type Delta = Partial<Omit<AccountView, 'problem'>> & { id: string; at: number; problem?: string | null };

/** A run that may hold a phone number: digits with +, spaces, brackets, dots or dashes between. */
export const NUMBER_RUN = new RegExp(`\\+?\\d[\\d\\s().-]{${PHONE_RULE.minDigits - 2},}\\d`, 'g');

/**
 * Phone numbers (a run of as many digits as the phone rule's shortest, or more) masked to their last 4
 * digits. The sidebar masks with the same rule (src/editor/kaleyra-editor.js).
 */
export function maskNumbers(text: string): string {
  return text.replace(NUMBER_RUN, (run) => {
    const digits = run.replace(/\D/g, '');
    return digits.length >= PHONE_RULE.minDigits ? `***${digits.slice(-4)}` : run;
  });
}

/** Distinct codes or states kept per count; more (a service or a caller gone wild) are counted as OTHER. */
export const MAX_KEYS = 100;
const CODE = /^[A-Za-z0-9_.-]{1,32}$/;

/**
 * Adds one to `key`'s count. A key seen for the first time is checked (a code or a state, not free text,
 * never a run of digits that could be a number) and, past MAX_KEYS, counted as OTHER: these become labels.
 */
function bump(counts: Map<string, number>, key: string): void {
  const n = counts.get(key);
  if (n !== undefined) {
    counts.set(key, n + 1);
    return;
  }
  const k = CODE.test(key) && !/\d{5}/.test(key) && counts.size < MAX_KEYS ? key : 'OTHER';
  counts.set(k, (counts.get(k) ?? 0) + 1);
}

export class AccountMonitor {
  readonly now: () => number;
  private readonly redact: (text: string) => string;
  /** Told when the view changes after it was last read as a delta (once until then). */
  onChange?: () => void;
  gauges: () => Gauges = () => ({ queued: 0, inFlight: 0, rateLimited: false, storeUp: true });

  // Requests: counts by interface and outcome ('ok' or the code), durations by interface.
  readonly requests: Record<Interface, Map<string, number>>;
  readonly durations: Record<Interface, Buckets>;
  // Sends (kaleyra-whatsapp msgs): by outcome; failures of every action node by code.
  sent = 0;
  failed = 0;
  /** Recipients of the accepted sends: the funnel's first step. */
  recipients = 0;
  readonly sendFailures = new Map<string, number>();
  readonly failuresByCode = new Map<string, number>();
  private readonly recent: Failure[] = [];
  // Delivery events by the status they carried; the funnel from the correlated ones.
  readonly deliveryEvents = new Map<string, number>();
  delivered = 0;
  read = 0;
  /** OVERDUE events of the delivery watchdog (core/watchdog.ts). */
  overdue = 0;
  readonly toDelivered = new Buckets(DELIVERED_BUCKETS);
  private readonly deliveredMs = new Float64Array(DELIVERED_SAMPLE);
  private deliveredKept = 0;
  private deliveredNext = 0;
  // The last hour, per minute: slot = minute % 60; slots passed over are cleared when the clock moves on.
  private minute: number;
  private readonly perMinute: Record<Interface, Uint32Array>;
  private readonly sentPerMinute = new Uint32Array(MINUTES);
  private readonly failedPerMinute = new Uint32Array(MINUTES);
  readonly polls = new Map<string, PollStats>();
  readonly listeners = new Map<string, ListenerStats>();
  readonly listenerTotals: Record<ListenerKind, ListenerTotals> = { callback: totals(), vmn: totals() };
  // Time spent rate limited.
  private rateLimitedMs = 0;
  private rateLimitedSince = 0;

  private changed = 0;
  private last?: { state: AccountState; problem?: string; queued: number; inFlight: number; minute: number };

  constructor(
    readonly info: AccountInfo,
    options: MonitorOptions = {},
  ) {
    this.now = options.now ?? (() => Date.now());
    this.redact = options.redact ?? ((t) => t);
    this.requests = byInterface(() => new Map());
    this.durations = byInterface(() => new Buckets(REQUEST_BUCKETS));
    this.perMinute = byInterface(() => new Uint32Array(MINUTES));
    this.minute = Math.floor(this.now() / MINUTE_MS);
  }

  /** A section changed: the first change after a delta tells onChange. */
  touch(section: Section): void {
    if (this.changed === 0) {
      this.changed = section;
      this.onChange?.();
    } else this.changed |= section;
  }

  /** One request (one attempt) to the service ended: `outcome` 'ok' or its error code. */
  request(iface: Interface, ms: number, outcome: string): void {
    bump(this.requests[iface], outcome);
    this.durations[iface].observe(ms / 1000);
    this.perMinute[iface][this.slot()]++;
    this.touch(Section.minutes);
  }

  /** A kaleyra-whatsapp msg was accepted by the service, for `recipients` recipients. */
  messageSent(recipients: number): void {
    this.sent++;
    this.recipients += recipients;
    this.sentPerMinute[this.slot()]++;
    this.touch(Section.minutes | Section.funnel);
  }

  /**
   * A msg of an action node failed with `code` (`send`: a kaleyra-whatsapp msg). The text is masked
   * here, on this rare path, so that no phone number or key is kept.
   */
  messageFailed(code: string, node: string, nodeName: string, message: string, send: boolean): void {
    bump(this.failuresByCode, code);
    if (send) {
      this.failed++;
      bump(this.sendFailures, code);
      this.failedPerMinute[this.slot()]++;
    }
    let text = maskNumbers(this.redact(message));
    if (text.length > MESSAGE_MAX) text = `${text.slice(0, MESSAGE_MAX)}…`;
    this.recent.push({ code: CODE.test(code) ? code : 'OTHER', node, nodeName, at: this.now(), message: text });
    if (this.recent.length > RECENT_FAILURES) this.recent.shift();
    this.touch(Section.failures | (send ? Section.minutes | Section.funnel : 0));
  }

  /**
   * A delivery event: the status it carried, whether it matched a send of ours, whether it came behind
   * the state already reached, and when its send was accepted. Only a correlated, in-order DELIVERED
   * (or READ) moves the funnel.
   */
  delivery(status: string, known: boolean, late: boolean, sentAt?: number): void {
    bump(this.deliveryEvents, status);
    if (known && !late) {
      if (status === 'DELIVERED') {
        this.delivered++;
        if (sentAt !== undefined) {
          const ms = Math.max(0, this.now() - sentAt);
          this.toDelivered.observe(ms / 1000);
          this.deliveredMs[this.deliveredNext] = ms;
          this.deliveredNext = (this.deliveredNext + 1) % DELIVERED_SAMPLE;
          if (this.deliveredKept < DELIVERED_SAMPLE) this.deliveredKept++;
        }
      } else if (status === 'READ') this.read++;
    }
    this.touch(Section.funnel);
  }

  /** The delivery watchdog emitted an OVERDUE: counted with the delivery events, and in the funnel. */
  overdueEmitted(): void {
    bump(this.deliveryEvents, 'OVERDUE');
    this.overdue++;
    this.touch(Section.funnel);
  }

  /** The stats of an inbox poller (made on first use). */
  poll(node: string, nodeName: string): PollStats {
    let p = this.polls.get(node);
    if (!p) {
      this.polls.set(node, (p = new PollStats(this, node, nodeName)));
      this.touch(Section.polls);
    }
    return p;
  }

  /** The stats of a listener node (made on first use). */
  listener(node: string, nodeName: string, kind: ListenerKind): ListenerStats {
    let l = this.listeners.get(node);
    if (!l) {
      this.listeners.set(node, (l = new ListenerStats(this, node, nodeName, kind, this.listenerTotals[kind])));
      this.touch(Section.listeners);
    }
    return l;
  }

  /** A node left the account: its poller and listener rows go (the account's totals stay). */
  forget(node: string): void {
    if (this.polls.delete(node)) this.touch(Section.polls);
    if (this.listeners.delete(node)) this.touch(Section.listeners);
  }

  /** The flow control's counts changed; `rateLimited` whether requests wait for the rate limit now. */
  flowChanged(rateLimited: boolean): void {
    if (rateLimited !== this.rateLimitedSince > 0) {
      const now = this.now();
      if (rateLimited) this.rateLimitedSince = now || 1;
      else {
        this.rateLimitedMs += now - this.rateLimitedSince;
        this.rateLimitedSince = 0;
      }
    }
    this.touch(Section.gauges);
  }

  /** Seconds spent rate limited so far. */
  rateLimitedSeconds(): number {
    return (this.rateLimitedMs + (this.rateLimitedSince > 0 ? this.now() - this.rateLimitedSince : 0)) / 1000;
  }

  /** The current minute's slot, clearing the slots of the minutes passed since the last event. */
  private slot(): number {
    const minute = Math.floor(this.now() / MINUTE_MS);
    if (minute !== this.minute) this.roll(minute);
    return minute % MINUTES;
  }

  private roll(minute: number): void {
    const passed = Math.min(MINUTES, Math.max(0, minute - this.minute));
    for (let i = 1; i <= passed; i++) {
      const s = (this.minute + i) % MINUTES;
      for (const name of INTERFACES) this.perMinute[name][s] = 0;
      this.sentPerMinute[s] = 0;
      this.failedPerMinute[s] = 0;
    }
    if (minute > this.minute) this.minute = minute;
  }

  private state(g: Gauges): AccountState {
    return g.problem ? 'unusable' : !g.storeUp ? 'storeDown' : g.rateLimited ? 'rateLimited' : 'ok';
  }

  minutes(): AccountView['minutes'] {
    this.slot();
    const first = this.minute - MINUTES + 1;
    const series = (a: Uint32Array) => Array.from({ length: MINUTES }, (_, i) => a[(first + i) % MINUTES]);
    return {
      start: first * MINUTE_MS,
      requests: byInterface((name) => series(this.perMinute[name])),
      sends: { sent: series(this.sentPerMinute), failed: series(this.failedPerMinute) },
    };
  }

  /** Median and 95th percentile (nearest rank) of the last DELIVERED_SAMPLE times to DELIVERED. */
  deliveredPercentiles(): { p50: number; p95: number } | null {
    if (this.deliveredKept === 0) return null;
    const sorted = Float64Array.from(this.deliveredMs.subarray(0, this.deliveredKept)).sort();
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    return { p50: at(0.5), p95: at(0.95) };
  }

  private section(bit: Section): Partial<AccountView> {
    switch (bit) {
      case Section.minutes:
        return { minutes: this.minutes() };
      case Section.funnel:
        return { funnel: { sent: this.recipients, delivered: this.delivered, read: this.read, failed: this.failed, overdue: this.overdue, deliveredMs: this.deliveredPercentiles() } };
      case Section.failures:
        return { failures: { byCode: Object.fromEntries(this.failuresByCode), recent: this.recent.map((f) => ({ ...f })) } };
      case Section.polls:
        return { polls: [...this.polls.values()].map((p) => p.view()) };
      case Section.listeners:
        return { listeners: [...this.listeners.values()].map((l) => l.view()) };
      default:
        return {};
    }
  }

  /** The whole view (the admin GET's snapshot). */
  view(): AccountView {
    const g = this.gauges();
    const state = this.state(g);
    const view = { ...this.info, state, ...(g.problem ? { problem: g.problem } : {}), queued: g.queued, inFlight: g.inFlight };
    for (const bit of SECTIONS) Object.assign(view, this.section(bit));
    return view as AccountView;
  }

  /**
   * The sections changed since the last delta (each whole), or undefined when nothing did. State,
   * problem, queued and inFlight are compared with what was last sent; minutes also go when the hour
   * moved on while it held counts.
   */
  delta(): Delta | undefined {
    const g = this.gauges();
    const state = this.state(g);
    const last = this.last;
    const bits = this.changed;
    this.changed = 0;
    if (!last) {
      // The first delta of an account is its whole view.
      this.slot();
      this.last = { state, problem: g.problem, queued: g.queued, inFlight: g.inFlight, minute: this.minute };
      return { at: this.now(), ...this.view() };
    }
    const out: Delta = { id: this.info.id, at: this.now() };
    let any = false;
    if (last.state !== state || last.problem !== g.problem) {
      Object.assign(out, { state, problem: g.problem ?? null });
      any = true;
    }
    if (last.queued !== g.queued) (out.queued = g.queued), (any = true);
    if (last.inFlight !== g.inFlight) (out.inFlight = g.inFlight), (any = true);
    this.slot();
    let sections = bits;
    if (last.minute !== this.minute && this.holdsMinutes()) sections |= Section.minutes;
    for (const bit of SECTIONS) {
      if (sections & bit) Object.assign(out, this.section(bit)), (any = true);
    }
    this.last = { state, problem: g.problem, queued: g.queued, inFlight: g.inFlight, minute: this.minute };
    return any ? out : undefined;
  }

  /** Whether the last hour holds any count (an idle hour need not be sent again as it moves on). */
  private holdsMinutes(): boolean {
    const any = (a: Uint32Array) => a.some((n) => n > 0);
    return any(this.sentPerMinute) || any(this.failedPerMinute) || INTERFACES.some((name) => any(this.perMinute[name]));
  }

  /** Whether the hour moved on since the last delta while it held counts (a delta would send them again). */
  minutesMoved(): boolean {
    return !!this.last && Math.floor(this.now() / MINUTE_MS) !== this.last.minute && this.holdsMinutes();
  }
}

function totals(): ListenerTotals {
  return { received: 0, correlated: 0, uncorrelated: 0, refused: { token: 0, tooLarge: 0, other: 0 } };
}

function byInterface<T>(make: (name: Interface) => T): Record<Interface, T> {
  return { whatsapp: make('whatsapp'), vmn: make('vmn'), 'call-status': make('call-status'), click2call: make('click2call') };
}
