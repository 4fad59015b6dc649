// kaleyra-whatsapp: sends one message (interface A) per input msg.
import type { SentMessage } from '../core/messaging';
import { orMsg, registerAction, reported } from './action';
import type { RED } from './red';

export = function register(RED: RED) {
  registerAction(RED, 'kaleyra-whatsapp', {
    settings: ['from', 'to', 'callback'],
    async run({ client, account, node, settings: s, msg, call, config }) {
      const report = config.reportTo ? await account.report(node, String(config.reportTo), 'message', msg.ref) : undefined;
      const input = { from: orMsg(s.from, msg.from), to: orMsg(s.to, msg.to), callback: report?.url ?? s.callback, body: msg.payload, file: msg.file, filename: msg.filename };
      return reported(report, () => client.sendMessage(input, call), (result) => Object.fromEntries(result.payload.map((m: SentMessage) => [m.mobile, m.id])));
    },
    summary: (sent) => `sent to ${sent.length}`,
  });
};
