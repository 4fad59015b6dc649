import { EventEmitter } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { CallbackSender } from './callback-sender';
import { CallLog } from './calls';
import { startClickToCall, validateClickToCall, type CallContext } from './click2call';
import { FaultPlan, type FaultAction } from './faults';
import { render, resolveFormat, type Format } from './formats';
import { Inbox, vmnTriggerUrl } from './inbox';
import { MAX_FILE_BYTES, newMessageId, reportDelivery, submittedReply, validateSend } from './messaging';
import { errorReply, invalid, rejection, Rejection, type Reply } from './reply';
import { readBody, type RequestBody } from './request-body';
import type {
  CallbackAttempt,
  CallInput,
  CallRecord,
  Endpoint,
  FaultSettings,
  FileInfo,
  InboxRecord,
  KeyState,
  ReceivedRequest,
  SentMessage,
  SimulatorOptions,
  SimulatorUrls,
  SmsInput,
} from './types';
import { DEMO_KEY } from './types';

export { DEMO_KEY };

const SMALL_BODY_LIMIT = 1024 * 1024;

interface InterfaceSpec {
  endpoint: Endpoint;
  /** Path of the operation; the base URL is the part before the version segment. */
  path: string;
  methods: readonly string[];
  formats: readonly Format[];
  defaultFormat: Format;
  bodyLimit: number;
}

/** The four interfaces (docs/service.md §8.1); each under its own prefix so the four base URLs differ. */
const INTERFACES: readonly InterfaceSpec[] = [
  // Slack over 64 MB for the other form fields, so a file just over the limit is still parsed and named.
  { endpoint: 'messaging', path: '/messaging/api/v4/', methods: ['wa'], formats: ['json', 'xml'], defaultFormat: 'json', bodyLimit: MAX_FILE_BYTES + SMALL_BODY_LIMIT },
  { endpoint: 'vmn', path: '/vmn/v1/', methods: ['inbox'], formats: ['json', 'php', 'xml'], defaultFormat: 'json', bodyLimit: SMALL_BODY_LIMIT },
  { endpoint: 'obd', path: '/obd/api/v1/', methods: ['voice.status', 'voice.groupStatus'], formats: ['text', 'json', 'jsonp', 'xml', 'php'], defaultFormat: 'text', bodyLimit: SMALL_BODY_LIMIT },
  { endpoint: 'voice', path: '/voice/v1/', methods: ['dial.click2call'], formats: ['text', 'json', 'xml'], defaultFormat: 'text', bodyLimit: SMALL_BODY_LIMIT },
];
const ENDPOINTS: readonly Endpoint[] = INTERFACES.map((i) => i.endpoint);

/** An ID3 header and nothing else: what /sim/recordings serves for {recordpath}. */
const SILENT_RECORDING = Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0]);

export declare interface Simulator {
  on(event: 'request', listener: (request: ReceivedRequest) => void): this;
  on(event: 'callback', listener: (attempt: CallbackAttempt) => void): this;
  on(event: 'sms', listener: (record: InboxRecord) => void): this;
  once(event: 'request', listener: (request: ReceivedRequest) => void): this;
  once(event: 'callback', listener: (attempt: CallbackAttempt) => void): this;
  once(event: 'sms', listener: (record: InboxRecord) => void): this;
}

/**
 * A local stand-in for the service's four interfaces over real HTTP (docs/service.md §8).
 * Events: 'request' (ReceivedRequest), 'callback' (CallbackAttempt), 'sms' (InboxRecord).
 */
export class Simulator extends EventEmitter {
  /** Where injected SMS are forwarded (docs/service.md §6.3); may be changed at any time. */
  vmnTriggerUrl: string | undefined;

  private readonly host: string;
  private readonly port: number;
  private readonly keys: Map<string, KeyState>;
  private readonly acceptAnyKey: boolean;
  private readonly deliveryDelaysMs: readonly [number, number, number];
  private readonly stopAtSent: (mobile: string) => boolean;
  private readonly logRequests: boolean;
  private readonly maxRecords: number;
  private readonly timeScale: number;
  private readonly clickToCallTimingsMs: readonly [number, number];

