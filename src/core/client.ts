// One account: its key, the four base URLs, the shared transport, flow control and retry policy.
// The config node owns one of these. Every call is validated first (bad input never waits in the
// queue), then queued, attempted and retried as its kind allows (docs/adr/0002-retry-policy.md).
import { Codes, ConfigError, TransportError } from './errors';
import { checkAccount, DEFAULT_BASE_URLS, URL_NAMES, type UrlName } from './account-config';
import { Transport, type TransportOptions } from './transport';
import { FlowControl, type FlowControlOptions } from './flow-control';
import { withRetry, type RetryOptions } from './retry';
import { perform, type Call, type CallContext, type Result } from './call';
import { messageCall, type MessageInput } from './messaging';
import { inboxCall, type InboxQuery } from './inbox';
import { callStatusCall, type CallStatusInput, type CallStatusMethod } from './call-status';
import { clickToCallCall, type ClickToCallInput } from './click-to-call';

export { checkAccount, DEFAULT_BASE_URLS } from './account-config';

export interface AccountConfig extends TransportOptions {
  /** The account's api_key: letters and digits, at least 8. */
  apiKey: string;
  /** Base URL of interface A (WhatsApp); default DEFAULT_BASE_URLS.messagingUrl. An empty string disables it. */
  messagingUrl?: string;
  /** Base URL of interface B (VMN inbox); no default. */
  vmnUrl?: string;
  /** Base URL of interface C (call status); default DEFAULT_BASE_URLS.obdUrl. */
  obdUrl?: string;
  /** Base URL of interface D (click-to-call); default DEFAULT_BASE_URLS.voiceUrl. */
  voiceUrl?: string;
  format?: CallContext['format'];
  flow?: FlowControlOptions;
  /** Retries of reads (inbox, call status). */
  readRetry?: RetryOptions;
  /** Retries of sends and click-to-call: only ever when the request provably did not arrive. */
  sendRetry?: RetryOptions;
  /** Told when each request (each attempt) to the service ends: its interface, duration and outcome ('ok' or the code). */
  observer?: RequestObserver;
}

export type Interface = 'whatsapp' | 'vmn' | 'call-status' | 'click2call';
export type RequestObserver = (iface: Interface, ms: number, outcome: string) => void;
const INTERFACE_OF: Record<UrlName, Interface> = { messagingUrl: 'whatsapp', vmnUrl: 'vmn', obdUrl: 'call-status', voiceUrl: 'click2call' };

/** Per call: a signal that cancels it, and a hook told once its input passed the checks and it waits for a slot. */
export interface CallOptions {
  signal?: AbortSignal;
  onQueued?: () => void;
  /**
   * Sends and click-to-call: the callback URL, asked for once the input passed its checks and before the
   * call is queued (a "Report to" record is written only for a call that will be made). It replaces any
   * callback of the input. A rejection ends the call, sending nothing.
   */
  callbackUrl?: () => Promise<string>;
}

/** One attempt, timed from when it holds its slot: what the service (and the network) took. */
function observed<T>(observer: RequestObserver, iface: Interface, attempt: () => Promise<T>): Promise<T> {
  const start = performance.now();
  return attempt().then(
    (result) => (observer(iface, performance.now() - start, 'ok'), result),
    (err: unknown) => {
      observer(iface, performance.now() - start, (err as { code?: string })?.code ?? 'ERROR');
      throw err;
    },
  );
}

export class KaleyraClient {
  private readonly transport: Transport;
  readonly flow: FlowControl;

  private readonly config: AccountConfig & Record<UrlName, string>;

  /** Throws a ConfigError when the settings cannot work (checkAccount). */
  constructor(config: AccountConfig) {
    this.config = { ...config, ...Object.fromEntries(URL_NAMES.map((n) => [n, config[n] ?? DEFAULT_BASE_URLS[n]])) } as AccountConfig & Record<UrlName, string>;
    checkAccount(this.config);
    this.transport = new Transport(config);
    this.flow = new FlowControl(config.flow);
  }

  private async execute<T>(url: UrlName, call: Call<T>, options: CallOptions | AbortSignal = {}): Promise<Result<T>> {
    const { signal, onQueued, callbackUrl } = options instanceof AbortSignal ? { signal: options, onQueued: undefined, callbackUrl: undefined } : options;
    try {
      const baseUrl = this.config[url];
      if (!baseUrl) throw new ConfigError(url, 'is not set in the kaleyra-config node');
      if (callbackUrl) call.setCallback?.(await callbackUrl());
      const ctx: CallContext = { transport: this.transport, apiKey: this.config.apiKey, baseUrl, format: this.config.format, signal };
      const policy = call.kind === 'read' ? this.config.readRetry : this.config.sendRetry;
      const retry = call.repeatable === false ? { ...policy, retries: 0 } : policy;
      onQueued?.();
      const observer = this.config.observer;
      const attempt = observer ? () => observed(observer, INTERFACE_OF[url], () => perform(ctx, call)) : () => perform(ctx, call);
      return await withRetry(call.kind, () => this.flow.run(attempt, signal), retry, signal);
    } finally {
      call.dispose?.();
    }
  }

  /** Interface A: sends one message (to one or several recipients). */
  async sendMessage(input: MessageInput, options?: CallOptions | AbortSignal) {
    const deferCallback = !(options instanceof AbortSignal) && options?.callbackUrl !== undefined;
    return this.execute('messagingUrl', await messageCall(input, this.config.format, deferCallback), options);
  }

  /** Interface B: reads the VMN inbox (filters optional). Values are checked before anything is sent. */
  async readInbox(query?: InboxQuery, options?: CallOptions | AbortSignal) {
    return this.execute('vmnUrl', inboxCall(query, this.config.format), options);
  }

  /** Interface C: the status of outbound calls (`voice.status`, or `voice.groupStatus`). */
  async callStatus(input: CallStatusInput, method?: CallStatusMethod, options?: CallOptions | AbortSignal) {
    return this.execute('obdUrl', callStatusCall(input, method, this.config.format), options);
  }

  /** Interface D: starts a click-to-call bridge call; the payload holds its id. */
  async startClickToCall(input: ClickToCallInput, options?: CallOptions | AbortSignal) {
    return this.execute('voiceUrl', clickToCallCall(input, this.config.format), options);
  }

  /** Fails what is still queued, waits for requests in flight, closes the connections. */
  close(): Promise<void> {
    this.flow.drain(new TransportError(Codes.CLOSED, 'the kaleyra-config node was stopped before the message was sent', { notSent: true }));
    return this.transport.close();
  }
}
