// The messages an action node holds, and how it stops (ADR 0003): it takes no new message, lets the ones
// it holds (in flight and queued for the account) finish while they keep ending, and cancels the rest
// (CLOSED) once none ended for the grace time or at the limit; then it reports how they ended. Framework-
// free: the node wires it to Node-RED (src/nodes/action.ts); test/message-ledger.test.js drives it alone, on a
// fake clock (test/helpers/clock.js).
import { setMaxListeners } from 'node:events';

/** A stopping node cancels what it holds once none of its messages ended for this long... */
export const CLOSE_GRACE_MS = 5_000;
/** ...or after this long in all: below Node-RED's own 15 s limit for a node to close, with the account's 2 s after. */
export const CLOSE_LIMIT_MS = 12_000;

/** How the messages held at the stop ended: counts by outcome ('sent', or an error code), and whether the limit was reached. */
export interface ClosedSummary {
  ended: Map<string, number>;
  limitReached: boolean;
}

export class MessageLedger {
  /** Messages not ended yet, whatever their stage. */
  pending = 0;
  /** Messages that passed their checks and wait for, or are in, a request. */
  requesting = 0;
  closing = false;
  /**
   * Aborted when the node gives up on what it holds: every request of the node listens to it (one
   * controller for the node: an AbortController per message costs microseconds each).
   */
  readonly signal: AbortSignal;
  private readonly stopping = new AbortController();
  private readonly outcomes = new Map<string, number>();
  private closingSince = 0;
  private limitReached = false;
  private timer?: NodeJS.Timeout;
  private onClosed?: (summary: ClosedSummary) => void;

  constructor() {
    this.signal = this.stopping.signal;
    setMaxListeners(0, this.signal);
  }

  /** A message came in. */
  started(): void {
    this.pending++;
  }

  /** The message passed its checks and waits for, or is in, a request. */
  queued(): void {
    this.requesting++;
  }

  /**
   * The message ended: `outcome` 'sent' or its error code; `wasQueued` if it had been queued. Call
   * `settled()` once the node is done with it.
   */
  ended(outcome: string, wasQueued: boolean): void {
    this.pending--;
    if (wasQueued) this.requesting--;
    if (this.closing) {
      this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1);
      this.armGrace();
    }
  }

  /** After a message's end was handed on: a stopping node with none left is closed. */
  settled(): void {
    if (this.pending === 0 && this.closing) this.finish();
  }

  /** The node stops: `onClosed` runs once every message held has ended (the rest cancelled in time). */
  close(onClosed: (summary: ClosedSummary) => void): void {
    this.closing = true;
    this.closingSince = Date.now();
    this.onClosed = onClosed;
    this.armGrace();
    if (this.pending === 0) this.finish();
  }

  private armGrace(): void {
    clearTimeout(this.timer);
    const left = this.closingSince + CLOSE_LIMIT_MS - Date.now();
    this.timer = setTimeout(
      () => {
        this.limitReached = left <= CLOSE_GRACE_MS;
        this.stopping.abort();
      },
      Math.max(0, Math.min(CLOSE_GRACE_MS, left)),
    );
  }

  private finish(): void {
    clearTimeout(this.timer);
    const onClosed = this.onClosed;
    this.onClosed = undefined;
    onClosed?.({ ended: this.outcomes, limitReached: this.limitReached });
  }
}
