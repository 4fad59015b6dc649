// The typed client of the package, for scripts, services and function nodes (the Node-RED nodes are
// loaded by Node-RED from nodes/, not from here): the four interfaces of the service, their errors and
// types, the parsers of its callbacks, and the built-in simulator for tests.
//
//   import { KaleyraClient } from '@flowcomms/node-red-kaleyra';
//   const client = new KaleyraClient({ apiKey: process.env.KALEYRA_KEY! });
//   const { payload } = await client.sendMessage({ from: '918000000000', to: '+91 98123 45678', body: 'Hello' });
export { KaleyraClient, checkAccount, DEFAULT_BASE_URLS, type AccountConfig, type CallOptions } from './core/client';
export { Codes, KaleyraError, InputError, ServiceError, TransportError, ConfigError } from './core/errors';
export type { MessageInput, SentMessage, MessageType } from './core/messaging';
export type { InboxQuery, InboxRecord } from './core/inbox';
export type { CallStatusInput, CallStatusMethod, CallStatusRecord } from './core/call-status';
export type { ClickToCallInput, ClickToCallResult } from './core/click-to-call';
export { buildCallbackUrl, CALLBACK_VARIABLES } from './core/click-to-call';
export { parseCallback, parseDeliveryEvent, parseCallEvent, parseVmnMessage, type DeliveryEvent, type CallEvent, type VmnMessage } from './core/callback-events';
export { checkAccountKey, type AccountCheck } from './core/account-check';
export type { Result } from './core/call';
export type { Envelope } from './core/decode';
export { Simulator, DEMO_KEY } from './simulator';
export type { SimulatorOptions, SimulatorUrls } from './simulator/types';
