/**
 * Bounds how many pod starts (a pod's first sync on this thread) run at once, admitting the
 * waiting ones in arrival order (oldest first).
 *
 * Why: a burst used to start every pod's first sync at once, so each pod's CRI calls queued
 * behind every other pod's and nearly all pods reached Running together at the burst's end
 * (first pod Running 13–21 s into a 200-pod burst on containerd). With a bound, the runtime's
 * own latency sets the pace: the oldest pods run first and the rest follow as slots free up
 * (depth-first progress), while the runtime still has enough calls in flight to stay busy.
 *
 * Only starts take a slot. Terminations, cleanups and syncs of pods that already had their first
 * sync never wait here, so kills and status updates are never queued behind a burst of starts.
 *
 * Invariants:
 *  - At most `limit` holders at any time (limit 0: no bound, acquire never waits).
 *  - Waiters are admitted strictly in the order they called acquire (FIFO).
 *  - An aborted wait leaves the queue and never holds a slot; a slot is released exactly once
 *    (the release function is idempotent).
 */

/** Releases a held slot; calling it again does nothing. */
export type StartSlotRelease = () => void;

interface Waiter {
  grant: (release: StartSlotRelease) => void;
  /** Set once granted or aborted: the waiter is skipped if still in the queue. */
  done: boolean;
}

export class PodStartGate {
  readonly #limit: number;
  #held = 0;
  /** FIFO of waiters; `#head` indexes the oldest not yet admitted (compacted as it advances). */
  #queue: Waiter[] = [];
  #head = 0;
  #waiting = 0;

  /** `limit`: the most starts in flight (an integer ≥ 0; 0 = unbounded). */
  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 0) throw new RangeError(`pod start gate: limit must be an integer >= 0, got ${limit}`);
    this.#limit = limit;
  }

  /** The bound (0: none). */
  get limit(): number {
    return this.#limit;
  }

  /** Starts in flight. */
  get held(): number {
    return this.#held;
  }

  /** Starts waiting for a slot. */
  get waiting(): number {
    return this.#waiting;
  }

  /**
   * Resolves with a release function once a slot is held; rejects with `signal.reason` when the
   * signal aborts first (the caller's pod was killed while it waited).
   */
  acquire(signal?: AbortSignal): Promise<StartSlotRelease> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#limit === 0 || (this.#held < this.#limit && this.#waiting === 0)) return Promise.resolve(this.#take());
    return new Promise<StartSlotRelease>((resolve, reject) => {
      const w: Waiter = {
        done: false,
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = (): void => {
        if (w.done) return;
        w.done = true;
        this.#waiting--;
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(w);
      this.#waiting++;
    });
  }

  #take(): StartSlotRelease {
    this.#held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held--;
      this.#admit();
    };
  }

  /** Grants free slots to the oldest live waiters. */
  #admit(): void {
    while (this.#held < this.#limit && this.#head < this.#queue.length) {
      const w = this.#queue[this.#head++] as Waiter;
      if (w.done) continue;
      w.done = true;
      this.#waiting--;
      w.grant(this.#take());
    }
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
  }
}
