// What the two listener nodes share: a GET and POST route on Node-RED's own HTTP server (so
// httpNodeRoot, TLS, httpNodeAuth and httpNodeMiddleware apply, as for the core http-in node), the
// token check, a small body limit, and the route removed again on close (no duplicates on redeploy).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { KaleyraError } from '../core/errors';
import { shadows, type Params } from '../core/callbacks';
import { statusText, type Node, type NodeMessage, type RED } from './red';

/** Callbacks are a few short parameters; anything larger is not one. */
export const BODY_LIMIT = 16 * 1024;

export type Req = IncomingMessage & { body?: unknown; originalUrl?: string };
type Next = (err?: unknown) => void;
export type Handler = (req: Req, res: ServerResponse, next: Next) => void;

export interface HttpApp {
  get(path: string, ...handlers: Handler[]): void;
  post(path: string, ...handlers: Handler[]): void;
  _router?: { stack: Array<{ route?: { stack: Array<{ handle: unknown }> } }> };
  router?: { stack: Array<{ route?: { stack: Array<{ handle: unknown }> } }> };
}

/** Where a listener is reached: path and query of its URL below the public base (httpNodeRoot included). */
export type Endpoint = (extra?: Record<string, string>) => string;

/** This Node-RED's own address on loopback (what the in-process simulator calls back on). */
export function localBase(RED: RED): string {
  return `${RED.settings.https ? 'https' : 'http'}://127.0.0.1:${Number(RED.settings.uiPort) || 1880}`;
}

/** Normalises the node's path: one leading slash, no trailing one. */
export function routePath(path: unknown): string {
  const p = String(path ?? '').trim();
  return ('/' + p.replace(/^\/+/, '')).replace(/\/+$/, '') || '/';
}

const digest = (s: string) => createHash('sha256').update(s).digest();

function sameToken(given: string, expected: Buffer): boolean {
  // Compare digests, so the comparison takes the same time whatever the lengths.
  return timingSafeEqual(digest(given), expected);
}

function queryOf(req: Req): URLSearchParams {
  return new URL(req.originalUrl ?? req.url ?? '/', 'http://localhost').searchParams;
}

function answer(res: ServerResponse, status: number, text: string): void {
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

/**
 * Refuses a request whose body is not (all) read: `Connection: close`, and the connection destroyed once
 * the answer is flushed. Otherwise Node reads and discards the rest of the body to keep the connection
 * alive, as long as a stranger cares to send it. Until then the unread body only fills the socket's
 * buffers (tens of KB), and backpressure stops the client.
 */
function refuse(req: Req, res: ServerResponse, status: number, text: string): void {
  if (res.headersSent) return;
  res.shouldKeepAlive = false;
  res.setHeader('connection', 'close');
  res.on('finish', () => req.destroy());
  answer(res, status, text);
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

/**
 * Installs the listener's routes and returns its endpoint. `accept` parses the parameters at once
 * (throwing a KaleyraError for a bad request, answered 400 with a warning) and returns a promise of the
 * msg to emit, which may still be correlating when the request is answered.
 *
 * Fail closed: without a token every request is refused (403) and the status says so, unless the user
 * ticked `acceptWithoutToken` (they protect the path themselves). A token is a credential, so a flow
 * imported from elsewhere arrives without one.
 */
export function listen(RED: RED, node: Node, config: Record<string, unknown>, accept: (params: Params) => Promise<object | undefined>): Endpoint {
  const app = RED.httpNode as HttpApp | undefined;
  const path = routePath(config.path);
  const root = String(RED.settings.httpNodeRoot ?? '/').replace(/\/+$/, '');
  const token = node.credentials?.token ?? '';
  const open = !token && config.acceptWithoutToken === true;
  const tokenDigest = digest(token); // once, not for every request

  const endpoint: Endpoint = (extra = {}) => {
    const query = new URLSearchParams(token ? { token, ...extra } : extra).toString();
    return `${root}${path}${query ? `?${query}` : ''}`;
  };

  if (!app || RED.settings.httpNodeRoot === false) {
    node.warn('Node-RED serves no HTTP nodes (httpNodeRoot is false): this listener cannot receive anything');
    node.status({ fill: 'red', shape: 'ring', text: statusText('noHttpNodes') });
    return endpoint;
  }
  if (!token && !open) {
    node.warn('no token: every request is refused (403); open the node (a token is generated) and deploy, or tick "accept requests without a token"');
    node.status({ fill: 'red', shape: 'ring', text: statusText('noToken') });
  } else if (open) {
    node.warn('accepting requests without a token, as set: protect this path yourself');
  }

  const handler: Handler = (req, res) => {
    void (async () => {
      // The token must be in the query (a body field named token does not count), and is checked before
      // any body is read, so a stranger's request is neither parsed nor able to make the node warn.
      const query = queryOf(req); // parsed once, for the token and the parameters
      if (!open && (!token || !sameToken(query.get('token') ?? '', tokenDigest))) return refuse(req, res, 403, 'Forbidden');
      const params = await readParams(req, query);
      if (params === 'too-large') return refuse(req, res, 413, 'Payload Too Large');
      if (params === 'malformed') {
        node.warn(`malformed request to ${path}: the body must be a flat JSON object or a form`);
        return answer(res, 400, 'Bad Request');
      }
      let emit: Promise<object | undefined>;
      try {
        emit = accept(params);
      } catch (err) {
        node.warn(`bad request to ${path}: ${(err as Error).message}`);
        return answer(res, 400, 'Bad Request');
      }
      answer(res, 200, 'OK');
      emit.then(
        (msg) => msg && node.send(msg as NodeMessage),
        (err: Error) => {
          if (err instanceof KaleyraError) node.warn(`bad request to ${path}: ${err.message}`);
          else node.error(err);
        },
      );
    })().catch((err: Error) => {
      node.error(err);
      answer(res, 500, 'Internal Server Error');
    });
  };

  const middleware = RED.settings.httpNodeMiddleware;
  const chain: Handler[] = typeof middleware === 'function' ? [middleware as Handler] : Array.isArray(middleware) ? [...(middleware as Handler[])] : [];
  const cors = RED.settings.httpNodeCors as { origin?: unknown } | undefined;
  if (cors) {
    chain.push((_req, res, next) => {
      res.setHeader('access-control-allow-origin', typeof cors.origin === 'string' ? cors.origin : '*');
      next();
    });
  }
  app.get(path, ...chain, handler);
  app.post(path, ...chain, handler);

  node.on('close', (_removed, done) => {
    removeRoutes(app, [handler]);
    done();
  });
  return endpoint;
}
