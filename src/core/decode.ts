// Response decoding: whatever format the service answers in (JSON, JSONP, XML, PHP-serialized, the voice
// APIs' plain text), the result is one envelope { status, message, data, ...rest } with status a string.
// Anything that cannot be decoded becomes a TransportError BAD_RESPONSE, never an uncaught exception.
import type { XMLParser } from 'fast-xml-parser';
import { Codes, ServiceError, TransportError } from './errors';
import { phpUnserialize } from './php-unserialize';
import { hasKeyRun, maskKeyRuns, quote } from './redact';

export interface Envelope {
  status: string;
  message: string;
  data?: unknown;
  [field: string]: unknown;
}

// Entity processing is off (no DOCTYPE expansion, so no entity bombs); the five predefined entities and
// character references are decoded by hand below, which cannot expand recursively. Built with the first
// XML answer, not when Node-RED starts (JSON is the default format).
let xmlParser: XMLParser | undefined;
function xml(): XMLParser {
  if (xmlParser) return xmlParser;
  // Not `new (require(...) as ...).XMLParser()`: TypeScript 7.0 drops those parentheses when it emits.
  const { XMLParser: Parser } = require('fast-xml-parser') as typeof import('fast-xml-parser');
  return (xmlParser = new Parser({
    ignoreAttributes: true,
    ignoreDeclaration: true,
    ignorePiTags: true,
    processEntities: false,
    htmlEntities: false,
    parseTagValue: false, // ids and numbers such as 0091... stay strings
    trimValues: true,
    tagValueProcessor: (_name: string, value: string) => decodeXmlEntities(value),
  }));
}

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeXmlEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#\d{1,7}|amp|lt|gt|quot|apos);/g, (whole, ref: string) => {
    if (ref[0] !== '#') return PREDEFINED[ref] ?? whole;
    const cp = ref[1] === 'x' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return cp <= 0x10ffff ? String.fromCodePoint(cp) : whole;
  });
}

function dropProto(key: string, value: unknown): unknown {
  return key === '__proto__' ? undefined : value;
}

/**
 * Nesting bound of JSON answers: deeper ones would overflow the stack later (normalisers, msg cloning).
 * It used to be the reviver's recursion that stopped them, at whatever depth the stack allowed.
 */
const MAX_JSON_DEPTH = 1000;

/**
 * JSON.parse, bounded in depth, with `__proto__` keys dropped. A reviver makes parsing several times
 * slower, so it runs only when the text could hold such a key: written out, or hidden in a \u escape.
 */
function parseJson(text: string): unknown {
  // Each level takes a character: a text shorter than the bound cannot exceed it, and needs no scan.
  if (text.length > MAX_JSON_DEPTH && jsonDepth(text) > MAX_JSON_DEPTH) throw new SyntaxError(`JSON nested more than ${MAX_JSON_DEPTH} deep`);
  return text.includes('__proto__') || text.includes('\\u') ? JSON.parse(text, dropProto) : JSON.parse(text);
}

/** The deepest nesting of objects and arrays in a JSON text (brackets inside strings do not count). */
function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

function fromXml(text: string): unknown {
  const doc = xml().parse(text, true) as Record<string, unknown>;
  const roots = Object.keys(doc);
  if (roots.length !== 1) throw new SyntaxError('XML document must have one root element');
  const root = doc[roots[0]!];
  return typeof root === 'object' && root !== null ? root : {};
}

const MAX_TEXT_DEPTH = 64;

// The voice APIs answer in plain text when no format is given. Our reading: `key: value` or
// `key=value` lines (or one `&`-joined line), dotted keys for nesting (data.id, data.0.status).
function fromText(text: string): unknown {
  const pairs: Array<[string, string]> = [];
  // Only a one-line `key=value&...` answer is URL-encoded; a `key: value` line keeps its `%`, `+` and `&`.
  const query = !text.includes('\n') && /^[A-Za-z0-9_.]+=/.test(text);
  const lines = query ? text.split('&') : text.split(/\r?\n/);
  for (const line of lines) {
    if (!line.trim()) continue;
    const m = /^\s*([A-Za-z0-9_.]+)\s*(?::|=)\s?(.*)$/.exec(line);
    if (!m) throw new SyntaxError('plain-text answer is not key/value lines');
    const value = query ? decodeURIComponent(m[2]!.replace(/\+/g, ' ')) : m[2]!.trim();
    pairs.push([m[1]!, value]);
  }
  const out: Record<string, unknown> = {};
  for (const [path, value] of pairs) {
    const keys = path.split('.');
    // Bounded like the PHP and XML readers: a key of thousands of dots would build an object so deep
    // that the normalisers' JSON.stringify (and Node-RED's message cloning) overflow the stack.
    if (keys.length > MAX_TEXT_DEPTH) throw new SyntaxError('plain-text key nested too deeply');
    if (keys.includes('__proto__')) continue;
    let node = out;
    for (const key of keys.slice(0, -1)) {
      const next = node[key];
      node = (typeof next === 'object' && next !== null ? next : (node[key] = {})) as Record<string, unknown>;
    }
    node[keys[keys.length - 1]!] = value;
  }
  return out;
}

