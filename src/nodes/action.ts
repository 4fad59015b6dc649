// What the four action nodes share: TypedInput settings ("the node setting wins, the message fills what
// is empty"), registration with their account (whose status they show), the status while requesting
// and after, and the single place where a message ends: either send(msg) + done() or done(err) with
// err.code, exactly once, whatever fails.
import type { CallOptions, KaleyraClient } from '../core/client';
import type { Result } from '../core/call';
import { Codes, InputError, KaleyraError, TransportError } from '../core/errors';
import { escapeControl } from '../core/redact';
import { accountOf, type AccountApi, type AccountStatus, type Report } from './account';
import { CLOSE_LIMIT_MS, MessageLedger } from './message-ledger';
import type { Node, NodeMessage, NodeStatus, RED } from './red';
import { status as statuses } from './status';
import { Throttle } from './throttle';

export interface RunContext {
  client: KaleyraClient;
  account: AccountApi;
  node: Node;
  /** Evaluated settings; undefined where the node left them empty. */
  settings: Record<string, unknown>;
  msg: NodeMessage;
  /** Pass to the client: cancels with the node, and moves the status to "requesting" once the input passed its checks. */
  call: CallOptions;
  config: Record<string, unknown>;
}

export interface ActionSpec<T> {
  /** Settings edited as TypedInputs: `config[name]` with its type in `config[name + 'Type']`. */
  settings: readonly string[];
  /** Turns the settings and the msg into a call. */
  run(ctx: RunContext): Promise<Result<T>>;
  /** Short status text after a success. */
  summary(payload: T): string;
  /** A node that sends messages (kaleyra-whatsapp): its recipients in a success, for the account's funnel. */
  recipients?(payload: T): number;
  /** Extra behaviour at start (inbox polling); runs after the input handler is in place. */
  setup?(api: SetupApi): void;
}

export interface SetupApi {
  node: Node;
  account: AccountApi | null;
  config: Record<string, unknown>;
  /** The node's settings evaluated against a message (an empty one for a timer). */
  evaluate(msg: NodeMessage): Promise<Record<string, unknown>>;
}

export function registerAction<T>(RED: RED, type: string, spec: ActionSpec<T>): void {
  function ActionNode(this: Node, config: Record<string, unknown>) {
    RED.nodes.createNode(this, config);
    const node = this;
    const account = accountOf(RED, config.account);
    // Settings left empty as a plain string are not evaluated at all: the message fills them.
    const set = spec.settings
      .map((name) => ({ name, value: String(config[name] ?? ''), type: String(config[`${name}Type`] || 'str') }))
      .filter((s) => s.value !== '' || !['str', 'num', 'json'].includes(s.type));
    const ledger = new MessageLedger();
    let lastStatus: NodeStatus = {};
    let accountStatus: AccountStatus | undefined;
    let client: KaleyraClient | undefined;

    const status = new Throttle(() =>
      node.status(
        statuses.action({
          problem: accountStatus?.problem,
          stateDown: accountStatus?.stateDown ?? false,
          rateLimited: accountStatus?.rateLimited ?? false,
          queued: accountStatus?.queued ?? 0,
          requesting: ledger.requesting,
          last: lastStatus,
        }),
      ),
    );
    const monitor = account?.monitor?.();
    // Node-RED's metrics log: asked once (a runtime setting), so that with it off a msg pays nothing.
    const metrics = typeof node.metric === 'function' && node.metric() === true;

    account?.register({
      node,
      reportTo: config.reportTo ? String(config.reportTo) : undefined,
      onStatus: (s) => {
        const shown = ledger.requesting > 0 || s.problem !== accountStatus?.problem || s.stateDown !== (accountStatus?.stateDown ?? false);
        accountStatus = s;
        if (shown) status.request();
      },
    });

    node.on('input', (msg, send, done) => {
      ledger.started();
      const began = metrics ? Date.now() : 0;
      let queued = false;
      const call: CallOptions = {
        signal: ledger.signal,
        onQueued: () => {
          queued = true;
          ledger.queued();
          status.request();
        },
      };
      handle(msg, call)
        .then((result) => {
          if (monitor && spec.recipients) monitor.messageSent(spec.recipients(result.payload));
          msg.payload = result.payload;
          msg.kaleyra = result.envelope;
          lastStatus = statuses.done(spec.summary(result.payload));
          send(msg);
          return undefined;
        })
        .catch((thrown: unknown) => {
          const err = coded(thrown);
          lastStatus = statuses.failed(err);
          monitor?.messageFailed(err.code, node.id, node.name ?? '', err.message, !!spec.recipients);
          return err;
        })
        .then((err) => {
          ledger.ended(err ? err.code : 'sent', queued);
          if (metrics) {
            node.metric!(err ? `kaleyra.failed.${err.code}` : 'kaleyra.sent', msg, 1);
            node.metric!('kaleyra.duration', msg, Date.now() - began);
          }
          status.request();
          done(err);
          ledger.settled();
        });
    });

    async function handle(msg: NodeMessage, call: CallOptions): Promise<Result<T>> {
      if (ledger.closing) throw new TransportError(Codes.CLOSED, 'the node is closing; the message was not sent', { notSent: true });
      if (!account) throw new InputError('account', 'no kaleyra-config node is selected');
      // Once the account's client is known, and when nothing is to be evaluated, a msg waits no turn.
      client ??= await account.client();
      return spec.run({ client, account, node, settings: set.length > 0 ? await evaluateAll(msg) : {}, msg, call, config });
    }

    async function evaluateAll(msg: NodeMessage): Promise<Record<string, unknown>> {
      const settings: Record<string, unknown> = {};
      for (const s of set) settings[s.name] = await evaluate(RED, node, s, msg);
      return settings;
    }

    // The account closes after its nodes (ADR 0003): the ledger lets this node's messages finish (or
    // cancels them), then the node deregisters.
    node.on('close', (_removed, done) => {
      ledger.close(({ ended, limitReached }) => {
        status.cancel();
        node.status({});
        // Node-RED passes on nothing a stopping flow sends, not even to Catch nodes: say what ended here.
        if (ended.size > 0) {
          const counts = [...ended].map(([outcome, n]) => `${n} ${outcome}`).join(', ');
          const limit = limitReached ? `; the ${CLOSE_LIMIT_MS / 1000} s limit was reached` : '';
          node.warn(`stopped with messages still in flight or queued; they ended as: ${counts} (a stopping flow does not pass them on${limit})`);
        }
        account?.deregister(node);
        done();
      });
    });

    spec.setup?.({ node, account, config, evaluate: evaluateAll });
  }
  RED.nodes.registerType(type, ActionNode);
}

