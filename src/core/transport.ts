// The one place that talks HTTP: an undici keep-alive pool per base URL origin, timeouts, the api_key
// parameter (added here and nowhere else, and redacted from every error text), bounded response reading,
// and the mapping of every failure to a TransportError with a stable code.
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import type { Pool } from 'undici';
import type FormDataType from 'form-data';
import { Codes, KaleyraError, ServiceError, TransportError } from './errors';
import { checkStatus, toEnvelope, type Envelope } from './decode';
import { quote, redactDeep, redactError } from './redact';

export interface TransportOptions {
  /** Milliseconds to establish a connection. */
  connectTimeout?: number;
  /** Milliseconds for the whole exchange, upload included. */
  timeout?: number;
  /** Keep-alive connections per base URL. */
  connections?: number;
  /** Largest response body read, in bytes. */
  maxResponseBytes?: number;
}

export interface ServiceRequest {
  baseUrl: string;
  /** Path below the base URL, e.g. `/api/v4/`. */
  path: string;
  method: 'GET' | 'POST';
  /** Query parameters (GET) or form fields (POST, sent as multipart); undefined values are left out. */
  params: Record<string, string | undefined>;
  /** File parts of a POST, after the fields. */
  files?: FilePart[];
  apiKey: string;
  signal?: AbortSignal;
}

export interface FilePart {
  field: string;
  value: Buffer | Readable;
  filename: string;
  /** Byte size when known, so the request carries a Content-Length. */
  knownLength?: number;
}

// undici and form-data are loaded with the first request, not when Node-RED starts: they are most of
// the package's start-up time (about 140 ms), and a flow may never send.
let lib: { Pool: typeof Pool; FormData: typeof FormDataType } | undefined;
const libs = () => {
  if (lib) return lib;
  const undici = require('undici') as typeof import('undici');
  return (lib = { Pool: undici.Pool, FormData: require('form-data') as typeof FormDataType });
};

const DEFAULTS: Required<TransportOptions> = {
  connectTimeout: 10_000,
  timeout: 30_000,
  connections: 16,
  maxResponseBytes: 4 * 1024 * 1024,
};

// Failures where the connection never came up: the request cannot have reached the service.
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

export class Transport {
  private readonly opts: Required<TransportOptions>;
  private readonly pools = new Map<string, Pool>();
  private readonly bases = new Map<string, { origin: string; prefix: string }>();
  private readonly cancels = new WeakMap<AbortSignal, Set<() => void>>();
  private closed = false;

  constructor(options: TransportOptions = {}) {
    this.opts = { ...DEFAULTS, ...stripUndefined(options) };
  }

