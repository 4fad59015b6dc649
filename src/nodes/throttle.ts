// At most one status update per interval, the last one trailing: under load every message (or every
// change of the account's queue) would otherwise send one to the editor. One throttle for the account's
// pushes and the nodes' own statuses.

/** How often a node's status may change, at most. */
export const STATUS_INTERVAL_MS = 250;

export class Throttle {
  private timer?: NodeJS.Timeout;
  private at = 0;

  /** `run` is called at most once per `intervalMs`; a request inside the interval is run at its end. */
  constructor(
    private readonly run: () => void,
    private readonly intervalMs = STATUS_INTERVAL_MS,
  ) {}

  request(): void {
    if (this.timer) return;
    const wait = this.at + this.intervalMs - Date.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.request();
      }, wait);
      return;
    }
    this.at = Date.now();
    this.run();
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
