// Prometheus metrics of the deployed accounts (issue 21): GET /kaleyra/metrics on httpAdmin, behind the
// read permission of kaleyra-config, in the text exposition format. prom-client on a registry of the
// package's own: no default registry and no process metrics (Node-RED or FlowFuse collect those). Every
// value is read from the accounts' monitors at the scrape, so a msg pays nothing here; an account's series
// go with it (removed or redeployed: a redeployed one starts its counters again, which Prometheus reads as
// a counter reset). Labels are the account's name (else its id), interface, outcome or code, state, and a
// node's name (else its id): never a number, message id, ref or key.
import { Counter, Gauge, Registry } from 'prom-client';
import { INTERFACES, type AccountMonitor, type Buckets } from '../core/monitor';
import { monitors } from './monitor-feed';

export const registry = new Registry();

type Labels = Record<string, string>;
type Fill = (put: (labels: Labels, value: number) => void) => void;

/** name (else id) of each deployed account; a name two accounts share gets the id beside it. */
function accounts(): [string, AccountMonitor][] {
  const list = monitors();
  return list.map((m) => [uniqueLabel(m.info.name, m.info.id, list.map((o) => o.info.name)), m]);
}

function uniqueLabel(name: string, id: string, names: string[]): string {
  if (!name) return id;
  return names.filter((n) => n === name).length > 1 ? `${name} (${id})` : name;
}

/**
 * A counter or gauge whose values are read from the monitors at each scrape: emptied, then filled (inc on
 * an emptied series sets it, for both kinds).
 */
function collected(Metric: typeof Counter | typeof Gauge, name: string, help: string, labelNames: string[], fill: Fill): void {
  new (Metric as typeof Gauge)({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      fill((labels, value) => this.inc(labels, value));
    },
  });
}
const counter = (name: string, help: string, labelNames: string[], fill: Fill) => collected(Counter, name, help, labelNames, fill);
const gauge = (name: string, help: string, labelNames: string[], fill: Fill) => collected(Gauge, name, help, labelNames, fill);

/**
 * A histogram whose buckets the monitors keep (prom-client's Histogram can only be observed, one value at a
 * time, on the hot path): registered as the registry reads any metric, by its get().
 */
function histogram(name: string, help: string, fill: (put: (labels: Labels, b: Buckets) => void) => void): void {
  const get = async () => {
    const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
    fill((labels, b) => {
      b.bounds.forEach((le, i) => values.push({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: b.counts[i] }));
      values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: b.count });
      values.push({ metricName: `${name}_sum`, labels, value: b.sum });
      values.push({ metricName: `${name}_count`, labels, value: b.count });
    });
    return { name, help, type: 'histogram', values, aggregator: 'sum' };
  };
  registry.registerMetric({ name, help, type: 'histogram', aggregator: 'sum', get, reset() {} } as unknown as Counter);
}

const each = (fn: (account: string, m: AccountMonitor) => void) => {
  for (const [account, m] of accounts()) fn(account, m);
};

