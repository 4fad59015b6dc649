import type { FaultSettings } from './types';

export type FaultAction =
  | { kind: 'none' }
  | { kind: 'reset' }
  | { kind: 'stall'; ms: number }
  | { kind: 'error'; statusCode: 500 | 503 };

export const DEFAULT_STALL_MS = 60_000;

/**
 * Fault knobs of one endpoint. The rates share one draw per request, so they are exclusive fractions
 * of all requests (reset, then stall, then error); their sum must not exceed 1.
 */
export class FaultPlan {
  private settings: FaultSettings = {};
  private random: () => number;

  constructor(seed?: number) {
    this.random = seed === undefined ? Math.random : mulberry32(seed);
  }

  set(settings: FaultSettings): void {
    for (const name of ['errorRate', 'resetRate', 'stallRate'] as const) {
      const rate = settings[name];
      if (rate !== undefined && !(rate >= 0 && rate <= 1)) throw new RangeError(`${name} must be between 0 and 1`);
    }
    const total = (settings.errorRate ?? 0) + (settings.resetRate ?? 0) + (settings.stallRate ?? 0);
    if (total > 1 + 1e-9) throw new RangeError('errorRate + resetRate + stallRate must not exceed 1');
    for (const name of ['latencyMs', 'stallMs'] as const) {
      const ms = settings[name];
      if (ms !== undefined && !(ms >= 0 && Number.isFinite(ms))) throw new RangeError(`${name} must be a non-negative number`);
    }
    this.settings = { ...settings };
    if (settings.seed !== undefined) this.random = mulberry32(settings.seed);
  }

  get latencyMs(): number {
    return this.settings.latencyMs ?? 0;
  }

  decide(): FaultAction {
    const { resetRate = 0, stallRate = 0, errorRate = 0 } = this.settings;
    if (resetRate + stallRate + errorRate === 0) return { kind: 'none' };
    const r = this.random();
    if (r < resetRate) return { kind: 'reset' };
    if (r < resetRate + stallRate) return { kind: 'stall', ms: this.settings.stallMs ?? DEFAULT_STALL_MS };
    if (r < resetRate + stallRate + errorRate) return { kind: 'error', statusCode: this.random() < 0.5 ? 500 : 503 };
    return { kind: 'none' };
  }
}

/** Small seeded PRNG (mulberry32), so fault sequences repeat from run to run (the property tests use it too). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