  private readonly faults: Record<Endpoint, FaultPlan>;
  private readonly inboxStore: Inbox;
  private readonly callLog: CallLog;
  private readonly requestLog: ReceivedRequest[] = [];
  private readonly messageLog: SentMessage[] = [];
  private readonly callbackLog: CallbackAttempt[] = [];
  private sender: CallbackSender;
  private server: http.Server | undefined;
  private readonly sockets = new Set<Socket>();
  private origin: string | undefined;

  constructor(opts: SimulatorOptions = {}) {
    super();
    this.host = opts.host ?? '127.0.0.1';
    this.port = opts.port ?? 0;
    this.keys = new Map(Object.entries(opts.keys ?? { [DEMO_KEY]: 'active' }));
    this.acceptAnyKey = opts.acceptAnyKey ?? false;
    this.deliveryDelaysMs = opts.deliveryDelaysMs ?? [50, 100, 100];
    this.stopAtSent = opts.stopAtSent ?? ((mobile) => mobile.endsWith('0000'));
    this.vmnTriggerUrl = opts.vmnTriggerUrl;
    this.logRequests = opts.logRequests ?? true;
    this.maxRecords = opts.maxRecords ?? 100_000;
    this.timeScale = opts.timeScale ?? 0.01;
    this.clickToCallTimingsMs = opts.clickToCallTimingsMs ?? [50, 150];
    if (!(this.timeScale > 0)) throw new RangeError('timeScale must be above 0');
    if (![...this.deliveryDelaysMs, ...this.clickToCallTimingsMs].every((ms) => ms >= 0)) throw new RangeError('delays must not be negative');
    // Each endpoint draws from its own sequence, so faults on one do not shift another's.
    const seeded = (i: number): number | undefined => (opts.seed === undefined ? undefined : opts.seed + i);
    this.faults = Object.fromEntries(ENDPOINTS.map((e, i) => [e, new FaultPlan(seeded(i))])) as Record<Endpoint, FaultPlan>;
    this.inboxStore = new Inbox(this.maxRecords);
    this.callLog = new CallLog(this.maxRecords);
    this.sender = this.newSender();
  }

