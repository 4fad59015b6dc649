/** Public types of the service simulator (interfaces A–D, docs/service.md). */

/** The key a simulator built without `keys` accepts (here, not in server.ts, so it loads without the simulator). */
export const DEMO_KEY = 'simulatorkey';

export type Endpoint = 'messaging' | 'vmn' | 'obd' | 'voice';
export type KeyState = 'active' | 'suspended' | 'nocredit';

export interface SimulatorOptions {
  /** Interface to listen on; default '127.0.0.1'. */
  host?: string;
  /** Port; default 0 (a free port chosen by the OS). */
  port?: number;
  /** Known api keys and their account state; default { 'simulatorkey': 'active' }. */
  keys?: Record<string, KeyState>;
  /** Any non-empty key is an active account (the config node's simulator mode); default false. */
  acceptAnyKey?: boolean;
  /** Delays before the SENT, DELIVERED and READ callbacks, each counted from the previous one; default [50, 100, 100]. */
  deliveryDelaysMs?: [number, number, number];
  /** Recipients for whom only SENT is reported; default: numbers ending in '0000'. */
  stopAtSent?: (mobile: string) => boolean;
  /** Where injected SMS are forwarded (docs/service.md §6.3); may hold {from}, {message}, {ts}. */
  vmnTriggerUrl?: string;
  /** Keep `requests` (default true). */
  logRequests?: boolean;
  /** Bound of each kept list (requests, messages, callbacks, inbox, calls); default 100000, oldest dropped first. */
  maxRecords?: number;
  /** Click-to-call clock: simulated seconds × timeScale = real seconds; default 0.01 (delay=10 → 100 ms). */
  timeScale?: number;
  /** Click-to-call leg timing in real ms: [ring until a leg answers, first-leg answer until the end]; default [50, 150]. */
  clickToCallTimingsMs?: [number, number];
  /** Seed of the fault PRNG for repeatable runs (also settable per endpoint in setFaults). */
  seed?: number;
}

export interface SimulatorUrls {
  messagingUrl: string;
  vmnUrl: string;
  obdUrl: string;
  voiceUrl: string;
}

export interface FaultSettings {
  /** Delay before answering, ms. */
  latencyMs?: number;
  /** Fraction of requests answered with HTTP 500 or 503. */
  errorRate?: number;
  /** Fraction of requests whose socket is destroyed without an answer. */
  resetRate?: number;
  /** Fraction of requests held open for stallMs, then reset. */
  stallRate?: number;
  /** Default 60000. */
  stallMs?: number;
  /** Reseeds this endpoint's PRNG. */
  seed?: number;
}

export interface FileInfo {
  filename: string;
  size: number;
  sha256: string;
}

/** One request received on interfaces A–D; the api key is never kept. */
export interface ReceivedRequest {
  endpoint: Endpoint;
  /** HTTP method. */
  method: string;
  path: string;
  /** Query parameters without api_key. */
  query: Record<string, string>;
  /** Effective parameters (query, then form fields over them) without api_key. */
  fields: Record<string, string>;
  /** Whether an api_key was present (its value is not kept). */
  hasApiKey: boolean;
  file?: FileInfo;
  /** The fault injected into this request, if any. */
  fault?: 'reset' | 'stall' | 'http500' | 'http503';
  /** Epoch ms. */
  at: number;
}

export interface SentMessage {
  from: string;
  type: string;
  /** The parsed `body` field. */
  body: Record<string, unknown>;
  recipients: { id: string; mobile: string }[];
  file?: FileInfo;
  at: number;
}

/** An inbox record (docs/service.md §3.3). */
export interface InboxRecord {
  recipient: string;
  keyword: string;
  sender: string;
  message: string;
  operator: string;
  circle: string;
  response: string;
  received_time: string;
}

export interface SmsInput {
  from: string;
  message: string;
  /** VMN number; default DEFAULT_VMN. */
  number?: string;
  /** Default: the first word of the message, upper-cased (how keyword VMNs match). */
  keyword?: string;
  /** Unix seconds (ms accepted); default now. */
  ts?: number;
}

/** A call status record (docs/service.md §4.3). */
export interface CallRecord {
  id: string;
  mobile: string;
  status: string;
  senttime: string;
}

export interface CallInput {
  id?: string;
  mobile: string;
  status?: string;
  senttime?: string;
}

/** One outgoing callback (delivery report, click-to-call event, VMN forward) and how it went. */
export interface CallbackAttempt {
  kind: 'delivery' | 'click2call' | 'vmn';
  url: string;
  /** HTTP status of the receiver's answer; absent when the request failed. */
  statusCode?: number;
  error?: string;
  at: number;
}
