// kaleyra-whatsapp: sends one message (interface A) per input msg.
import type { SentMessage } from '../core/messaging';
import { orMsg, registerAction, reported } from './action';
import type { RED } from './red';

export = function register(RED: RED) {
  registerAction(RED, 'kaleyra-whatsapp', {
    settings: ['from', 'to', 'callback'],
    async run({ client, account, node, settings: s, msg, call, config }) {
      // With Report to, the client takes the report's callback URL instead of this one (and makes the
      // report only for a message that passed its checks).
      const report = config.reportTo ? () => account.report(node, String(config.reportTo), 'message', msg.ref) : undefined;
      const input = { from: orMsg(s.from, msg.from), to: orMsg(s.to, msg.to), callback: s.callback, body: msg.payload, file: msg.file, filename: msg.filename };
      return reported(report, call, (c) => client.sendMessage(input, c), (result) => Object.fromEntries(result.payload.map((m: SentMessage) => [m.mobile, m.id])));
    },
    summary: (sent) => `sent to ${sent.length}`,
    recipients: (sent) => sent.length,
  });
};
