// kaleyra-whatsapp: sends one message (interface A) per input msg.
import type { SentMessage } from '../core/messaging';
import { orMsg, registerAction } from './action';
import type { RED } from './red';

export = function register(RED: RED) {
  registerAction(RED, 'kaleyra-whatsapp', {
    settings: ['from', 'to', 'callback'],
    async run({ client, account, node, settings: s, msg, call, config }) {
      const report = config.reportTo ? await account.report(node, String(config.reportTo), 'message', msg.ref) : undefined;
      const input = { from: orMsg(s.from, msg.from), to: orMsg(s.to, msg.to), callback: report?.url ?? s.callback, body: msg.payload, file: msg.file, filename: msg.filename };
      let result;
      try {
        result = await client.sendMessage(input, call);
      } catch (err) {
        await report?.failed();
        throw err;
      }
      // Outside the try, and not waited for: once the service accepted, the msg goes on whatever the
      // record's fate (a flow that retries failures would send the message twice). A callback that comes
      // before the ids are recorded waits for them (ADR 0001); a failure is warned by the account.
      void report?.sent(Object.fromEntries(result.payload.map((m: SentMessage) => [m.mobile, m.id])));
      return result;
    },
    summary: (sent) => `sent to ${sent.length}`,
  });
};
