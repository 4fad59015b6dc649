// The runtime of kaleyra-config: the hub of one account (docs/adr/0003-account-hub.md), as core's mqtt
// broker node is the hub of a connection. It owns the client (its pools, flow control, retries), the
// state store (correlation records, inbox poll state), the listeners' endpoints its sends report to, and
// the shutdown order. Nodes register with it and get its status pushed; they never read each other.
import { buildCallbackUrl } from '../core/click-to-call';
import type { CallEvent, DeliveryEvent } from '../core/callback-events';
import { KaleyraClient, type Interface } from '../core/client';
import { newRef } from '../core/correlation';
import { ConfigError, InputError } from '../core/errors';
import { escapeControl, redactText } from '../core/redact';
import { Reporter, type Reported } from '../core/reporting';
import type { RedisStore } from '../core/redis-store';
import { prefixed, type StateStore } from '../core/state-store';
import { accountSettings, shownSettings } from './account-settings';
import { AccountMonitor, Section, type Gauges } from '../core/monitor';
import { attachMonitor, detachMonitor } from './monitor-feed';
import { localBase } from './http';
import type { OverdueEvent } from '../core/watchdog';
import { adoptIfFree, bindToAccount, listenerOf, memoryStores, releaseAccount, unbindFromAccount, watchOf, type Endpoint, type RegisteredAccount } from './registry';
import type { Node, RED } from './red';
import { status } from './status';
import { CLOSE_LIMIT_MS } from './message-ledger';
import { Throttle } from './throttle';
import { acquireSimulator, addTrigger, releaseSimulator, removeTrigger, SIMULATOR_KEY } from './simulator-mode';


/** What the account pushes to its nodes. */
export interface AccountStatus {
  /** Set when the account cannot be used: the status text to show (every msg fails with CONFIG). */
  problem?: string;
  queued: number;
  inFlight: number;
  /** Requests wait for the rate limit, not for a free slot. */
  rateLimited: boolean;
  /** The state store failed on its last use: correlation of new sends may be lost. */
  stateDown: boolean;
}

export interface AccountUser {
  node: Node;
  onStatus?(status: AccountStatus): void;
  /** The callback-in node the user's sends report to. */
  reportTo?: string;
  /** A listener bound to this account: which one, and where it is reached. */
  listener?: { kind: 'callback' | 'vmn'; endpoint: Endpoint };
}

/** What a send that reports to a callback-in node gets from its account: the callback URL to send, and its record's handle. */
export interface Report extends Reported {
  url: string;
}

/** The account as its nodes see it: the methods of a deployed kaleyra-config node. */
export interface AccountApi {
  register(user: AccountUser): void;
  deregister(node: Node): void;
  /** The client; rejects with the ConfigError of an unusable account. */
  client(): Promise<KaleyraClient>;
  report(node: Node, callbackId: string, kind: 'message' | 'call', userRef: unknown, custom?: unknown): Promise<Report>;
  /** The state store of one inbox poller (keys scoped to it). */
  pollState(nodeId: string): StateStore;
  /** The account's monitor (issue 21), unless the account runs without (`monitor: false`). */
  monitor(): AccountMonitor | undefined;
}

export class Account implements AccountApi, RegisteredAccount {
  private readonly users = new Map<string, AccountUser>();
  private readonly ready: Promise<KaleyraClient>;
  private resolved?: KaleyraClient;
  private readonly problem?: ConfigError;
  private readonly simulator: boolean;
  private readonly publicUrl: string;
  private readonly stores: { correlation: StateStore; poll: StateStore };
  /** Keeps the "Report to" records in stores.correlation, the account's share (its own map, or corr: on Redis). */
  private readonly reporter: Reporter;
  private stateDown = false;
  private redis?: RedisStore;
  private onEmpty?: () => void;
  /** What the account view and the metrics show of it; told by hooks that only bump counters. */
  private readonly monitored?: AccountMonitor;
  /** Pushes the status to every user, at most a few times a second. */
  private readonly publish = new Throttle(() => {
    const status = this.status();
    for (const user of this.users.values()) user.onStatus?.(status);
  });

