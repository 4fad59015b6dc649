// kaleyra-whatsapp: sends one message (interface A) per input msg.
import { orMsg, registerAction } from './action';
import type { RED } from './red';

export = function register(RED: RED) {
  registerAction(RED, 'kaleyra-whatsapp', {
    settings: ['from', 'to', 'callback'],
    run: (client, s, msg, signal) =>
      client.sendMessage(
        { from: orMsg(s.from, msg.from), to: orMsg(s.to, msg.to), callback: s.callback, body: msg.payload, file: msg.file, filename: msg.filename },
        signal,
      ),
    summary: (sent) => `sent to ${sent.length}`,
  });
};
