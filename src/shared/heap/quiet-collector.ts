/**
 * Collects a thread's garbage once it goes quiet after a burst (issue 15: RSS at thousands of
 * pods). Every thread of the agent runs one, on its own isolate: `gc()` and the event-loop
 * utilisation it reads are the calling thread's only.
 *
 * Why: V8 collects the old generation only when it reaches a limit set at the last full
 * collection (live size × a growth factor of up to 4 under a high allocation rate). After a burst
 * of pod starts each thread holds its heap at the high-water mark: at 5,000 pods a pod-worker
 * thread's used heap was 173–181 MiB against ~25 MiB live, and V8's memory reducer does not
 * step in while relists and syncs keep allocating. A full collection frees those pages, and
 * freed pages leave the RSS. It costs one full mark-compact of the live heap (tens of ms on a
 * thread that is idle anyway); during a burst nothing is collected by this module, so burst CPU
 * is unchanged.
 *
 * Policy, checked every `periodMs` of the injected clock (an unref'd timer):
 *   quiet  = the thread's event-loop utilisation over the period < `quietUtilization` and its
 *            used heap grew less than `quietGrowthBytes` over the period, for `quietPeriods`
 *            periods in a row (a pod worker waiting on a runtime-bound burst of 5,000 pods is
 *            below 20% busy, but its heap keeps growing: that is not quiet yet);
 *   grown  = used heap − used heap right after the previous collection (or at start)
 *            ≥ max(`minGarbageBytes`, `garbageRatio` × that baseline);
 *   rested = at least `minIntervalMs` since the previous collection.
 * quiet ∧ grown ∧ rested ⇒ `passes` calls of `gc()` (default 2), the baseline becomes the used
 * heap after them, and the quiet count starts over. Why two: after a burst the live objects are
 * spread over most old-space pages, so one full collection frees the garbage but few pages (a
 * worker at 5,000 pods went from 181 to 28 MiB used and kept 151 MiB committed); V8 picks pages
 * to compact from what the previous collection found, so the second one compacts them and the
 * pages leave the RSS (a test isolate: 111 → 32 MiB committed with two, 113 → 81 with one).
 * So a thread that stays quiet is collected once, not once per period, and a steady state that
 * allocates is collected at most once per `minIntervalMs` (10 s: short enough that a collection
 * of start-up garbage does not hold off the one after a burst that follows at once).
 *
 * `gc` is V8's, exposed by {@link exposeGc} (`--expose-gc` set with v8.setFlagsFromString before
 * the agent starts its threads, so every worker isolate gets the global). Without it (a tool
 * that did not call exposeGc) the collector does nothing and says so through `available`.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Clock, TimerHandle } from '../clock/clock.js';

export interface QuietCollectorOptions {
  clock: Clock;
  /** Check period (default QUIET_COLLECTOR_DEFAULTS.periodMs, at least 100). */
  periodMs?: number;
  /** A period is quiet when the event loop was busy less than this share of it (0–1). */
  quietUtilization?: number;
  /** Quiet periods in a row before a collection. */
  quietPeriods?: number;
  /** A period is quiet only if the used heap grew less than this over it, in bytes. */
  quietGrowthBytes?: number;
  /** Smallest heap growth since the last collection worth collecting, in bytes. */
  minGarbageBytes?: number;
  /** Growth as a share of the heap after the last collection that is worth collecting. */
  garbageRatio?: number;
  /** Shortest time between two collections, in ms. */
  minIntervalMs?: number;
  /** Full collections per quiet collection (see above). */
  passes?: number;
  /** The collector (default: V8's `gc`, if exposed). Tests inject a fake. */
  gc?: (() => void) | undefined;
  /** Used heap bytes of this thread (default v8.getHeapStatistics().used_heap_size). */
  usedHeapBytes?: () => number;
  /** Event-loop utilisation of this thread since the previous call, 0–1 (default: perf_hooks). */
  utilization?: () => number;
  /** Told after each collection (logs, metrics, tests). */
  onCollect?: (c: QuietCollection) => void;
}

export interface QuietCollection {
  usedBeforeBytes: number;
  usedAfterBytes: number;
  durationMs: number;
}

export const QUIET_COLLECTOR_DEFAULTS = Object.freeze({
  periodMs: 1_000,
  quietUtilization: 0.2,
  quietPeriods: 2,
  quietGrowthBytes: 2 * 1024 * 1024,
  minGarbageBytes: 16 * 1024 * 1024,
  garbageRatio: 0.5,
  minIntervalMs: 10_000,
  passes: 2,
});

export interface QuietCollector {
  /** False when no `gc` was available: the collector never runs. */
  readonly available: boolean;
  /** Collections so far. */
  readonly collections: number;
  /** Stops checking. Idempotent. */
  stop(): void;
}

