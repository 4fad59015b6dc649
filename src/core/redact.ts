// Text from outside (a service's answer, a stranger's request) quoted into an error or a log line, and
// the api key kept out of everything that reaches a msg, an error or a log. Redaction applies only to
// what is shown: statuses are checked and answers decoded on the real text (a short key must not turn
// "OK" into "O***").

const MASK = '***';
/** Shortest run of the key's characters that is masked in a quote. */
const EDGE_RUN = 6;

// C0 and C1 controls, DEL, line and paragraph separators and the bidi overrides: characters that can
// move a terminal's cursor, ring it, or make a log line read other than it is.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** Control characters written as `\u001b`, so a quoted text cannot drive the operator's terminal. */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Keys at least this long are masked wherever they occur; shorter ones (refused by the config node) only as a whole word. */
const SECRET_LENGTH = 8;
let pattern: { apiKey: string; re: RegExp } | undefined;

/**
 * Every occurrence of the key masked. A key of 8 or more characters cannot turn up by chance and is masked
 * even run into other text; a shorter one only where it stands alone (`api_key=K&`, `"K"`), so that an
 * answer merely containing it (the status "OK" with the key "K", an id) is left as it is.
 */
export function redactText(text: string, apiKey: string | undefined): string {
  if (!apiKey || !text.includes(apiKey)) return text;
  if (apiKey.length >= SECRET_LENGTH) return text.split(apiKey).join(MASK);
  if (pattern?.apiKey !== apiKey) {
    pattern = { apiKey, re: new RegExp(`(?<![A-Za-z0-9])${apiKey.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9])`, 'g') };
  }
  return text.replace(pattern.re, MASK);
}

/**
 * A quote of outside text for an error or a log: whitespace runs flattened, the key masked before the
 * cut, then any run of ≥ 6 of the key's characters masked too (a cut, a decoder's own excerpt or the
 * text itself can split the key: its first or last characters must not show either), then control
 * characters escaped.
 */
export function quote(text: string, apiKey: string | undefined, max = 120): string {
  let flat = redactText(text.replace(/\s+/g, ' ').trim(), apiKey);
  const cut = flat.length > max;
  if (cut) flat = flat.slice(0, max);
  return escapeControl(maskKeyRuns(flat, apiKey)) + (cut ? '…' : '');
}

let grams: { apiKey: string; list: string[] } | undefined;

/**
 * Whether `text` holds a run of ≥ 6 of the key's characters (what quote() masks): one native search per
 * 6-character piece of the key, not a slice per position of the text.
 */
export function hasKeyRun(text: string, apiKey: string | undefined): boolean {
  if (!apiKey || apiKey.length < EDGE_RUN || text.length < EDGE_RUN) return false;
  if (grams?.apiKey !== apiKey) grams = { apiKey, list: Array.from({ length: apiKey.length - EDGE_RUN + 1 }, (_, i) => apiKey.slice(i, i + EDGE_RUN)) };
  return grams.list.some((g) => text.includes(g));
}

/** Every run of ≥ 6 of the key's characters masked, and nothing else changed. */
export function maskKeyRuns(text: string, apiKey: string | undefined): string {
  if (!apiKey || !hasKeyRun(text, apiKey)) return text;
  let out = '';
  for (let i = 0; i < text.length; ) {
    let end = i;
    if (i + EDGE_RUN <= text.length && apiKey.includes(text.slice(i, i + EDGE_RUN))) {
      end = i + EDGE_RUN;
      while (end < text.length && apiKey.includes(text.slice(i, end + 1))) end++;
    }
    if (end > i) {
      out += MASK;
      i = end;
    } else out += text[i++];
  }
  return out;
}

/** The key masked in every string and every property name inside a decoded value (in place). */
export function redactDeep<T>(value: T, apiKey: string | undefined): T {
  if (!apiKey) return value;
  if (typeof value === 'string') return redactText(value, apiKey) as T;
  // A loop, not recursion: an answer nested as deep as the decoders accept must not overflow the stack.
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null) continue;
    const record = node as Record<string, unknown>; // arrays too, by index
    for (const k of Object.keys(record)) {
      const v = record[k];
      if (typeof v === 'object' && v !== null) pending.push(v);
      const safe = typeof v === 'string' ? redactText(v, apiKey) : v;
      if (k.includes(apiKey)) {
        delete record[k];
        record[redactText(k, apiKey)] = safe;
      } else if (safe !== v) record[k] = safe;
    }
  }
  return value;
}

/** The key masked in an error's text and stack, wherever it came from. */
export function redactError<T>(err: T, apiKey: string | undefined): T {
  if (err instanceof Error && apiKey && err.message.includes(apiKey)) {
    err.message = redactText(err.message, apiKey);
    if (err.stack) err.stack = redactText(err.stack, apiKey);
  }
  return err;
}
