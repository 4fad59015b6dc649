// The settings of a kaleyra-config node, read from the editor's config: numbers clamped to their ranges
// (an empty or unreadable one takes its default), URLs trimmed, the public URL checked. A pure function,
// tested alone (test/account-settings.test.js); the account (src/nodes/account.ts) builds on it.
import { DEFAULT_BASE_URLS, URL_NAMES, type UrlName } from '../core/account-config';
import type { AccountConfig } from '../core/client';
import { ConfigError } from '../core/errors';

/** Each number setting: default and range (what the editor's dialog offers too). */
export const NUMBER_SETTINGS = {
  timeout: { default: 30, min: 1, max: 600 },
  concurrency: { default: 8, min: 1, max: 256 },
  retries: { default: 2, min: 0, max: 10 },
  rateLimit: { default: 0, min: 0, max: 100_000 },
  queueSize: { default: 1000, min: 1, max: 100_000 },
} as const;

/** Where the Redis store connects when its URL is left empty. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export interface AccountSettings {
  simulator: boolean;
  /** Without trailing slashes; '' when not set. */
  publicUrl: string;
  /** The base URLs, defaults filled in (the VMN inbox has none). */
  urls: Pick<AccountConfig, 'messagingUrl' | 'vmnUrl' | 'obdUrl' | 'voiceUrl'>;
  /** What the client takes besides the key and the URLs. */
  options: Required<Pick<AccountConfig, 'timeout' | 'connections' | 'readRetry' | 'sendRetry'>> & { flow: { concurrency: number; rate: number; queueSize: number } };
  store: 'memory' | 'redis';
  /** Set for the Redis store: the URL as given, or the default. */
  redisUrl?: string;
}

/** A number setting within its range; an empty or unreadable value takes the default. */
export function numberSetting(name: keyof typeof NUMBER_SETTINGS, value: unknown): number {
  const { default: fallback, min, max } = NUMBER_SETTINGS[name];
  const n = Number(value);
  return value === '' || value === undefined || value === null || !Number.isFinite(n) ? fallback : Math.min(max, Math.max(min, n));
}

/** A base URL as set, else its default. */
const baseUrl = (config: Record<string, unknown>, name: UrlName) => String(config[name] ?? '').trim() || DEFAULT_BASE_URLS[name];
/** The Redis URL as set, else the default. */
const redisUrlOf = (config: Record<string, unknown>) => String(config.redisUrl ?? '').trim() || DEFAULT_REDIS_URL;

/** Reads a kaleyra-config node's settings; throws a ConfigError naming a public URL that cannot work. */
export function accountSettings(config: Record<string, unknown>): AccountSettings {
  const publicUrl = String(config.publicUrl ?? '').trim().replace(/\/+$/, '');
  if (publicUrl && !/^https?:\/\/[^/]/i.test(publicUrl)) throw new ConfigError('publicUrl', 'must be an http(s) URL at which the service reaches this Node-RED');
  const concurrency = numberSetting('concurrency', config.concurrency);
  const retries = numberSetting('retries', config.retries);
  const store = config.store === 'redis' ? 'redis' : 'memory';
  return {
    simulator: config.simulator === true || config.simulator === 'true',
    publicUrl,
    urls: { messagingUrl: baseUrl(config, 'messagingUrl'), vmnUrl: baseUrl(config, 'vmnUrl'), obdUrl: baseUrl(config, 'obdUrl'), voiceUrl: baseUrl(config, 'voiceUrl') },
    options: {
      timeout: numberSetting('timeout', config.timeout) * 1000,
      connections: concurrency,
      flow: { concurrency, rate: numberSetting('rateLimit', config.rateLimit), queueSize: numberSetting('queueSize', config.queueSize) },
      readRetry: { retries },
      sendRetry: { retries },
    },
    store,
    redisUrl: store === 'redis' ? redisUrlOf(config) : undefined,
  };
}

/**
 * The settings as the account view shows them: numbers as set (clamped), URLs as given, and for Redis its
 * URL with any password masked. Never the key nor the Redis password; it never throws.
 */
export function shownSettings(config: Record<string, unknown>): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const name of Object.keys(NUMBER_SETTINGS) as (keyof typeof NUMBER_SETTINGS)[]) shown[name] = numberSetting(name, config[name]);
  for (const name of URL_NAMES) shown[name] = maskedUrl(baseUrl(config, name));
  shown.publicUrl = maskedUrl(String(config.publicUrl ?? '').trim());
  if (config.store === 'redis') shown.redisUrl = maskedUrl(redisUrlOf(config));
  return shown;
}

/** A URL with its password (and user) masked; its host only when it cannot be parsed. */
function maskedUrl(value: string): string {
  if (!value) return '';
  try {
    const u = new URL(value);
    if (u.password) u.password = '***';
    else if (u.username) u.username = '***';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}
