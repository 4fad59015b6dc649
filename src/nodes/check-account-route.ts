// The config dialog's "Check account" button: an admin endpoint (behind Node-RED's own authorisation, as
// core nodes' admin endpoints are) that checks the settings typed in the dialog, deployed or not, with one
// harmless read (src/core/account-check.ts). A password field of a deployed node comes as "__PWRD__": the
// saved credential is used then, as Node-RED itself does. The key is never sent back.
import type { ServerResponse } from 'node:http';
import { checkAccountKey, configProblem } from '../core/account-check';
import { KaleyraClient } from '../core/client';
import { ConfigError } from '../core/errors';
import { redactText } from '../core/redact';
import { answerJson, type HttpApp, type Req } from './http';
import type { RED } from './red';
import { acquireSimulator, releaseSimulator, SIMULATOR_KEY } from './simulator-mode';

export function installAccountCheck(RED: RED): void {
  const app = RED.httpAdmin as HttpApp | undefined;
  if (!app) return;
  app.post('/kaleyra/check-account', RED.auth.needsPermission('kaleyra-config.write'), (req: Req, res: ServerResponse) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const text = (name: string) => (typeof body[name] === 'string' ? (body[name] as string).trim() : '');
    let apiKey = text('apiKey');
    if (apiKey === '__PWRD__' || (!apiKey && text('id'))) {
      const saved = (RED.nodes as unknown as { getCredentials(id: string): Record<string, string> | undefined }).getCredentials(text('id'));
      apiKey = saved?.apiKey ?? '';
    }
    const simulator = body.simulator === true || body.simulator === 'true';
    void (async () => {
      let client: KaleyraClient | undefined;
      try {
        const urls = simulator ? await acquireSimulator(RED) : undefined;
        client = new KaleyraClient({
          apiKey: simulator ? SIMULATOR_KEY : apiKey,
          messagingUrl: '',
          voiceUrl: '',
          obdUrl: urls?.obdUrl ?? (text('obdUrl') || undefined),
          timeout: 10_000,
          readRetry: { retries: 0 },
        });
        const check = await checkAccountKey(client);
        answerJson(res, 200, { ...check, message: redactText(check.message, apiKey) });
      } catch (err) {
        // The client's constructor checks the settings typed in the dialog.
        if (err instanceof ConfigError) answerJson(res, 200, configProblem(err));
        else answerJson(res, 500, { error: redactText((err as Error).message, apiKey) });
      } finally {
        await client?.close();
        if (simulator) releaseSimulator();
      }
    })();
  });
}