  constructor(
    private readonly RED: RED,
    private readonly node: Node,
    config: Record<string, unknown>,
  ) {
    let ready: Promise<KaleyraClient>;
    let stores: { correlation: StateStore; poll: StateStore } | undefined;
    let simulator = false;
    let publicUrl = '';
    if (config.monitor !== false) {
      const key = () => node.credentials?.apiKey;
      this.monitored = new AccountMonitor(
        { id: node.id, name: node.name ?? '', mode: config.simulator === true || config.simulator === 'true' ? 'simulator' : 'live', store: config.store === 'redis' ? 'redis' : 'memory', settings: shownSettings(config) },
        { redact: (text) => redactText(text, key()) },
      );
      this.monitored.gauges = () => this.gauges();
    }
    const monitor = this.monitored;
    try {
      const settings = accountSettings(config);
      ({ simulator, publicUrl } = settings);
      const { options } = settings;
      if (monitor) Object.assign(options, { observer: (iface: Interface, ms: number, outcome: string) => monitor.request(iface, ms, outcome) });
      if (settings.redisUrl) {
        this.redis = this.openRedis(settings.redisUrl, node);
        stores = { correlation: prefixed(this.redis, 'corr:'), poll: prefixed(this.redis, 'poll:') };
        if (options.flow.rate > 0) Object.assign(options.flow, { limiter: this.redis.limiter('rate', options.flow.rate) });
      }
      if (simulator) {
        ready = acquireSimulator(RED).then((urls) => new KaleyraClient({ apiKey: SIMULATOR_KEY, ...urls, ...options }));
      } else {
        ready = Promise.resolve(new KaleyraClient({ apiKey: node.credentials?.apiKey ?? '', ...settings.urls, ...options }));
      }
    } catch (err) {
      this.problem = err instanceof ConfigError ? err : new ConfigError('account', escapeControl((err as Error).message));
      // One log line, naming the setting (never its value): every msg through the account fails with it.
      node.error(`account unusable: ${this.problem.message}`);
      ready = Promise.reject(this.problem);
    }
    this.simulator = simulator;
    this.publicUrl = publicUrl;
    this.ready = ready.then((client) => {
      this.resolved = client;
      client.flow.onChange(() => {
        this.publish.request();
        monitor?.flowChanged(client.flow.rateLimited);
      });
      return client;
    });
    this.ready.catch(() => undefined); // reported per message, not as an unhandled rejection
    if (monitor) attachMonitor(RED, monitor);

    this.stores = stores ?? memoryStores(node.id);
    this.reporter = new Reporter(this.stores.correlation);
  }

  /**
   * The Redis store of a `store: redis` account (ADR 0004), loaded only then. Its keys start with
   * kaleyra:{<config node id>}: so that accounts, and unrelated flows, on one Redis never meet. While it
   * cannot be reached the nodes' status says so, and one log line (per outage) tells why.
   */
  private openRedis(redisUrl: string, node: Node): RedisStore {
    const { RedisStore: Store, checkRedisUrl } = require('../core/redis-store') as typeof import('../core/redis-store');
    const where = checkRedisUrl(redisUrl);
    return new Store({
      url: redisUrl,
      password: node.credentials?.redisPassword,
      prefix: `kaleyra:{${node.id}}:`,
      onState: (up, reason) => {
        if (up) node.log(`the shared state store (Redis at ${where.host}) is reachable`);
        else node.warn(`the shared state store (Redis at ${where.host}) cannot be reached (${reason ?? 'closed'}): sends go on, their delivery events may come uncorrelated; inbox polling pauses; reconnecting`);
        this.setStateDown(!up);
      },
    });
  }

  /** The methods nodes call, bound, to put on the config node. */
  api(): AccountApi {
    return {
      register: (user) => this.register(user),
      deregister: (node) => this.deregister(node),
      client: () => this.client(),
      report: (node, callbackId, kind, userRef, custom) => this.report(node, callbackId, kind, userRef, custom),
      pollState: (nodeId) => this.pollState(nodeId),
      monitor: () => this.monitored,
    };
  }

  register(user: AccountUser): void {
    this.users.set(user.node.id, user);
    if (user.reportTo) adoptIfFree(user.reportTo, this);
    if (user.listener) {
      bindToAccount(user.node.id, user.listener.endpoint, this);
      if (user.listener.kind === 'vmn' && this.simulator) addTrigger(this.RED, user.node.id, user.listener.endpoint);
    }
    user.onStatus?.(this.status());
  }

  deregister(node: Node): void {
    if (this.simulator) removeTrigger(node.id);
    unbindFromAccount(node.id, this);
    this.users.delete(node.id);
    this.monitored?.forget(node.id);
    if (this.users.size === 0) this.onEmpty?.();
  }

  client(): Promise<KaleyraClient> {
    return this.ready;
  }

  monitor(): AccountMonitor | undefined {
    return this.monitored;
  }

  private status(): AccountStatus {
    const flow = this.resolved?.flow;
    const queued = flow?.queued ?? 0;
    const inFlight = flow?.inFlight ?? 0;
    let problem: string | undefined;
    if (this.problem) problem = status.unusable(this.problem.setting, this.problem.setting === 'apiKey' && !this.node.credentials?.apiKey);
    return { problem, queued, inFlight, rateLimited: !!flow?.rateLimited, stateDown: this.stateDown };
  }

  /** What the monitor reads of the account when it is looked at. */
  private gauges(): Gauges {
    const flow = this.resolved?.flow;
    return { queued: flow?.queued ?? 0, inFlight: flow?.inFlight ?? 0, rateLimited: !!flow?.rateLimited, storeUp: !this.stateDown, problem: this.problem?.setting };
  }

