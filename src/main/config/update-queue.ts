/**
 * The FIFO between the pod config merger and its single consumer (the sync loop on the main
 * thread). Select-friendly: `waitReady()` resolves when an item is available without taking it,
 * so the sync loop can race it against its other wake-ups (PLEG events, the sync ticker) and then
 * `tryNext()` — nothing is ever taken by a promise that lost a race.
 *
 * Unbounded by itself; the merger keeps it short by deferring (and coalescing) source SETs while
 * `length >= capacity`, see pod-config.ts.
 */
export class UpdateQueue<T> {
  #items: T[] = [];
  #head = 0;
  #closed = false;
  #waiters = new Set<() => void>();
  /** Called after an item is taken, so the producer can refill. */
  readonly #onTake: () => void;

  constructor(onTake: () => void = () => {}) {
    this.#onTake = onTake;
  }

  get length(): number {
    return this.#items.length - this.#head;
  }

  get closed(): boolean {
    return this.#closed;
  }

  push(item: T): void {
    if (this.#closed) return;
    this.#items.push(item);
    this.#wake();
  }

  /** Takes the oldest item, or undefined when empty. */
  tryNext(): T | undefined {
    if (this.length === 0) return undefined;
    const item = this.#items[this.#head] as T;
    this.#items[this.#head] = undefined as T; // let it be collected
    this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    this.#onTake();
    return item;
  }

  /** Resolves when an item is available or the queue is closed; rejects with the signal's reason on abort. */
  waitReady(signal?: AbortSignal): Promise<void> {
    if (this.length > 0 || this.#closed) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters.delete(done);
        reject(signal?.reason);
      };
      const done = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.#waiters.add(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The next item; undefined once the queue is closed and drained. */
  async next(signal?: AbortSignal): Promise<T | undefined> {
    for (;;) {
      const item = this.tryNext();
      if (item !== undefined) return item;
      if (this.#closed) return undefined;
      await this.waitReady(signal);
    }
  }

  /** Stops accepting items; queued items can still be taken. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#wake();
  }

  #wake(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) w();
  }
}
