// What an account's settings are before a client is built from them: the default base URLs, the form of a
// key, and the check of both. No transport here: the editor's rules are built from this module
// (src/nodes/editor-rules.ts) by a script that runs on any Node.js.
import { ConfigError } from './errors';

/**
 * The base URLs of Kaleyra's public documentation and clients (docs/service.md §1.1). The VMN inbox host
 * is not published: the account's own must be given to read the inbox.
 */
export const DEFAULT_BASE_URLS = {
  messagingUrl: 'https://global.kaleyra.com',
  vmnUrl: '',
  obdUrl: 'https://obd.kaleyra.com',
  voiceUrl: 'https://api-voice.kaleyra.com',
} as const;

/** An api key: letters and digits (docs/service.md §1.2); fewer than 8 is no real key (and could turn up inside an answer by chance). */
export const API_KEY_PATTERN = /^[A-Za-z0-9]{8,256}$/;

export type UrlName = 'messagingUrl' | 'vmnUrl' | 'obdUrl' | 'voiceUrl';
export const URL_NAMES: readonly UrlName[] = ['messagingUrl', 'vmnUrl', 'obdUrl', 'voiceUrl'];

/**
 * The account's settings, checked before anything is sent: a ConfigError names the first unusable one.
 * A base URL left empty only disables its interface.
 */
export function checkAccount(config: { apiKey: string } & Partial<Record<UrlName, string>>): void {
  if (!config.apiKey) throw new ConfigError('apiKey', 'is missing: enter the api key of the account (or tick simulator)');
  if (!API_KEY_PATTERN.test(config.apiKey)) {
    throw new ConfigError('apiKey', `must be the account's key: letters and digits only, at least 8 (this one has ${config.apiKey.length} characters${/[^A-Za-z0-9]/.test(config.apiKey) ? ', not all letters or digits' : ''})`);
  }
  for (const name of URL_NAMES) {
    const value = config[name];
    if (!value) continue;
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      // reported below
    }
    if (url?.protocol !== 'http:' && url?.protocol !== 'https:') throw new ConfigError(name, `must be an http(s) URL, not ${shownUrl(value)}`);
  }
}

const shownUrl = (value: string) => JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
