// A schedule in memory (the memory store's counterpart of a Redis sorted set, src/core/state-store.ts):
// members each due at a time, taken once when due, then kept as "taken" until settled. The due ones are
// found through a binary min-heap with lazy deletion (a member settled or moved stays in the heap until it
// reaches the top, then is skipped), so a sweep costs O(due · log n), not a scan of every member.

export type Settled = 'waiting' | 'taken' | undefined;

export class DueSet {
  /** Members still waiting, with their due time. */
  private readonly waiting = new Map<string, number>();
  /** Members taken and not settled, oldest taken first. */
  private readonly taken = new Set<string>();
  private heap: Array<[at: number, member: string]> = [];

  get size(): number {
    return this.waiting.size + this.taken.size;
  }

  add(member: string, at: number): void {
    this.taken.delete(member);
    this.waiting.set(member, at);
    this.push([at, member]);
    // Entries left behind by settled or moved members: rebuild once they outnumber the live ones.
    if (this.heap.length > 2 * this.waiting.size + 64) {
      this.heap = [];
      for (const [m, t] of this.waiting) this.push([t, m]);
    }
  }

  /** Takes up to `limit` members due by `now`, earliest first; they stay as taken. */
  take(now: number, limit: number): string[] {
    const out: string[] = [];
    while (out.length < limit && this.heap.length > 0 && this.heap[0]![0] <= now) {
      const [at, member] = this.pop()!;
      if (this.waiting.get(member) !== at) continue; // settled or moved since
      this.waiting.delete(member);
      this.taken.add(member);
      out.push(member);
    }
    return out;
  }

  /** Removes a member: whether it was still waiting or had been taken (undefined: absent). */
  settle(member: string): Settled {
    if (this.waiting.delete(member)) return 'waiting';
    return this.taken.delete(member) ? 'taken' : undefined;
  }

  /** Keeps at most `max` members: the taken ones go first (oldest first), then the earliest due. */
  trim(max: number): void {
    for (const member of this.taken) {
      if (this.size <= max) return;
      this.taken.delete(member);
    }
    while (this.size > max && this.heap.length > 0) {
      const [at, member] = this.pop()!;
      if (this.waiting.get(member) === at) this.waiting.delete(member);
    }
  }

  private push(entry: [number, string]): void {
    const h = this.heap;
    h.push(entry);
    for (let i = h.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (h[parent]![0] <= h[i]![0]) break;
      [h[parent], h[i]] = [h[i]!, h[parent]!];
      i = parent;
    }
  }

  private pop(): [number, string] | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let min = i;
        if (l < h.length && h[l]![0] < h[min]![0]) min = l;
        if (r < h.length && h[r]![0] < h[min]![0]) min = r;
        if (min === i) break;
        [h[min], h[i]] = [h[i]!, h[min]!];
        i = min;
      }
    }
    return top;
  }
}