/** Decodes a response body of any of the service's formats into a plain value. */
export function decodeBody(body: string): unknown {
  const text = body.trim();
  if (!text) throw new SyntaxError('empty body');
  const first = text[0];
  if (first === '{' || first === '[') return parseJson(text);
  if (first === '<') return fromXml(text);
  if (/^[aO]:\d+:/.test(text)) return phpUnserialize(text);
  const jsonp = /^[A-Za-z_$][\w$.]*\s*\(([\s\S]*)\)\s*;?$/.exec(text);
  if (jsonp) return parseJson(jsonp[1]!);
  return fromText(text);
}

/**
 * Decodes a body into an envelope; BAD_RESPONSE when it is not one. The error quotes the start of the
 * answer (a proxy's page, say), with the key masked and control characters escaped.
 */
export function toEnvelope(body: string, apiKey?: string): Envelope {
  const snippet = (text: string) => quote(text, apiKey);
  let value: unknown;
  try {
    value = decodeBody(body);
  } catch (err) {
    throw new TransportError(Codes.BAD_RESPONSE, `the service's answer could not be decoded (${snippet((err as Error).message)}): "${snippet(body)}"`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TransportError(Codes.BAD_RESPONSE, `the service's answer is not an object: "${snippet(body)}"`);
  }
  const env = value as Record<string, unknown>;
  const status = env.status;
  if (typeof status !== 'string' && typeof status !== 'number') {
    throw new TransportError(Codes.BAD_RESPONSE, `the service's answer has no status: "${snippet(body)}"`);
  }
  // In place: env is a fresh object of the decoder's, and a copy would cost more than the rest of this.
  env.status = String(status).trim();
  env.message = messageText(env.message);
  return env as Envelope;
}

// String() of a decoded object can throw (a `toString` key that is not a function): objects are shown as JSON.
function messageText(message: unknown): string {
  if (message == null) return '';
  if (typeof message !== 'object') return String(message);
  try {
    return JSON.stringify(message);
  } catch {
    return '';
  }
}

/**
 * Throws the service's error when the envelope's status is not the interface's success status. Its code
 * is the status when that looks like a code (A404, E423, 500), and its text the service's message,
 * quoted as any outside text is. A status holding 6 or more of the key's characters in a row (an answer
 * echoing part of the request) is no code: SERVICE_ERROR, with the status quoted, masked, in the text; the
 * envelope the error carries has them masked too, in its status and message.
 */
export function checkStatus(env: Envelope, success: 'OK' | '200', apiKey?: string): Envelope {
  if (env.status.toUpperCase() === success) return env;
  const code = /^[A-Za-z0-9_.-]{1,32}$/.test(env.status) && !hasKeyRun(env.status, apiKey) ? env.status : 'SERVICE_ERROR';
  const status = code === env.status ? '' : ` (status "${quote(env.status, apiKey, 40)}")`;
  const message = quote(env.message, apiKey, 500) + status;
  env.status = maskKeyRuns(env.status, apiKey);
  env.message = maskKeyRuns(env.message, apiKey);
  throw new ServiceError(code, message, env);
}

/** Lists a value that may be one record, an array, or an object keyed by index ("0", "1", ...). */
export function asList(value: unknown): Record<string, unknown>[] {
  if (value == null || value === '') return [];
  if (Array.isArray(value)) return value.filter(isRecord);
  if (!isRecord(value)) return [];
  const keys = Object.keys(value);
  if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k))) {
    return keys.sort((a, b) => Number(a) - Number(b)).map((k) => value[k]).filter(isRecord);
  }
  return [value];
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A record with every named field as a string ('' when missing); every other field is kept as it came. */
export function recordOf<F extends string>(raw: Record<string, unknown>, fields: readonly F[]): { [K in F]: string } & { [field: string]: unknown } {
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f] = fieldText(raw[f]);
  for (const [k, val] of Object.entries(raw)) if (!(k in out) && k !== '__proto__') out[k] = val;
  return out as { [K in F]: string } & { [field: string]: unknown };
}

// Not String(): it throws on a decoded object whose `toString` key is not a function ({"id":{"toString":1}}).
function fieldText(value: unknown): string {
  if (value == null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
