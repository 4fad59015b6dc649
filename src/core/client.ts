// One account: its key, the four base URLs, the shared transport, flow control and retry policy.
// The config node owns one of these. Every call is validated first (bad input never waits in the
// queue), then queued, attempted and retried as its kind allows (docs/adr/0002-retry-policy.md).
import { Codes, InputError, TransportError } from './errors';
import { Transport, type TransportOptions } from './transport';
import { FlowControl, type FlowControlOptions } from './flow-control';
import { withRetry, type RetryOptions } from './retry';
import { perform, type Call, type CallContext, type Result } from './context';
import { messageCall, type MessageInput } from './messaging';
import { inboxCall } from './inbox';
import { callStatusCall } from './call-status';
import { clickToCallCall } from './click-to-call';

export interface AccountConfig extends TransportOptions {
  apiKey: string;
  messagingUrl: string;
  vmnUrl: string;
  obdUrl: string;
  voiceUrl: string;
  format?: CallContext['format'];
  flow?: FlowControlOptions;
  /** Retries of reads (inbox, call status). */
  readRetry?: RetryOptions;
  /** Retries of sends and click-to-call: only ever when the request provably did not arrive. */
  sendRetry?: RetryOptions;
}

type UrlName = 'messagingUrl' | 'vmnUrl' | 'obdUrl' | 'voiceUrl';

export class KaleyraClient {
  private readonly transport: Transport;
  readonly flow: FlowControl;

  constructor(private readonly config: AccountConfig) {
    this.transport = new Transport(config);
    this.flow = new FlowControl(config.flow);
  }

  private async execute<T>(url: UrlName, call: Call<T>, signal?: AbortSignal): Promise<Result<T>> {
    try {
      const baseUrl = this.config[url];
      if (!baseUrl) throw new InputError(url, 'is not set in the kaleyra-config node');
      const ctx: CallContext = { transport: this.transport, apiKey: this.config.apiKey, baseUrl, format: this.config.format, signal };
      const policy = call.kind === 'read' ? this.config.readRetry : this.config.sendRetry;
      const retry = call.repeatable === false ? { ...policy, retries: 0 } : policy;
      return await withRetry(call.kind, () => this.flow.run(() => perform(ctx, call), signal), retry, signal);
    } finally {
      call.dispose?.();
    }
  }

  async sendMessage(input: MessageInput, signal?: AbortSignal) {
    return this.execute('messagingUrl', await messageCall(input, this.config.format), signal);
  }

  async readInbox(query: unknown, signal?: AbortSignal) {
    return this.execute('vmnUrl', inboxCall(query, this.config.format), signal);
  }

  async callStatus(input: unknown, method?: unknown, signal?: AbortSignal) {
    return this.execute('obdUrl', callStatusCall(input, method, this.config.format), signal);
  }

  async startClickToCall(input: unknown, signal?: AbortSignal) {
    return this.execute('voiceUrl', clickToCallCall(input, this.config.format), signal);
  }

  /** Fails what is still queued, waits for requests in flight, closes the connections. */
  close(): Promise<void> {
    this.flow.drain(new TransportError(Codes.CLOSED, 'the kaleyra-config node was stopped before the message was sent', { notSent: true }));
    return this.transport.close();
  }
}
