// GET /kaleyra/metrics on httpAdmin, behind the read permission of kaleyra-config (README, Metrics). The
// metrics themselves (./metrics.ts, and prom-client with them) are loaded at the first scrape, not when
// Node-RED starts: most runtimes are never scraped.
import type { ServerResponse } from 'node:http';
import { answer, type HttpApp, type Req } from './http';
import type { RED } from './red';

export function installMetrics(RED: RED): void {
  const app = RED.httpAdmin as HttpApp | undefined;
  if (!app) return;
  app.get('/kaleyra/metrics', RED.auth.needsPermission('kaleyra-config.read'), (_req: Req, res: ServerResponse) => {
    const metrics = require('./metrics') as typeof import('./metrics');
    metrics.scrape().then(
      (text) => {
        res.statusCode = 200;
        res.setHeader('content-type', metrics.registry.contentType);
        res.end(text);
      },
      (err: Error) => answer(res, 500, `metrics failed: ${err.message}`),
    );
  });
}