  async start(): Promise<SimulatorUrls> {
    if (this.server) return this.urls;
    const server = http.createServer((req, res) => {
      this.handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('Internal Server Error');
      });
    });
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    const { port } = server.address() as AddressInfo;
    this.origin = `http://${this.host.includes(':') ? `[${this.host}]` : this.host}:${port}`;
    return this.urls;
  }

  /** Closes the server, every socket and callback, and cancels pending timers; start() may be called again. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    const sender = this.sender;
    this.sender = this.newSender();
    await Promise.all([closed, sender.close()]);
  }

  get urls(): SimulatorUrls {
    if (!this.origin || !this.server) throw new Error('the simulator is not started');
    return {
      messagingUrl: `${this.origin}/messaging`,
      vmnUrl: `${this.origin}/vmn`,
      obdUrl: `${this.origin}/obd`,
      voiceUrl: `${this.origin}/voice`,
    };
  }

  /** Requests received on interfaces A–D, oldest first (without api keys). */
  get requests(): readonly ReceivedRequest[] {
    return this.requestLog;
  }

  /** Accepted sends of interface A, with the id generated for each recipient. */
  get messages(): readonly SentMessage[] {
    return this.messageLog;
  }

  /** Callbacks made (delivery reports, click-to-call events, VMN forwards) and how each went. */
  get callbacks(): readonly CallbackAttempt[] {
    return this.callbackLog;
  }

  /** Resolves once no callback is scheduled or in flight (a test's proof that no more will come). */
  callbacksIdle(): Promise<void> {
    return this.sender.idle();
  }

  get inbox(): readonly InboxRecord[] {
    return this.inboxStore.records;
  }

  get calls(): readonly CallRecord[] {
    return this.callLog.all;
  }

  /** Adds, changes (state) or removes (undefined) a known api key. */
  setKey(key: string, state: KeyState | undefined): void {
    if (state) this.keys.set(key, state);
    else this.keys.delete(key);
  }

  /** Replaces the fault knobs of one endpoint, or of all four; `{}` clears them. */
  setFaults(endpoint: Endpoint | 'all', faults: FaultSettings): void {
    const targets = endpoint === 'all' ? ENDPOINTS : [endpoint];
    if (!targets.every((e) => ENDPOINTS.includes(e))) throw new RangeError(`unknown endpoint ${endpoint}`);
    // As in the constructor, one seed gives each endpoint its own sequence.
    targets.forEach((e, i) => this.faults[e].set(faults.seed === undefined ? faults : { ...faults, seed: faults.seed + i }));
  }

  /** Puts an incoming SMS in the inbox (interface B) and forwards it to vmnTriggerUrl (docs/service.md §6.3). */
  injectSms(sms: SmsInput): InboxRecord {
    const { record, ts } = this.inboxStore.add(sms);
    this.emit('sms', record);
    if (this.vmnTriggerUrl) void this.sender.get('vmn', vmnTriggerUrl(this.vmnTriggerUrl, { from: record.sender, message: record.message, ts }));
    return record;
  }

  /** Adds an outbound call record for interface C. */
  addCall(record: CallInput): CallRecord {
    return this.callLog.add(record);
  }

  /** Empties the logs, the inbox and the call records (keys and faults stay). */
  clear(): void {
    for (const list of [this.requestLog, this.messageLog, this.callbackLog]) list.length = 0;
    this.inboxStore.clear();
    this.callLog.clear();
  }

  private newSender(): CallbackSender {
    return new CallbackSender((attempt) => {
      this.keep(this.callbackLog, attempt);
      this.emit('callback', attempt);
    });
  }

  private keep<T>(list: T[], item: T): void {
    list.push(item);
    if (list.length > this.maxRecords) list.splice(0, list.length - this.maxRecords);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const spec = INTERFACES.find((i) => url.pathname === i.path || url.pathname === i.path.slice(0, -1));
    if (!spec) return this.handleSim(req, res, url);

    const query = Object.fromEntries(url.searchParams);
    const body = await readBody(req, spec.bodyLimit);
    const params = { ...query, ...body.fields };
    const faults = this.faults[spec.endpoint];
    const fault = faults.decide();
    this.log(spec.endpoint, req, url.pathname, query, params, body.file, faultLabel(fault));

    if (faults.latencyMs > 0) await this.sender.sleep(faults.latencyMs);
    switch (fault.kind) {
      case 'reset':
        req.socket.destroy();
        return;
      case 'stall':
        this.sender.after(fault.ms, () => req.socket.destroy());
        return;
      case 'error':
        // An overloaded service says when to come back: 503 carries Retry-After (the request was not
        // processed, so even a send may be retried then); 500 says nothing.
        res.writeHead(fault.statusCode, { 'content-type': 'text/plain', ...(fault.statusCode === 503 && { 'retry-after': '1' }) });
        res.end(http.STATUS_CODES[fault.statusCode]);
        return;
    }

    let reply: Reply;
    try {
      reply = this.answer(spec, params, body);
    } catch (err) {
      if (!(err instanceof Rejection)) throw err;
      reply = errorReply(err);
    }
    const rendered = render(reply, resolveFormat(params.format, spec.formats, spec.defaultFormat), params.callback);
    // Errors are HTTP 200 too: the code is in the body's status (docs/service.md §1.4).
    res.writeHead(200, { 'content-type': rendered.contentType, 'content-length': Buffer.byteLength(rendered.body) });
    res.end(rendered.body);
  }

  private answer(spec: InterfaceSpec, params: Record<string, string>, body: RequestBody): Reply {
    // An oversized body is dropped unread, so its api_key (if it was there) is unknown: the size is the answer.
    if (body.tooLarge) throw spec.endpoint === 'messaging' ? rejection('E504', 'file size exceeds 64 MB') : invalid('the request body is too large');
    if (body.unreadable) throw invalid(body.unreadable);
    this.authorize(spec.endpoint, params.api_key);
    if (!spec.methods.includes(params.method)) throw invalid(`method must be ${spec.methods.join(' or ')}`);
    switch (spec.endpoint) {
      case 'messaging':
        return this.send(params, body.file);
      case 'vmn':
        return this.inboxStore.query(params);
      case 'obd':
        return this.callLog.lookup(params, params.method === 'voice.groupStatus');
      case 'voice':
        return startClickToCall(validateClickToCall(params), this.callContext());
    }
  }

  /**
   * The key (docs/service.md §8.2): unknown A401 ("Api Key not found"), suspended A404; no credit A402 on sends
   * only.
   */
  private authorize(endpoint: Endpoint, key: string | undefined): void {
    const state = !key ? undefined : this.acceptAnyKey ? 'active' : this.keys.get(key);
    if (!state) throw rejection('A401', 'Api Key not found');
    if (state === 'suspended') throw rejection('A404', 'account suspended');
    if (state === 'nocredit' && endpoint === 'messaging') throw rejection('A402', 'Insufficient credits');
  }

  private send(params: Record<string, string>, file: FileInfo | undefined): Reply {
    const valid = validateSend(params, file);
    const recipients = valid.recipients.map((mobile) => ({ id: newMessageId(), mobile }));
    this.keep(this.messageLog, { from: valid.from, type: valid.type, body: valid.body, recipients, file, at: Date.now() });
    if (valid.callback) {
      for (const { mobile } of recipients) reportDelivery(this.sender, valid.callback, mobile, this.deliveryDelaysMs, this.stopAtSent(mobile));
    }
    return submittedReply(recipients);
  }

  private callContext(): CallContext {
    return {
      sender: this.sender,
      calls: this.callLog,
      timeScale: this.timeScale,
      ringMs: this.clickToCallTimingsMs[0],
      talkMs: this.clickToCallTimingsMs[1],
      recordingUrl: (id) => `${this.origin}/sim/recordings/${id}.mp3`,
    };
  }

  private log(
    endpoint: Endpoint,
    req: IncomingMessage,
    path: string,
    query: Record<string, string>,
    params: Record<string, string>,
    file: FileInfo | undefined,
    fault: ReceivedRequest['fault'],
  ): void {
    const entry: ReceivedRequest = {
      endpoint,
      method: req.method ?? 'GET',
      path,
      query: withoutKey(query),
      fields: withoutKey(params),
      hasApiKey: Boolean(params.api_key),
      at: Date.now(),
    };
    if (file) entry.file = file;
    if (fault) entry.fault = fault;
    if (this.logRequests) this.keep(this.requestLog, entry);
    this.emit('request', entry);
  }

  /** Injection and helper routes for flows and other processes: POST /sim/sms, POST /sim/calls, GET /sim/recordings/<id>.mp3. */
  private async handleSim(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const route = `${req.method} ${url.pathname.replace(/\/$/, '')}`;
    if (route === 'POST /sim/sms' || route === 'POST /sim/calls') {
      const body = await readBody(req, SMALL_BODY_LIMIT);
      if (body.tooLarge || body.unreadable) return sendJson(res, 400, { status: 'E400', message: body.unreadable ?? 'the request body is too large' });
      const params = { ...Object.fromEntries(url.searchParams), ...body.fields };
      try {
        const data =
          route === 'POST /sim/sms'
            ? this.injectSms({ from: params.from, message: params.message, number: params.number, keyword: params.keyword, ts: params.ts ? Number(params.ts) : undefined })
            : this.addCall({ id: params.id, mobile: params.mobile, status: params.status, senttime: params.senttime });
        return sendJson(res, 200, { status: '200', message: 'OK', data });
      } catch (err) {
        return sendJson(res, 400, { status: 'E400', message: err instanceof Error ? err.message : String(err) });
      }
    }
    const recording = /^\/sim\/recordings\/([\w-]+)\.mp3$/.exec(url.pathname);
    if (req.method === 'GET' && recording && this.callLog.all.some((c) => c.id === recording[1])) {
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': SILENT_RECORDING.length });
      res.end(SILENT_RECORDING);
      return;
    }
    req.resume();
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('Not Found');
  }
}

function faultLabel(fault: FaultAction): ReceivedRequest['fault'] {
  if (fault.kind === 'none') return undefined;
  return fault.kind === 'error' ? `http${fault.statusCode}` : fault.kind;
}

function withoutKey(params: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).filter(([k]) => k !== 'api_key'));
}

function sendJson(res: ServerResponse, statusCode: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(statusCode, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
