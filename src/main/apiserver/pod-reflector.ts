/**
 * The reflector of the API pod source (client-go tools/cache/reflector.go ListAndWatch, as the
 * kubelet runs it for pods bound to its node), as an explicit state machine:
 *
 *   idle ─start─▶ listing ─ok─▶ watching ─(timeout / server close)─▶ watching (from the last RV)
 *                   ▲  │fail          │ 410 Gone (answer or ERROR event) ─▶ listing (RV "")
 *                   │  ▼              │ connection error / other failure ─▶ backoff ─▶ watching
 *                 backoff ◀───────────┘ (or listing, if no list succeeded yet)
 *   any ─close─▶ stopped
 *
 * - The first list is at resourceVersion "0" (served from the server's watch cache); a relist
 *   after 410 is at "" (a quorum read), since the cache may be older than what was already seen.
 * - Watches ask for bookmarks and a random server-side timeout in [5, 10) minutes, and resume
 *   from the newest resourceVersion seen (list, events, bookmarks).
 * - Failures back off 800 ms, doubling to 30 s; a list or watch that delivered resets it. A watch
 *   that ends within 1 s without delivering counts as a failure, so a server closing watches at
 *   once cannot make the loop spin.
 * - Consumers get `onList(items)` (replace everything) and `onEvent(ev)` (ADDED/MODIFIED/
 *   DELETED), then `onBatchEnd()` once per list and once per batch of watch events, so they can
 *   publish one complete set per batch, not one per event. A batch is every event that arrives
 *   within `batchWindowMs` (50 ms) of the first one: the consumer's SET is O(pods) on the main
 *   thread, and during a 1,000-pod burst events arrive one by one (each create, each status
 *   write echoed back), which made one full merge per event — seconds of main-thread work that
 *   delayed everything else on it, the node lease's timer included (CPU profile of a 1,000-pod
 *   burst with service-account volumes: ~9 s of main-thread time in the merge over ~60 s, stalls
 *   of 1–3 s). The window bounds SETs to 20/s and adds at most 50 ms to when a change is seen.
 *   0: one batch per arrival.
 * - While the server is unreachable nothing is delivered: consumers keep what they had.
 */
import type { Clock, Random } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { apiErrorMessage, isAborted, isGone } from './api-errors.js';
import type { PodListWatcher, WatchEvent } from './api-roles.js';
import { nextBackoffMs } from '../../shared/backoff/exponential-backoff.js';

export type ReflectorState = 'idle' | 'listing' | 'watching' | 'backoff' | 'stopped';

export interface ReflectorDeps {
  lw: PodListWatcher;
  clock: Clock;
  random: Random;
  logger: Logger;
  onList(items: readonly unknown[]): void;
  onEvent(ev: WatchEvent): void;
  onBatchEnd(): void;
  /** Observer of state changes (tests assert sequences). */
  onState?: (s: ReflectorState) => void;
  /** Watch events within this many ms of a batch's first one end that batch (default 50; 0: per arrival). */
  batchWindowMs?: number;
  /** What its log lines call it (default "api pod source"). */
  name?: string;
}

export const REFLECTOR_DEFAULTS = Object.freeze({
  backoffInitialMs: 800,
  backoffMaxMs: 30_000,
  minWatchTimeoutSeconds: 300,
  shortWatchMs: 1_000,
  batchWindowMs: 50,
});

export class PodReflector {
  readonly #d: ReflectorDeps;
  #state: ReflectorState = 'idle';
  #rv = '';
  #listed = false;
  /** The RV for the next list: '0' at first, '' after a 410. */
  #listRv = '0';
  #backoffMs: number = REFLECTOR_DEFAULTS.backoffInitialMs;
  #batchScheduled = false;
  readonly #stop = new AbortController();
  #done: Promise<void> | undefined;

  readonly #batchWindowMs: number;
  readonly #name: string;

  constructor(deps: ReflectorDeps) {
    this.#d = deps;
    this.#name = deps.name ?? 'api pod source';
    this.#batchWindowMs = deps.batchWindowMs ?? REFLECTOR_DEFAULTS.batchWindowMs;
    if (!(Number.isFinite(this.#batchWindowMs) && this.#batchWindowMs >= 0 && this.#batchWindowMs <= 10_000)) throw new RangeError(`PodReflector: batchWindowMs must be within [0, 10000], got ${deps.batchWindowMs}`);
  }

  get state(): ReflectorState {
    return this.#state;
  }

  /** The newest resourceVersion seen. */
  get resourceVersion(): string {
    return this.#rv;
  }

  /** Starts the loop. Idempotent. */
  start(): void {
    this.#done ??= this.#run();
  }

  /** Stops the loop, aborting a list or watch in flight; nothing is delivered after it resolves. Idempotent. */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#done;
    this.#set('stopped');
  }

  #set(s: ReflectorState): void {
    if (this.#state === s || this.#state === 'stopped') return;
    this.#state = s;
    this.#d.onState?.(s);
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      if (!this.#listed) {
        this.#set('listing');
        const ok = await this.#list(signal);
        if (signal.aborted) break;
        if (!ok) await this.#backoff(signal);
        continue;
      }
      this.#set('watching');
      const outcome = await this.#watch(signal);
      if (signal.aborted) break;
      switch (outcome) {
        case 'continue':
          break;
        case 'relist':
          this.#listed = false;
          this.#listRv = '';
          break;
        case 'backoff':
          await this.#backoff(signal);
          break;
        default: {
          const never: never = outcome;
          throw new Error(`unknown watch outcome ${String(never)}`);
        }
      }
    }
    this.#set('stopped');
  }

  async #list(signal: AbortSignal): Promise<boolean> {
    try {
      const list = await this.#d.lw.listPods(this.#listRv, signal);
      if (signal.aborted) return false;
      this.#rv = list.resourceVersion;
      this.#listed = true;
      this.#backoffMs = REFLECTOR_DEFAULTS.backoffInitialMs;
      this.#d.logger.v(2).info(`${this.#name}: listed`, { pods: list.items.length, resourceVersion: list.resourceVersion });
      this.#d.onList(list.items);
      this.#d.onBatchEnd();
      return true;
    } catch (err) {
      if (!signal.aborted && !isAborted(err)) this.#d.logger.error(`${this.#name}: list failed`, { error: apiErrorMessage(err), backoffMs: this.#backoffMs });
      return false;
    }
  }