  private publicBase(): string {
    if (this.publicUrl) return this.publicUrl;
    // The in-process simulator reaches this Node-RED on loopback.
    if (this.simulator) return localBase(this.RED);
    throw new ConfigError('publicUrl', 'is not set in the kaleyra-config node; the service needs it to call back');
  }

  /** The state store failed (or works again): one warning on the node concerned, and a status push. */
  private stateUsed(node: Node, err?: unknown, what = ''): void {
    if (err !== undefined && !this.stateDown) {
      node.warn(`the state store failed${what} (${escapeControl(err instanceof Error ? err.message : String(err))}): delivery and call events of sends may come without their id and ref until it works again`);
    } else if (err === undefined && this.stateDown) node.log('the state store works again');
    const down = err !== undefined;
    if (down !== this.stateDown) this.setStateDown(down);
  }

  /** Whether the state store is down: the nodes' status and the monitor's gauges say so. */
  private setStateDown(down: boolean): void {
    this.stateDown = down;
    this.publish.request();
    this.monitored?.touch(Section.gauges);
  }

  async report(node: Node, callbackId: string, kind: 'message' | 'call', userRef: unknown, custom?: unknown): Promise<Report> {
    const listener = listenerOf(callbackId);
    if (!listener) throw new InputError('reportTo', 'the kaleyra-callback node to report to is not deployed');
    if (listener.account && listener.account !== this) throw new InputError('reportTo', 'the kaleyra-callback node uses another kaleyra-config account: give both the same account');
    const ref = newRef();
    const local = this.publicBase() + listener.endpoint({ kref: ref });
    // Click-to-call fills {variables} into its callback URL (docs/service.md §6.2); messaging appends its
    // parameters (§6.1).
    const url = kind === 'call' ? buildCallbackUrl(local) : local;
    // A message reporting to a callback-in node with the delivery watchdog on gets deadlines (core/watchdog.ts).
    const watch = kind === 'message' ? watchOf(callbackId) : undefined;
    const reported = await this.reporter.track(ref, kind, userRef, typeof custom === 'string' ? custom : undefined, (err, step) => this.stateUsed(node, err, step), watch);
    return { url, ...reported };
  }

  pollState(nodeId: string): StateStore {
    return prefixed(this.stores.poll, `${nodeId}:`);
  }

  /**
   * Correlates a callback-in node's event with the send it belongs to (by the ref in its URL). When the
   * store fails, the event still goes out, uncorrelated (and the node warns once).
   */
  correlate(node: Node, event: DeliveryEvent | CallEvent, ref: string | undefined): Promise<DeliveryEvent | CallEvent> {
    const stats = this.monitored?.listener(node.id, node.name ?? '', 'callback');
    const seen = stats && ((known: boolean, late: boolean, sentAt?: number) => {
      stats.matched(known);
      if (event.event === 'delivery') this.monitored!.delivery(event.status, known, late, sentAt);
    });
    if (!ref) {
      seen?.(false, false);
      return Promise.resolve(event);
    }
    return this.reporter
      .correlate(event, ref, seen)
      .then(
        (e) => (this.stateUsed(node), e),
        (err: unknown) => (this.stateUsed(node, err, ' for a callback'), event),
      );
  }

  /** Emits the OVERDUE events of callback-in `node` (core/watchdog.ts); a store failure is warned as for callbacks. */
  overdue(node: Node, emit: (event: OverdueEvent) => void): Promise<void> {
    const counted = this.monitored ? (event: OverdueEvent) => (this.monitored!.overdueEmitted(), emit(event)) : emit;
    return this.reporter.overdue(node.id, counted).then(
      () => this.stateUsed(node),
      (err: unknown) => this.stateUsed(node, err, ' for the delivery watchdog'),
    );
  }

  /**
   * Closes last (ADR 0003): the account's nodes stop taking messages and let theirs finish (while they
   * keep ending, at most CLOSE_LIMIT_MS), then
   * deregister; once all have, or the grace time is over, what is still queued fails with CLOSED and the
   * connections close. A memory store outlives a redeploy, not the account's removal.
   */
  async close(removed: boolean): Promise<void> {
    this.publish.cancel();
    if (this.monitored) detachMonitor(this.monitored);
    if (this.users.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.onEmpty = resolve;
        timer = setTimeout(resolve, CLOSE_LIMIT_MS + 2_000);
      });
      clearTimeout(timer);
    }
    releaseAccount(this, this.node.id, removed);
    await this.ready.then((c) => c.close()).catch(() => undefined);
    await this.redis?.close();
    if (this.simulator && !this.problem) releaseSimulator();
  }
}

/** The account of a node's `account` setting, when that is a deployed kaleyra-config node. */
export function accountOf(RED: RED, id: unknown): AccountApi | null {
  const node = id ? (RED.nodes.getNode(String(id)) as Partial<AccountApi> | null) : null;
  return node && typeof node.register === 'function' ? (node as AccountApi) : null;
}
