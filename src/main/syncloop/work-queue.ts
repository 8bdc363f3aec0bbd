/**
 * When each pod is due for its next resync (the kubelet's queue.WorkQueue). The pod worker
 * reports the delay with each result; the sync loop's 1 s tick takes the due UIDs.
 * Main thread only; times come from the injected clock (monotonic ms).
 */
export class WorkQueue {
  readonly #due = new Map<string, number>();

  /** Schedule (or reschedule) `uid` at `nowMs + delayMs`; a later call replaces an earlier one. */
  enqueue(uid: string, nowMs: number, delayMs: number): void {
    this.#due.set(uid, nowMs + Math.max(0, delayMs));
  }

  /** Remove and return every UID due at or before `nowMs`. */
  takeDue(nowMs: number): string[] {
    const out: string[] = [];
    for (const [uid, at] of this.#due) {
      if (at <= nowMs) {
        out.push(uid);
        this.#due.delete(uid);
      }
    }
    return out;
  }

  forget(uid: string): void {
    this.#due.delete(uid);
  }

  get size(): number {
    return this.#due.size;
  }
}