  private pool(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new (libs().Pool)(origin, {
        connections: this.opts.connections,
        connect: { timeout: this.opts.connectTimeout },
        headersTimeout: this.opts.timeout,
        bodyTimeout: this.opts.timeout,
        keepAliveTimeout: 4_000,
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  /**
   * The cancels of the requests in flight under one caller signal. The signal gets one listener however
   * many requests share it (a node's does): no listener warning, and a Set is cheaper than an EventTarget.
   */
  private cancelsOf(signal: AbortSignal): Set<() => void> {
    let cancels = this.cancels.get(signal);
    if (!cancels) {
      const set = (cancels = new Set());
      this.cancels.set(signal, set);
      signal.addEventListener('abort', () => set.forEach((cancel) => cancel()), { once: true });
    }
    return cancels;
  }

  // The base URLs are the account's few settings: parsed once, not for every request.
  private base(baseUrl: string): { origin: string; prefix: string } {
    let base = this.bases.get(baseUrl);
    if (!base) this.bases.set(baseUrl, (base = parseBase(baseUrl)));
    return base;
  }

  /**
   * Sends one request, checks the status of the decoded answer and normalises it. Decoding and the
   * status check see the real answer; the key is masked only in what is returned or thrown (an answer
   * that echoes the key must not put it on a msg, an error or a log).
   */
  async call<T>(req: ServiceRequest, success: 'OK' | '200', normalise: (env: Envelope) => T): Promise<{ payload: T; envelope: Envelope }> {
    const body = await this.send(req);
    const echoed = !!req.apiKey && body.includes(req.apiKey);
    try {
      const envelope = checkStatus(toEnvelope(body, req.apiKey), success, req.apiKey);
      const result = { payload: normalise(envelope), envelope };
      return echoed ? redactDeep(result, req.apiKey) : result;
    } catch (err) {
      if (echoed && err instanceof ServiceError) redactDeep(err.envelope, req.apiKey);
      throw redactError(err, req.apiKey);
    }
  }

  /** Sends one request and returns the response text of a 2xx answer. */
  async send(req: ServiceRequest): Promise<string> {
    const base = this.base(req.baseUrl);
    const where = `${req.method} ${base.origin}${base.prefix}${req.path}`;
    if (this.closed) throw new TransportError(Codes.CLOSED, `${where}: the connection pool is closed`, { notSent: true });

    let path = base.prefix + req.path;
    let body: Readable | Buffer | undefined;
    let headers: Record<string, string> | undefined;
    if (req.method === 'POST' && !req.files?.length) {
      ({ body, headers } = this.encodeFields(req));
    } else if (req.method === 'POST') {
      // With a file the form is streamed: a file path or stream is never read into memory, and a
      // Buffer is written as it is, not copied into a bigger one.
      const form = formData(req);
      for (const f of req.files ?? []) form.append(f.field, f.value, { filename: f.filename, knownLength: f.knownLength });
      headers = form.getHeaders() as Record<string, string>;
      if (form.hasKnownLength()) headers['content-length'] = String(form.getLengthSync());
      // form-data is an old-style stream; undici wants a Readable. Errors of the parts travel along.
      const pass = new PassThrough();
      form.on('error', (err: Error) => pass.destroy(err));
      body = form.pipe(pass);
    } else {
      const query = new URLSearchParams();
      for (const [k, v] of Object.entries(req.params)) if (v !== undefined) query.append(k, v);
      query.append('api_key', req.apiKey);
      path += (path.includes('?') ? '&' : '?') + query.toString();
    }

    // The timeout and the caller's signal (a node closing) abort the request through one EventEmitter,
    // which undici takes as a signal: an AbortController, or AbortSignal.timeout() + any(), costs
    // microseconds each, a visible share of a send. The emitter has no `aborted` property: undici 8
    // treats any object with one as an AbortSignal (an EventTarget), so the state is kept here.
    const abort = new EventEmitter();
    let aborted = false;
    let timedOut = false;
    const cancel = () => {
      if (aborted) return;
      aborted = true;
      abort.emit('abort');
    };
    const timer = setTimeout(() => {
      timedOut = true;
      cancel();
    }, this.opts.timeout);
    const cancels = req.signal && this.cancelsOf(req.signal);
    if (req.signal?.aborted) cancel();
    else cancels?.add(cancel);
    try {
      // Aborted before it started (a node closing): undici would not hear an emit that came first.
      if (aborted) throw new Error('the request was aborted before it started');
      const res = await this.pool(base.origin).request({ method: req.method, path, headers, body, signal: abort });
      const text = await readBounded(res.body, res.headers['content-length'], this.opts.maxResponseBytes, where);
      if (res.statusCode < 200 || res.statusCode > 299) {
        const retryAfter = parseRetryAfter(res.headers['retry-after']);
        throw new TransportError(Codes.HTTP_STATUS, `${where}: the service answered HTTP ${res.statusCode}`, {
          statusCode: res.statusCode,
          retryAfter,
        });
      }
      return text;
    } catch (err) {
      if (body instanceof Readable) body.destroy();
      // form-data does not close its parts when the upload is cut off: a half-read stream (and its file
      // descriptor) would stay open until the process ends. It cannot be sent again anyway.
      for (const f of req.files ?? []) if (!Buffer.isBuffer(f.value)) f.value.destroy();
      throw redactError(toTransportError(err, where, base.origin, aborted, timedOut), req.apiKey);
    } finally {
      clearTimeout(timer);
      cancels?.delete(cancel);
    }
  }

  /**
   * The form of a POST of fields only (every text send): a few hundred bytes written out here as one
   * Buffer, one socket write. form-data would stream them part by part, or build them through a chain of
   * streams (docs/adr/0006-multipart.md; bench/multipart.js replaces this method on its own transports to
   * compare encoders).
   */
  private encodeFields(req: ServiceRequest): { body: Buffer; headers: Record<string, string> } {
    const boundary = `----kaleyra${randomUUID()}`;
    const body = fieldsForm(boundary, req.params, req.apiKey);
    return { body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(body.length) } };
  }

  async close(): Promise<void> {
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close().catch(() => p.destroy())));
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function parseBase(baseUrl: string): { origin: string; prefix: string } {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TransportError(Codes.INVALID_INPUT, `base URL "${baseUrl}" is not a URL`, { notSent: true });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TransportError(Codes.INVALID_INPUT, `base URL must be http or https, not ${url.protocol}`, { notSent: true });
  }
  return { origin: url.origin, prefix: url.pathname.replace(/\/+$/, '') };
}

/** A form-data form of the request's fields and key (its files are added by the caller). */
function formData(req: ServiceRequest): FormDataType {
  const form = new (libs().FormData)();
  // form-data draws each boundary from crypto.randomBytes; randomUUID() is as unpredictable and served
  // from a cached pool.
  form.setBoundary(`----kaleyra${randomUUID()}`);
  for (const [k, v] of Object.entries(req.params)) if (v !== undefined) form.append(k, v);
  form.append('api_key', req.apiKey);
  return form;
}

/**
 * A multipart form of text fields, the api_key last: the bytes form-data writes for the same appends
 * (test/transport.test.js compares them), without its per-part streams. Names are escaped as it does.
 */
export function fieldsForm(boundary: string, params: Record<string, string | undefined>, apiKey: string): Buffer {
  let text = '';
  const part = (name: string, value: string) => {
    const safe = /["\r\n]/.test(name) ? name.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22') : name;
    text += `--${boundary}\r\nContent-Disposition: form-data; name="${safe}"\r\n\r\n${value}\r\n`;
  };
  for (const name of Object.keys(params)) if (params[name] !== undefined) part(name, params[name]);
  part('api_key', apiKey);
  return Buffer.from(`${text}--${boundary}--\r\n`);
}

async function readBounded(body: AsyncIterable<Buffer> & { destroy(): void; text(): Promise<string> }, length: string | string[] | undefined, max: number, where: string): Promise<string> {
  // A declared length within the bound is all undici reads (it fails on a body of another length):
  // body.text() then saves the async iterator and the chunk list.
  if (typeof length === 'string' && /^\d+$/.test(length) && Number(length) <= max) return body.text();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      throw new TransportError(Codes.BAD_RESPONSE, `${where}: the answer is larger than ${max} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

function parseRetryAfter(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|EPROTO$|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_)/;

/**
 * What a failed connection means, said once, with the host: the short reason (the node's status, as core
 * http request shows ECONNREFUSED), and the sentence for the error text.
 */
export function networkFailure(code: string, origin: string, message: string): { reason: string; text: string } {
  const url = new URL(origin);
  const host = url.host;
  if (code === 'ECONNREFUSED') return { reason: 'refused', text: `connection refused by ${host} (nothing listens there, or a firewall refuses it)` };
  if (code === 'ENOTFOUND') return { reason: 'host not found', text: `host not found: ${url.hostname} (check the URL; DNS knows no such name)` };
  if (code === 'EAI_AGAIN') return { reason: 'DNS', text: `${url.hostname} could not be looked up: DNS did not answer (try again)` };
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return { reason: 'unreachable', text: `${host} cannot be reached from this machine (no route to it)` };
  if (TLS_CODES.test(code)) return { reason: 'TLS', text: `TLS failure with ${host}: ${quote(message, undefined, 200)}` };
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET') return { reason: 'reset', text: `the connection to ${host} broke before the answer came` };
  return { reason: code || 'failed', text: `the connection to ${host} failed: ${quote(message, undefined, 200)}` };
}

function toTransportError(err: unknown, where: string, origin: string, aborted: boolean, timedOut: boolean): KaleyraError {
  if (err instanceof KaleyraError) return err;
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string } };
  // Only string codes: some errors (a DOMException) carry a numeric code that is no error code of ours.
  const code = [e.code, e.cause?.code].find((c): c is string => typeof c === 'string') ?? '';
  if (timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    // Our own timer aborts with UND_ERR_ABORTED, which says nothing more than "timeout".
    const what = timedOut && code === 'UND_ERR_ABORTED' ? 'timeout' : code || 'timeout';
    return new TransportError(Codes.TIMEOUT, `${where}: no answer in time (${what})`, { notSent: NOT_SENT.has(code) });
  }
  if (aborted) return new TransportError(Codes.CLOSED, `${where}: cancelled`);
  const { reason, text } = networkFailure(code, origin, e.message ?? String(err));
  return new TransportError(Codes.NETWORK, `${where}: ${text}`, { notSent: NOT_SENT.has(code), reason, cause: code ? { code, host: new URL(origin).host } : undefined });
}
