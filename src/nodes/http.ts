// The package's HTTP plumbing on Node-RED's express apps, for the listener nodes (src/nodes/listener.ts)
// and the admin routes (simulator control, Check account): request and app types, reading a small body,
// answering, and taking routes off again on close.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { shadows, type Params } from '../core/callback-events';
import type { RED } from './red';

/** Callbacks are a few short parameters; anything larger is not one. */
export const BODY_LIMIT = 16 * 1024;

export type Req = IncomingMessage & { body?: unknown; originalUrl?: string };
export type Next = (err?: unknown) => void;
export type Handler = (req: Req, res: ServerResponse, next: Next) => void;

export interface HttpApp {
  get(path: string, ...handlers: Handler[]): void;
  post(path: string, ...handlers: Handler[]): void;
  _router?: { stack: Array<{ route?: { stack: Array<{ handle: unknown }> } }> };
  router?: { stack: Array<{ route?: { stack: Array<{ handle: unknown }> } }> };
}

/** This Node-RED's own address on loopback (what the in-process simulator calls back on). */
export function localBase(RED: RED): string {
  return `${RED.settings.https ? 'https' : 'http'}://127.0.0.1:${Number(RED.settings.uiPort) || 1880}`;
}

export function queryOf(req: Req): URLSearchParams {
  return new URL(req.originalUrl ?? req.url ?? '/', 'http://localhost').searchParams;
}

/** Answers with a plain-text body. */
export function answer(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent) return;
  res.statusCode = status;
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  res.end(text);
}

/** Answers with a JSON body: the package's admin routes (simulator control, Check account). */
export function answerJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}

/** Reads a POST body up to BODY_LIMIT; an already parsed body (httpNodeMiddleware) is used as is. */
export async function readParams(req: Req, query = queryOf(req)): Promise<Params | 'too-large' | 'malformed'> {
  const params: Params = {};
  for (const [k, v] of query) if (!shadows(k)) params[k] = v;
  if (req.method !== 'POST') return params;

  let body: unknown = req.body;
  if (body === undefined || Buffer.isBuffer(body)) {
    if (Number(req.headers['content-length'] ?? 0) > BODY_LIMIT) return 'too-large';
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > BODY_LIMIT) return 'too-large';
      chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString('utf8').trim();
    const type = String(req.headers['content-type'] ?? '');
    if (!text) body = {};
    else if (type.includes('json') || text.startsWith('{')) {
      try {
        body = JSON.parse(text);
      } catch {
        return 'malformed';
      }
    } else body = Object.fromEntries(new URLSearchParams(text));
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'malformed';
  for (const [k, v] of Object.entries(body)) {
    if (shadows(k)) continue;
    if (v !== null && typeof v === 'object') return 'malformed';
    params[k] = v == null ? '' : String(v);
  }
  return params;
}

/** Takes the routes whose last handler is one of `handlers` off an express app. */
export function removeRoutes(app: HttpApp, handlers: readonly unknown[]): void {
  const router = app._router ?? app.router;
  if (!router) return;
  for (let i = router.stack.length - 1; i >= 0; i--) {
    if (router.stack[i]!.route?.stack.some((layer) => handlers.includes(layer.handle))) router.stack.splice(i, 1);
  }
}
