// While a config node runs the built-in simulator, flows (and curl) can hand it an incoming SMS or an
// outbound call record through Node-RED's own HTTP server: POST {httpNodeRoot}/kaleyra-simulator/sms
// (from, message, number, keyword) and /kaleyra-simulator/calls (mobile, id, status, senttime).
// Without a running simulator both answer 404.
import type { ServerResponse } from 'node:http';
import { readParams, type HttpApp, type Req } from './listener';
import type { RED } from './red';
import { runningSimulator } from './shared-simulator';

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}

const installed = new WeakSet<object>();

export function installSimulatorRoutes(RED: RED): void {
  const app = (RED as unknown as { httpNode?: HttpApp }).httpNode;
  if (!app || RED.settings.httpNodeRoot === false || installed.has(app)) return;
  installed.add(app);
  const route = (inject: (params: Record<string, string>) => unknown) => (req: Req, res: ServerResponse) => {
    void readParams(req).then((params) => {
      const sim = runningSimulator();
      if (!sim) return reply(res, 404, { error: 'no kaleyra-config node runs the simulator' });
      if (typeof params === 'string') return reply(res, params === 'too-large' ? 413 : 400, { error: params });
      try {
        reply(res, 200, inject(params));
      } catch (err) {
        reply(res, 400, { error: (err as Error).message });
      }
    });
  };
  app.post(
    '/kaleyra-simulator/sms',
    route((p) => runningSimulator()!.injectSms({ from: p.from ?? '', message: p.message ?? '', number: p.number, keyword: p.keyword })),
  );
  app.post(
    '/kaleyra-simulator/calls',
    route((p) => runningSimulator()!.addCall({ mobile: p.mobile ?? '', id: p.id, status: p.status, senttime: p.senttime })),
  );
}
