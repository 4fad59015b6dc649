// The rules the editor checks a dialog with, taken from the runtime's own: scripts/build-editor.js writes
// them into resources/kaleyra-editor.js at build, so that a dialog and the runtime cannot disagree on a
// range, a default, a base URL, the phone rule or the callback variables (test/editor-rules.test.js).
// Only modules that load on any Node.js (no transport): the build may run on an older one.
import { API_KEY_PATTERN, DEFAULT_BASE_URLS } from '../core/account-config';
import { SMS_VARIABLES } from '../core/callback-events';
import { WATCH_LIMITS } from '../core/call-watch';
import { CALLBACK_VARIABLES, CLICK_TO_CALL_LIMITS } from '../core/click-to-call';
import { INBOX_LIMITS } from '../core/inbox';
import { POLL_LIMITS } from '../core/inbox-poll';
import { LIMITS as MESSAGE_LIMITS } from '../core/messaging';
import { NUMBER_RUN } from '../core/monitor';
import { PHONE_RULE } from '../core/validate';
import { MAX_AFTER_MINUTES } from '../core/watchdog';
import { DEFAULT_REDIS_URL, NUMBER_SETTINGS } from './account-settings';

/** A pattern as the browser rebuilds it: `new RegExp(source, flags)`. */
const pattern = (re: RegExp) => ({ source: re.source, flags: re.flags });

export function editorRules() {
  return {
    /** kaleyra-config: each number setting's default and range. */
    settings: NUMBER_SETTINGS,
    baseUrls: DEFAULT_BASE_URLS,
    redisUrl: DEFAULT_REDIS_URL,
    apiKey: pattern(API_KEY_PATTERN),
    /** The phone rule; `run` and `minDigits` also mask numbers in the sidebar, as core/monitor.ts does. */
    phone: { formatting: pattern(PHONE_RULE.formatting), number: pattern(PHONE_RULE.number), listMax: MESSAGE_LIMITS.recipients, run: pattern(NUMBER_RUN), minDigits: PHONE_RULE.minDigits },
    watch: WATCH_LIMITS,
    poll: POLL_LIMITS,
    inbox: INBOX_LIMITS,
    clickToCall: CLICK_TO_CALL_LIMITS,
    callVariables: CALLBACK_VARIABLES,
    smsVariables: SMS_VARIABLES,
    /** callback in: the delivery watchdog's longest wait, minutes. */
    overdueAfterMax: MAX_AFTER_MINUTES,
  };
}
