// The small part of Node-RED's runtime API these nodes use, typed here rather than pulling in
// @types/node-red and its express typings.

export interface NodeMessage {
  _msgid?: string;
  payload?: unknown;
  [key: string]: unknown;
}

export interface NodeStatus {
  fill?: 'red' | 'green' | 'yellow' | 'blue' | 'grey';
  shape?: 'ring' | 'dot';
  text?: string;
}

export interface Node {
  id: string;
  type: string;
  name?: string;
  credentials?: Record<string, string | undefined>;
  on(event: 'input', handler: (msg: NodeMessage, send: (msg: NodeMessage) => void, done: (err?: Error) => void) => void): void;
  on(event: 'close', handler: (removed: boolean, done: () => void) => void): void;
  status(status: NodeStatus | Record<string, never>): void;
  error(err: unknown, msg?: NodeMessage): void;
  warn(message: unknown): void;
  log(message: unknown): void;
  send(msg: NodeMessage | NodeMessage[]): void;
  /** Node-RED's metrics log: with no arguments, whether it is on. */
  metric?(eventname?: string, msg?: NodeMessage, value?: unknown): boolean | void;
  context(): { get(key: string, cb: (err: Error | null, value: unknown) => void): void; set(key: string, value: unknown, cb: (err: Error | null) => void): void };
}

export type PropertyType = 'msg' | 'flow' | 'global' | 'env' | 'str' | 'num' | 'json' | 'jsonata' | 'bool' | 'date';

export interface RED {
  nodes: {
    createNode(node: object, config: object): void;
    getNode(id: string): unknown;
    registerType(type: string, ctor: Function, opts?: { credentials?: Record<string, { type: 'text' | 'password' }>; settings?: object }): void;
  };
  util: {
    evaluateNodeProperty(value: string, type: string, node: Node, msg: NodeMessage, callback: (err: Error | null, result: unknown) => void): void;
    cloneMessage<T extends NodeMessage>(msg: T): T;
  };
  settings: Record<string, unknown>;
  /** Node-RED's HTTP apps (express): httpNode serves flows, httpAdmin the editor and admin API. */
  httpNode?: unknown;
  httpAdmin?: unknown;
  auth: { needsPermission(permission: string): (req: unknown, res: unknown, next: () => void) => void };
  /** Messages to the editors (the account view's deltas); not retained unless asked. */
  comms?: { publish(topic: string, data: unknown, retain?: boolean): void };
  /** Node-RED's version (a function in the runtime's node API). */
  version?: () => string;
  log: { debug(m: unknown): void; info(m: unknown): void; warn(m: unknown): void; error(m: unknown): void };
  _(key: string, subs?: Record<string, unknown>): string;
}
