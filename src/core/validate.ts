// Small checks shared by the interfaces. Each throws an InputError naming the field, so a bad input is
// refused with a clear reason before anything is sent.
import { InputError } from './errors';
import { quote } from './redact';

/** Keys that would reach an object's prototype if copied. */
const POISON = new Set(['__proto__', 'constructor', 'prototype']);

export function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

export function checkKeys(field: string, value: Record<string, unknown>): void {
  for (const key of Object.keys(value)) {
    if (POISON.has(key)) throw new InputError(`${field}.${key}`, 'is not an allowed key');
  }
}

export function plainObject(field: string, value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Buffer.isBuffer(value)) {
    throw new InputError(field, `must be an object, not ${describe(value)}`);
  }
  checkKeys(field, value as Record<string, unknown>);
  return value as Record<string, unknown>;
}

/** A string (numbers are accepted and turned into strings), trimmed, within a length. */
export function text(field: string, value: unknown, opts: { max?: number; required?: boolean; trim?: boolean } = {}): string | undefined {
  if (isEmpty(value)) {
    if (opts.required) throw new InputError(field, 'is required');
    return undefined;
  }
  if (typeof value === 'number' && Number.isFinite(value)) value = String(value);
  if (typeof value !== 'string') throw new InputError(field, `must be a string, not ${describe(value)}`);
  const s = opts.trim === false ? value : value.trim();
  if (opts.required && !s) throw new InputError(field, 'is required');
  if (opts.max !== undefined) checkLength(field, s, opts.max);
  return s || undefined;
}

/**
 * Refuses a string of more than `max` characters (code points), with work bounded by `max`, not by the
 * string: a string has at least as many UTF-16 units as characters, so one within `max` units is not
 * counted; each character takes at most two units, so one of more than 2 × `max` units is refused without
 * counting (the message then gives the least it can be); in between it is counted once, at most 2 × `max`
 * units. `note` follows "characters long" in the message.
 */
export function checkLength(field: string, s: string, max: number, note = ''): void {
  if (s.length <= max) return;
  if (s.length > 2 * max) {
    throw new InputError(field, `is at least ${Math.ceil(s.length / 2)} characters long${note} (${s.length} UTF-16 code units); at most ${max} are allowed`);
  }
  const n = charCount(s);
  if (n > max) throw new InputError(field, `is ${n} characters long${note}; at most ${max} are allowed`);
}

/** Counts characters as a person does (code points, a lone surrogate as one), not UTF-16 units. */
export function charCount(s: string): number {
  let n = s.length;
  // Not `for (const c of s)`: it makes a string of each character. A surrogate pair is one character.
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** A whole number within a range; numeric strings are accepted. */
export function integer(field: string, value: unknown, min: number, max: number): number | undefined {
  if (isEmpty(value)) return undefined;
  const n = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new InputError(field, `must be a whole number, not ${describe(value)}`);
  if (n < min || n > max) throw new InputError(field, `must be between ${min} and ${max}, not ${n}`);
  return n;
}

/** integer(), written out as a request parameter. */
export function integerParam(field: string, value: unknown, min: number, max: number): string | undefined {
  const n = integer(field, value, min, max);
  return n === undefined ? undefined : String(n);
}

/** A decimal number within a range; numeric strings are accepted. */
export function decimal(field: string, value: unknown, min: number, max: number): number {
  // Each digit can be matched one way only: `\d+\.?\d*` could split a run of digits between \d+ and \d*
  // in every way, and took quadratic time to refuse a long one (tens of seconds for 200,000 digits and an `x`).
  const n = typeof value === 'string' && /^\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new InputError(field, `must be a number, not ${describe(value)}`);
  if (n < min || n > max) throw new InputError(field, `must be between ${min} and ${max}, not ${n}`);
  return n;
}

/** A boolean; the strings "true"/"false" are accepted. */
export function bool(field: string, value: unknown): boolean | undefined {
  if (isEmpty(value)) return undefined;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new InputError(field, `must be true or false, not ${describe(value)}`);
}

export function oneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): T | undefined {
  if (isEmpty(value)) return undefined;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new InputError(field, `must be one of ${allowed.join(', ')}, not ${describe(value)}`);
  }
  return value as T;
}