  async #watch(signal: AbortSignal): Promise<'continue' | 'relist' | 'backoff'> {
    const timeoutSeconds = REFLECTOR_DEFAULTS.minWatchTimeoutSeconds + Math.floor(this.#d.random() * REFLECTOR_DEFAULTS.minWatchTimeoutSeconds);
    const started = this.#d.clock.monotonic();
    let delivered = 0;
    let gone = false;
    let failed = false;
    // Aborts the stream at once on a 410 ERROR event (the server would close it anyway).
    const ac = new AbortController();
    const onStop = (): void => ac.abort();
    signal.addEventListener('abort', onStop, { once: true });
    try {
      const end = await this.#d.lw.watchPods(this.#rv, timeoutSeconds, (ev) => {
        if (ac.signal.aborted) return;
        const rv = (ev.object['metadata'] as { resourceVersion?: unknown } | undefined)?.resourceVersion;
        switch (ev.type) {
          case 'ERROR': {
            const code = ev.object['code'];
            if (code === 410) gone = true;
            else failed = true;
            this.#d.logger.info(`${this.#name}: watch error event`, { code: typeof code === 'number' ? code : null, message: String(ev.object['message'] ?? '').slice(0, 200) });
            ac.abort();
            return;
          }
          case 'BOOKMARK':
            if (typeof rv === 'string' && rv !== '') this.#rv = rv;
            delivered++;
            return;
          case 'ADDED':
          case 'MODIFIED':
          case 'DELETED':
            if (typeof rv === 'string' && rv !== '') this.#rv = rv;
            delivered++;
            this.#d.onEvent(ev);
            this.#scheduleBatchEnd();
            return;
          default: {
            const never: never = ev.type;
            throw new Error(`unknown watch event ${String(never)}`);
          }
        }
      }, ac.signal);
      if (end.kind === 'status') {
        if (end.status === 410) gone = true;
        else {
          failed = true;
          this.#d.logger.error(`${this.#name}: watch refused`, { status: end.status, backoffMs: this.#backoffMs });
        }
      }
    } catch (err) {
      if (signal.aborted) return 'continue';
      if (isGone(err)) gone = true;
      else if (!(isAborted(err) && (gone || failed))) {
        failed = true;
        this.#d.logger.error(`${this.#name}: watch failed`, { error: apiErrorMessage(err), backoffMs: this.#backoffMs });
      }
    } finally {
      signal.removeEventListener('abort', onStop);
    }
    // A watch that delivered shows the server works: the next failure starts the backoff over.
    if (delivered > 0) this.#backoffMs = REFLECTOR_DEFAULTS.backoffInitialMs;
    if (gone) {
      this.#d.logger.info(`${this.#name}: resourceVersion expired (410), relisting`, { resourceVersion: this.#rv });
      return 'relist';
    }
    if (failed) return 'backoff';
    if (delivered === 0 && this.#d.clock.monotonic() - started < REFLECTOR_DEFAULTS.shortWatchMs) return 'backoff';
    return 'continue';
  }

  /** One onBatchEnd per run of synchronously delivered events (a network chunk). */
  #scheduleBatchEnd(): void {
    if (this.#batchScheduled) return;
    this.#batchScheduled = true;
    const end = (): void => {
      this.#batchScheduled = false;
      if (!this.#stop.signal.aborted) this.#d.onBatchEnd();
    };
    if (this.#batchWindowMs === 0) queueMicrotask(end);
    else {
      // Not cancelled on close: `end` checks the stop signal (a closed reflector publishes nothing).
      this.#d.clock.setTimer(this.#batchWindowMs, end, { unref: true });
    }
  }

  async #backoff(signal: AbortSignal): Promise<void> {
    this.#set('backoff');
    const ms = this.#backoffMs;
    this.#backoffMs = nextBackoffMs(this.#backoffMs, { maxMs: REFLECTOR_DEFAULTS.backoffMaxMs });
    await this.#d.clock.sleep(ms, signal).catch(() => {});
  }
}
