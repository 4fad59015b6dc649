// One account: its key, the four base URLs and the shared transport. The config node owns one of these.
import { InputError } from './errors';
import { Transport, type TransportOptions } from './transport';
import type { CallContext } from './context';
import { sendMessage, type MessageInput } from './messaging';
import { readInbox } from './inbox';
import { callStatus } from './call-status';
import { startClickToCall } from './click-to-call';

export interface AccountConfig extends TransportOptions {
  apiKey: string;
  messagingUrl: string;
  vmnUrl: string;
  obdUrl: string;
  voiceUrl: string;
  format?: CallContext['format'];
}

export class KaleyraClient {
  private readonly transport: Transport;

  constructor(private readonly config: AccountConfig) {
    this.transport = new Transport(config);
  }

  private ctx(url: 'messagingUrl' | 'vmnUrl' | 'obdUrl' | 'voiceUrl', signal?: AbortSignal): CallContext {
    const baseUrl = this.config[url];
    if (!baseUrl) throw new InputError(url, 'is not set in the kaleyra-config node');
    return { transport: this.transport, apiKey: this.config.apiKey, baseUrl, format: this.config.format, signal };
  }

  async sendMessage(input: MessageInput, signal?: AbortSignal) {
    return sendMessage(this.ctx('messagingUrl', signal), input);
  }

  async readInbox(query: unknown, signal?: AbortSignal) {
    return readInbox(this.ctx('vmnUrl', signal), query);
  }

  async callStatus(input: unknown, method?: unknown, signal?: AbortSignal) {
    return callStatus(this.ctx('obdUrl', signal), input, method);
  }

  async startClickToCall(input: unknown, signal?: AbortSignal) {
    return startClickToCall(this.ctx('voiceUrl', signal), input);
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}
