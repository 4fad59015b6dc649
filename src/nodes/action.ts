// What the four action nodes share: TypedInput settings ("the node setting wins, the message fills what
// is empty"), the status while requesting and after, and the single place where a message ends:
// either send(msg) + done() or done(err) with err.code, exactly once, whatever fails.
import { setMaxListeners } from 'node:events';
import type { KaleyraClient } from '../core/client';
import type { Result } from '../core/context';
import { Codes, InputError, KaleyraError, TransportError } from '../core/errors';
import { escapeControl } from '../core/redact';
import type { Node, NodeMessage, RED } from './red';

/** What the config node offers its users. */
export interface AccountNode {
  /** The account's client; rejects with an InputError saying what is missing (e.g. the key). */
  getClient(): Promise<KaleyraClient>;
  /** The public base URL the service calls back on; throws an InputError when there is none. */
  publicBase(): string;
}

export interface RunContext {
  client: KaleyraClient;
  account: AccountNode;
  /** Evaluated settings; undefined where the node left them empty. */
  settings: Record<string, unknown>;
  msg: NodeMessage;
  signal: AbortSignal;
  config: Record<string, unknown>;
}

export interface ActionSpec<T> {
  /** Settings edited as TypedInputs: `config[name]` with its type in `config[name + 'Type']`. */
  settings: readonly string[];
  /** Turns the settings and the msg into a call. */
  run(ctx: RunContext): Promise<Result<T>>;
  /** Short status text after a success. */
  summary(payload: T): string;
  /** Extra behaviour at start (inbox polling); runs after the input handler is in place. */
  setup?(api: SetupApi): void;
}

export interface SetupApi {
  node: Node;
  account: AccountNode | null;
  config: Record<string, unknown>;
  /** The node's settings evaluated against a message (an empty one for a timer). */
  evaluate(msg: NodeMessage): Promise<Record<string, unknown>>;
}

/** Longest wait on close for requests in flight before they are cancelled. */
const CLOSE_GRACE_MS = 5_000;
const STATUS_INTERVAL_MS = 250;

export function registerAction<T>(RED: RED, type: string, spec: ActionSpec<T>): void {
  function ActionNode(this: Node, config: Record<string, unknown>) {
    RED.nodes.createNode(this, config);
    const node = this;
    const account = RED.nodes.getNode(String(config.account ?? '')) as AccountNode | null;
    // Settings left empty as a plain string are not evaluated at all: the message fills them.
    const set = spec.settings
      .map((name) => ({ name, value: String(config[name] ?? ''), type: String(config[`${name}Type`] || 'str') }))
      .filter((s) => s.value !== '' || !['str', 'num', 'json'].includes(s.type));
    // One controller for the node, aborted when it stops: every msg of the node is cancelled then, and
    // an AbortController per msg costs microseconds each. Its listeners are the node's requests.
    const stopping = new AbortController();
    setMaxListeners(0, stopping.signal);
    let inFlight = 0;
    let closing = false;
    let onIdle: (() => void) | undefined;
    /** Outcomes of the messages that ended while the node was stopping, by code ('sent' for outputs). */
    const endedWhileClosing = new Map<string, number>();
    let lastStatus: Parameters<Node['status']>[0] = {};
    let client: KaleyraClient | undefined;
    let statusTimer: NodeJS.Timeout | undefined;
    let statusAt = 0;

    // At most a few status updates a second: under load every message would otherwise send one to the editor.
    const showStatus = () => {
      if (statusTimer) return;
      const wait = statusAt + STATUS_INTERVAL_MS - Date.now();
      if (wait > 0) {
        statusTimer = setTimeout(() => {
          statusTimer = undefined;
          showStatus();
        }, wait);
        return;
      }
      statusAt = Date.now();
      const queued = client?.flow.queued ?? 0;
      const busy = `requesting (${inFlight})${queued > 0 ? `, ${queued} queued for the account` : ''}`;
      node.status(inFlight > 0 ? { fill: 'blue', shape: 'dot', text: busy } : lastStatus);
    };

    node.on('input', (msg, send, done) => {
      inFlight++;
      showStatus();
      handle(msg, stopping.signal)
        .then((result) => {
          msg.payload = result.payload;
          msg.kaleyra = result.envelope;
          lastStatus = { fill: 'green', shape: 'dot', text: spec.summary(result.payload) };
          send(msg);
          return undefined;
        })
        .catch((thrown: unknown) => {
          const err = coded(thrown);
          lastStatus = { fill: 'red', shape: 'ring', text: err.code };
          return err;
        })
        .then((err) => {
          inFlight--;
          showStatus();
          if (closing) {
            const outcome = err ? ((err as { code?: string }).code ?? 'error') : 'sent';
            endedWhileClosing.set(outcome, (endedWhileClosing.get(outcome) ?? 0) + 1);
          }
          done(err);
          if (inFlight === 0) onIdle?.();
        });
    });

    async function handle(msg: NodeMessage, signal: AbortSignal): Promise<Result<T>> {
      if (closing) throw new TransportError(Codes.CLOSED, 'the node is closing; the message was not sent', { notSent: true });
      if (!account) throw new InputError('account', 'no kaleyra-config node is selected');
      // Once the account's client is known, and when nothing is to be evaluated, a msg waits no turn.
      client ??= await account.getClient();
      return spec.run({ client, account, settings: set.length > 0 ? await evaluateAll(msg) : {}, msg, signal, config });
    }

    async function evaluateAll(msg: NodeMessage): Promise<Record<string, unknown>> {
      const settings: Record<string, unknown> = {};
      for (const s of set) settings[s.name] = await evaluate(RED, node, s, msg);
      return settings;
    }

    // Requests in flight may finish within the grace time; the rest are cancelled and fail with CLOSED.
    node.on('close', (_removed, done) => {
      closing = true;
      const finish = () => {
        clearTimeout(timer);
        clearTimeout(statusTimer);
        node.status({});
        // Node-RED passes on nothing a stopping flow sends, not even to Catch nodes: say what ended here.
        if (endedWhileClosing.size > 0) {
          const counts = [...endedWhileClosing].map(([outcome, n]) => `${n} ${outcome}`).join(', ');
          node.warn(`stopped with messages still in flight or queued; they ended as: ${counts} (a stopping flow does not pass them on)`);
        }
        done();
      };
      const timer = setTimeout(() => stopping.abort(), CLOSE_GRACE_MS);
      if (inFlight === 0) finish();
      else onIdle = finish;
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
 * Every failure reaches Catch with a code (DESIGN.md). Anything thrown that is not one of ours comes from
 * reading the msg (a property's getter that throws, say): bad input, INVALID_INPUT.
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

/** The message's own value for a setting the node left empty. */
export function orMsg(setting: unknown, fromMsg: unknown): unknown {
  return setting === undefined || setting === null || setting === '' ? fromMsg : setting;
}

/** msg.payload when it is a plain object, else an empty one. */
export function payloadObject(msg: NodeMessage): Record<string, unknown> {
  const p = msg.payload;
  return typeof p === 'object' && p !== null && !Array.isArray(p) && !Buffer.isBuffer(p) ? (p as Record<string, unknown>) : {};
}