function evaluate(RED: RED, node: Node, s: { name: string; value: string; type: string }, msg: NodeMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const failed = (err: Error) => reject(new InputError(s.name, `could not be evaluated as ${s.type}: ${err.message}`));
    try {
      RED.util.evaluateNodeProperty(s.value, s.type, node, msg, (err, result) => {
        if (err) failed(err);
        else resolve(result === '' ? undefined : result);
      });
    } catch (err) {
      // Some types fail by throwing, not through the callback (unparsable json, a jsonata syntax error).
      failed(err as Error);
    }
  });
}

/**
 * Every failure reaches Catch with a code (docs/service.md §7). Anything thrown that is not one of ours comes
 * from reading the msg (a property's getter that throws, say): bad input, INVALID_INPUT.
 */
export function coded(err: unknown): KaleyraError {
  if (err instanceof KaleyraError) return err;
  let text = 'an exception';
  try {
    text = err instanceof Error ? String(err.message) : String(err);
  } catch {
    // a thrown value whose toString throws in turn
  }
  return new InputError('msg', `could not be read: ${escapeControl(text)}`);
}

/**
 * A send that reports to a callback-in node (`report` makes its record, when set). The record is made only
 * once the input passed its checks (the client asks for the callback URL then: bad input writes nothing);
 * a failed request forgets it; once the service accepted, its ids are recorded without waiting, so the msg
 * goes on whatever the record's fate (a flow that retries failures would send twice). A callback that
 * comes before the ids are recorded waits for them (ADR 0001); a failure to record is warned by the account.
 */
export async function reported<R>(
  report: (() => Promise<Report>) | undefined,
  call: CallOptions,
  request: (call: CallOptions) => Promise<R>,
  ids: (result: R) => Record<string, string>,
): Promise<R> {
  if (!report) return request(call);
  let made: Report | undefined;
  let result: R;
  try {
    result = await request({ ...call, callbackUrl: async () => (made = await report()).url });
  } catch (err) {
    await made?.failed();
    throw err;
  }
  void made?.sent(ids(result));
  return result;
}

/** The message's own value for a setting the node left empty. */
export function orMsg(setting: unknown, fromMsg: unknown): unknown {
  return setting === undefined || setting === null || setting === '' ? fromMsg : setting;
}

/** msg.payload when it is a plain object, else an empty one. */
export function payloadObject(msg: NodeMessage): Record<string, unknown> {
  const p = msg.payload;
  return typeof p === 'object' && p !== null && !Array.isArray(p) && !Buffer.isBuffer(p) ? (p as Record<string, unknown>) : {};
}