/** A collection as log fields (MiB, ms). */
export function quietCollectionFields(c: QuietCollection): Record<string, number> {
  return { usedBeforeMiB: Math.round(c.usedBeforeBytes / 2 ** 20), usedAfterMiB: Math.round(c.usedAfterBytes / 2 ** 20), ms: Math.round(c.durationMs) };
}

/**
 * Sets V8's --expose-gc for every isolate created from now on (call before any worker thread
 * starts) and returns this thread's `gc`. Node documents flags set after start-up as unsupported
 * in general; --expose-gc only adds the `gc` global to new contexts, which is what is used here.
 */
export function exposeGc(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return threadGc() ?? (vm.runInNewContext('gc') as () => void);
}

/** This thread's `gc` global, if the isolate was created with --expose-gc. */
export function threadGc(): (() => void) | undefined {
  const g: unknown = Reflect.get(globalThis, 'gc');
  return typeof g === 'function' ? (g as () => void) : undefined;
}

function eluSampler(): () => number {
  let prev: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const u = performance.eventLoopUtilization(now, prev).utilization;
    prev = now;
    return u;
  };
}

export function startQuietCollector(o: QuietCollectorOptions): QuietCollector {
  const d = QUIET_COLLECTOR_DEFAULTS;
  const periodMs = o.periodMs ?? d.periodMs;
  const quietUtilization = o.quietUtilization ?? d.quietUtilization;
  const quietPeriods = o.quietPeriods ?? d.quietPeriods;
  const quietGrowth = o.quietGrowthBytes ?? d.quietGrowthBytes;
  const minGarbage = o.minGarbageBytes ?? d.minGarbageBytes;
  const ratio = o.garbageRatio ?? d.garbageRatio;
  const minIntervalMs = o.minIntervalMs ?? d.minIntervalMs;
  const passes = o.passes ?? d.passes;
  if (!(periodMs >= 100)) throw new RangeError(`quiet collector: periodMs must be at least 100, got ${periodMs}`);
  if (!(quietUtilization > 0 && quietUtilization <= 1)) throw new RangeError(`quiet collector: quietUtilization must be in (0, 1], got ${quietUtilization}`);
  if (!(Number.isInteger(quietPeriods) && quietPeriods >= 1)) throw new RangeError(`quiet collector: quietPeriods must be a positive integer, got ${quietPeriods}`);
  if (!(Number.isInteger(passes) && passes >= 1 && passes <= 4)) throw new RangeError(`quiet collector: passes must be an integer in [1, 4], got ${passes}`);
  if (!(minGarbage >= 0) || !(ratio >= 0) || !(minIntervalMs >= 0) || !(quietGrowth > 0)) throw new RangeError('quiet collector: minGarbageBytes, garbageRatio and minIntervalMs must be >= 0, quietGrowthBytes > 0');
  const gc = 'gc' in o ? o.gc : threadGc();
  const used = o.usedHeapBytes ?? (() => v8.getHeapStatistics().used_heap_size);
  const utilization = o.utilization ?? eluSampler();

  let collections = 0;
  let stopped = false;
  let timer: TimerHandle | undefined;
  /** Used heap right after the last collection (or at start): what is taken as live. */
  let baseline = used();
  let lastCollectAt = -Infinity;
  let quietRun = 0;
  /** Used heap at the previous check. */
  let previous = baseline;

  const check = (): void => {
    if (stopped || gc === undefined) return;
    const before = used();
    quietRun = utilization() < quietUtilization && before - previous < quietGrowth ? quietRun + 1 : 0;
    previous = before;
    const now = o.clock.monotonic();
    if (quietRun >= quietPeriods && before - baseline >= Math.max(minGarbage, ratio * baseline) && now - lastCollectAt >= minIntervalMs) {
      const t0 = performance.now();
      for (let i = 0; i < passes; i++) gc();
      const durationMs = performance.now() - t0;
      baseline = used();
      previous = baseline;
      lastCollectAt = o.clock.monotonic();
      quietRun = 0;
      collections++;
      o.onCollect?.({ usedBeforeBytes: before, usedAfterBytes: baseline, durationMs });
    } else if (before < baseline) {
      baseline = before; // V8 collected on its own: the live size is at most this
    }
    timer = o.clock.setTimer(periodMs, check, { unref: true });
  };
  if (gc !== undefined) timer = o.clock.setTimer(periodMs, check, { unref: true });

  return {
    available: gc !== undefined,
    get collections() {
      return collections;
    },
    stop() {
      stopped = true;
      timer?.cancel();
      timer = undefined;
    },
  };
}
