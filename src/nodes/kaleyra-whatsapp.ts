// kaleyra-whatsapp: sends one message (interface A) per input msg.
import type { SentMessage } from '../core/messaging';
import { orMsg, registerAction } from './action';
import { openReport } from './report';
import type { RED } from './red';

export = function register(RED: RED) {
  registerAction(RED, 'kaleyra-whatsapp', {
    settings: ['from', 'to', 'callback'],
    async run({ client, account, settings: s, msg, signal, config }) {
      const report = config.reportTo ? await openReport(RED, config.reportTo, account, 'message', msg.ref) : undefined;
      const input = { from: orMsg(s.from, msg.from), to: orMsg(s.to, msg.to), callback: report?.url ?? s.callback, body: msg.payload, file: msg.file, filename: msg.filename };
      try {
        const result = await client.sendMessage(input, signal);
        await report?.sent(Object.fromEntries(result.payload.map((m: SentMessage) => [m.mobile, m.id])));
        return result;
      } catch (err) {
        await report?.failed();
        throw err;
      }
    },
    summary: (sent) => `sent to ${sent.length}`,
  });
};
