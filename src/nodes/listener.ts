// What the two listener nodes share: a GET and POST route on Node-RED's own HTTP server (so
// httpNodeRoot, TLS, httpNodeAuth and httpNodeMiddleware apply, as for the core http-in node), the
// token check, a small body limit, and the route removed again on close (no duplicates on redeploy).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Params } from '../core/callback-events';
import type { WatchSetting } from '../core/correlation';
import type { ListenerKind, ListenerStats } from '../core/monitor';
import { KaleyraError } from '../core/errors';
import { answer, queryOf, readParams, removeRoutes, type Handler, type HttpApp, type Req } from './http';
import type { Node, NodeMessage, RED } from './red';
import { status } from './status';
import { accountOf } from './account';
import { bindListener, type Endpoint } from './registry';

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

/**
 * A listener node (callback in, vmn in) on its account: its route (listen()), counted by the account's
 * monitor, and made known (bindListener()) until it closes, with its delivery watchdog setting if on.
 */
export function serveListener(RED: RED, node: Node, config: Record<string, unknown>, kind: ListenerKind, accept: (params: Params) => Promise<object | undefined>, watch?: WatchSetting): void {
  const account = accountOf(RED, config.account);
  const stats = account?.monitor?.()?.listener(node.id, node.name ?? '', kind);
  bindListener(node, account, kind, listen(RED, node, config, accept, stats), watch);
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
export function listen(RED: RED, node: Node, config: Record<string, unknown>, accept: (params: Params) => Promise<object | undefined>, stats?: ListenerStats): Endpoint {
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
    node.status(status.noHttpNodes());
    return endpoint;
  }
  if (!token && !open) {
    node.warn('no token: every request is refused (403); open the node (a token is generated) and deploy, or tick "accept requests without a token"');
    node.status(status.noToken());
  } else if (open) {
    node.warn('accepting requests without a token, as set: protect this path yourself');
  }

  const handler: Handler = (req, res) => {
    void (async () => {
      // The token must be in the query (a body field named token does not count), and is checked before
      // any body is read, so a stranger's request is neither parsed nor able to make the node warn.
      const query = queryOf(req); // parsed once, for the token and the parameters
      if (!open && (!token || !sameToken(query.get('token') ?? '', tokenDigest))) {
        stats?.refused('token');
        return refuse(req, res, 403, 'Forbidden');
      }
      const params = await readParams(req, query);
      if (params === 'too-large') {
        stats?.refused('tooLarge');
        return refuse(req, res, 413, 'Payload Too Large');
      }
      if (params === 'malformed') {
        stats?.refused('other');
        node.warn(`malformed request to ${path}: the body must be a flat JSON object or a form`);
        return answer(res, 400, 'Bad Request');
      }
      let emit: Promise<object | undefined>;
      try {
        emit = accept(params);
      } catch (err) {
        stats?.refused('other');
        node.warn(`bad request to ${path}: ${(err as Error).message}`);
        return answer(res, 400, 'Bad Request');
      }
      stats?.accepted();
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