/** An http(s) URL. */
export function url(field: string, value: unknown): string | undefined {
  const s = text(field, value, { max: 2048 });
  if (s === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(s);
  } catch {
    throw new InputError(field, `must be an http(s) URL, not ${shown(s, 80)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new InputError(field, `must be an http(s) URL, not ${parsed.protocol}`);
  }
  return s;
}

/**
 * A list given as an array, a separated string, or a single value (numbers accepted, sent as strings).
 * Each item is checked by `item`; the list must not be empty nor longer than `max`. With `skipEmpty`, empty
 * entries of a string are left out (`"a, b,"` is two).
 */
export function list(field: string, value: unknown, separator: RegExp, max: number, item: (f: string, v: string) => string, skipEmpty = false): string[] | undefined {
  if (isEmpty(value)) return undefined;
  let items: unknown[];
  if (Array.isArray(value)) items = value;
  else if (typeof value === 'string') items = splitList(field, value, separator, max, skipEmpty);
  else if (typeof value === 'number') items = [value];
  else throw new InputError(field, `must be a string or an array, not ${describe(value)}`);
  if (items.length === 0) throw new InputError(field, 'must not be an empty list');
  if (items.length > max) throw new InputError(field, `has ${items.length} entries; at most ${max} are allowed`);
  return items.map((v, i) => {
    const f = items.length > 1 || Array.isArray(value) ? `${field}[${i}]` : field;
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) v = String(v);
    if (typeof v !== 'string') throw new InputError(f, `must be a number string, not ${describe(v)}`);
    return item(f, v.trim());
  });
}

const globalSeparators = new Map<RegExp, RegExp>();

/** Longer than any entry a list takes (a phone number with its formatting, ivr:<id>), spaces around it included. */
const ENTRY_SCAN = 1024;

/**
 * The entries of a separated string, found one by one, so that refusing a huge string reads only its
 * start: more than `max` entries (not counting empty ones with `skipEmpty`) are refused as soon as the one
 * over is found; an entry of more than ENTRY_SCAN characters ends the list there, cut, as its own check
 * refuses it (the rest of the string is not read).
 */
function splitList(field: string, value: string, separator: RegExp, max: number, skipEmpty: boolean): string[] {
  let re = globalSeparators.get(separator);
  if (!re) globalSeparators.set(separator, (re = new RegExp(separator.source, separator.flags.includes('g') ? separator.flags : `${separator.flags}g`)));
  const items: string[] = [];
  for (let start = 0; ; ) {
    const stop = Math.min(value.length, start + ENTRY_SCAN + 1);
    re.lastIndex = start;
    const m = re.exec(stop === value.length ? value : value.slice(0, stop));
    if (!m && stop < value.length) {
      items.push(value.slice(start, stop));
      return items;
    }
    const end = m ? m.index : value.length;
    const entry = value.slice(start, end);
    if (!skipEmpty || entry.trim() !== '') {
      items.push(entry);
      if (items.length > max) throw new InputError(field, `has more than ${max} entries; at most ${max} are allowed`);
    }
    if (!m) return items;
    start = end + Math.max(1, m[0].length);
  }
}

/** No number with its formatting is longer: a longer text is refused without reading it all. */
const PHONE_TEXT_MAX = 64;

/**
 * A phone number with country code: digits with an optional leading `+` (docs/service.md §1.6). Spaces, dashes,
 * dots and brackets inside it are formatting (`+91 98123-45678`, `(0091) 98123 45678`): taken out.
 */
const PHONE_DIGITS = { min: 6, max: 15 };
export const PHONE_RULE = {
  formatting: /[\s\-.()]/g,
  number: new RegExp(`^\\+?\\d{${PHONE_DIGITS.min},${PHONE_DIGITS.max}}$`),
  /** The fewest digits of a phone number: a run of as many is masked wherever numbers must not be shown. */
  minDigits: PHONE_DIGITS.min,
};

export function phone(field: string, value: string): string {
  const digits = value.length > PHONE_TEXT_MAX ? '' : value.replace(PHONE_RULE.formatting, '');
  if (!PHONE_RULE.number.test(digits)) {
    throw new InputError(field, `must be a phone number with country code: ${PHONE_DIGITS.min} to ${PHONE_DIGITS.max} digits, country code first (a leading + is allowed; spaces, dashes, dots and brackets are ignored), not ${shown(value)}`);
  }
  return digits;
}

/** A 10-digit number (click-to-call legs and caller id, docs/service.md §5.2). */
export function tenDigits(field: string, value: string): string {
  if (!/^\d{10}$/.test(value)) throw new InputError(field, `must be a 10-digit number, not ${shown(value, 40)}`);
  return value;
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (Buffer.isBuffer(value)) return 'a Buffer';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return shown(value);
  return typeof value === 'object' ? 'an object' : typeof value;
}

/**
 * A given text quoted in an error: cut, and its control characters escaped (errors reach the log). Only its
 * start is read: a huge value costs no more to quote than a short one.
 */
export function shown(value: string, max = 40): string {
  const head = value.length > 4 * max + 16 ? value.slice(0, 4 * max + 16) : value;
  const q = quote(head, undefined, max);
  return `"${head !== value && !q.endsWith('…') ? `${q}…` : q}"`;
}
