// kaleyra-inbox: reads the VMN inbox (interface B); filters from the node, else from msg.payload.
import { orMsg, payloadObject, registerAction } from './action';
import type { RED } from './red';

const INBOX_FILTERS = ['number', 'keyword', 'mobile', 'fromdate', 'todate', 'limit', 'page'] as const;

export = function register(RED: RED) {
  registerAction(RED, 'kaleyra-inbox', {
    settings: INBOX_FILTERS,
    run: (client, s, msg, signal) => {
      const given = payloadObject(msg);
      const query: Record<string, unknown> = {};
      for (const name of INBOX_FILTERS) query[name] = orMsg(s[name], given[name]);
      return client.readInbox(query, signal);
    },
    summary: (records) => `${records.length} record${records.length === 1 ? '' : 's'}`,
  });
};
