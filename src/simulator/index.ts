/** The built-in simulator of the service (docs/service.md §8); no Node-RED import below here. */
export { DEMO_KEY, Simulator } from './server';
export { DEFAULT_VMN } from './inbox';
export { DEFAULT_CALLER_ID } from './click2call';
export type * from './types';