counter('kaleyra_requests_total', 'Requests (attempts) to the service, by interface and outcome (ok, or the error code)', ['account', 'interface', 'outcome'], (put) =>
  each((account, m) => {
    for (const iface of INTERFACES) for (const [outcome, n] of m.requests[iface]) put({ account, interface: iface, outcome }, n);
  }),
);
histogram('kaleyra_request_duration_seconds', 'Duration of the requests to the service, from holding a slot to the answer', (put) =>
  each((account, m) => {
    for (const iface of INTERFACES) if (m.durations[iface].count > 0) put({ account, interface: iface }, m.durations[iface]);
  }),
);
counter('kaleyra_sends_total', 'Messages of kaleyra-whatsapp nodes by outcome: sent (accepted by the service) or failed', ['account', 'outcome'], (put) =>
  each((account, m) => {
    put({ account, outcome: 'sent' }, m.sent);
    put({ account, outcome: 'failed' }, m.failed);
  }),
);
counter('kaleyra_send_failures_total', 'Failed messages of kaleyra-whatsapp nodes, by error code', ['account', 'code'], (put) =>
  each((account, m) => {
    for (const [code, n] of m.sendFailures) put({ account, code }, n);
  }),
);
counter('kaleyra_failures_total', 'Failed msgs of all the action nodes (whatsapp, inbox, call status, click to call), by error code', ['account', 'code'], (put) =>
  each((account, m) => {
    for (const [code, n] of m.failuresByCode) put({ account, code }, n);
  }),
);
counter('kaleyra_delivery_events_total', 'Delivery-status callbacks received, by the state they carried', ['account', 'state'], (put) =>
  each((account, m) => {
    for (const [state, n] of m.deliveryEvents) put({ account, state }, n);
  }),
);
histogram('kaleyra_time_to_delivered_seconds', 'Time from the service accepting a send to its correlated DELIVERED', (put) =>
  each((account, m) => {
    if (m.toDelivered.count > 0) put({ account }, m.toDelivered);
  }),
);
gauge('kaleyra_queue_depth', 'Requests waiting for a slot of the account', ['account'], (put) => each((account, m) => put({ account }, m.gauges().queued)));
gauge('kaleyra_in_flight', 'Requests of the account in flight', ['account'], (put) => each((account, m) => put({ account }, m.gauges().inFlight)));
counter('kaleyra_rate_limited_seconds_total', 'Time during which requests of the account waited for its rate limit', ['account'], (put) =>
  each((account, m) => put({ account }, m.rateLimitedSeconds())),
);
gauge('kaleyra_state_store_up', '1 while the state store (memory, or Redis) works, 0 once it failed', ['account'], (put) => each((account, m) => put({ account }, m.gauges().storeUp ? 1 : 0)));
gauge('kaleyra_account_usable', '0 when the account is unusable (a setting; every msg fails with CONFIG), else 1', ['account'], (put) =>
  each((account, m) => put({ account }, m.gauges().problem ? 0 : 1)),
);
gauge('kaleyra_poll_lease_held', '1 while this replica polls the inbox for the node (holds the lease), 0 on standby', ['account', 'node'], (put) =>
  each((account, m) => {
    const polls = [...m.polls.values()];
    for (const p of polls) put({ account, node: uniqueLabel(p.nodeName, p.node, polls.map((o) => o.nodeName)) }, p.role === 'polling' || p.role === 'failed' ? 1 : 0);
  }),
);
counter('kaleyra_inbox_records_total', 'Inbox records emitted by the polling of the node', ['account', 'node'], (put) =>
  each((account, m) => {
    const polls = [...m.polls.values()];
    for (const p of polls) put({ account, node: uniqueLabel(p.nodeName, p.node, polls.map((o) => o.nodeName)) }, p.emitted);
  }),
);
counter('kaleyra_listener_requests_total', 'Requests to the callback-in and vmn-in listeners: accepted, or refused (bad token, too large, other)', ['account', 'kind', 'result'], (put) =>
  each((account, m) => {
    for (const kind of ['callback', 'vmn'] as const) {
      const t = m.listenerTotals[kind];
      put({ account, kind, result: 'accepted' }, t.received);
      put({ account, kind, result: 'refused_token' }, t.refused.token);
      put({ account, kind, result: 'refused_too_large' }, t.refused.tooLarge);
      put({ account, kind, result: 'refused_other' }, t.refused.other);
    }
  }),
);
counter('kaleyra_listener_events_total', 'Events of callback-in nodes, correlated with a send of ours or not', ['account', 'result'], (put) =>
  each((account, m) => {
    put({ account, result: 'correlated' }, m.listenerTotals.callback.correlated);
    put({ account, result: 'uncorrelated' }, m.listenerTotals.callback.uncorrelated);
  }),
);

/** The scrape: the text exposition of every deployed account's metrics. */
export function scrape(): Promise<string> {
  return registry.metrics();
}
