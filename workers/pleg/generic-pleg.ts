/**
 * The relisting PLEG (the kubelet's GenericPLEG, pkg/kubelet/pleg/generic.go), pure: it takes
 * a RuntimeService, a PodCacheWriter, a Clock and an event sink, and knows nothing of threads
 * (pleg-thread.ts wires it to a worker thread).
 *
 * Split by concern: this file is the relist itself (list, diff, build, deliver); the old/current
 * records and the state → event table are pleg-records.ts and pleg-events.ts; every read and
 * write of the pod cache (and which entries were already checked) is pleg-cache-sync.ts; the
 * health check is src/shared/pleg/pleg-health.ts.
 *
 * Each relist (every relistPeriodMs after the previous one ends, like wait.Until):
 *   1. t = cacheNow(clock) (monotonic); ListPodSandbox + ListContainers (both, unfiltered). On failure: log,
 *      count, keep the old records, do not touch the cache (health ages).
 *   2. lastRelist = t (the kubelet records it right after the list succeeds).
 *   3. per pod: events from each container/sandbox old → new state (generateEvents); pods with
 *      events, or marked for reinspection, get their status built (bulk builder: only new or
 *      changed objects are inspected, and not even those when a pod worker already published
 *      them in their listed state — see #published) and written with set(uid, status, error,
 *      t); pods no longer listed are deleted from the cache.
 *   4. cache.updateTime(t) — strictly AFTER all writes of this relist ("all cache entries are
 *      at least as new as the global timestamp").
 *   5. events go out in ONE batch per relist, ContainerChanged filtered out as the kubelet does.
 *
 * A pod whose inspection failed keeps its old record and is reinspected next relist (its
 * events come again then).
 *
 * The first relist of a PLEG that starts with entries in the cache (a replacement for a PLEG
 * thread that died) resyncs from the cache instead of inspecting every pod: a listed pod whose
 * entry has no error and names exactly the listed sandboxes and containers in the listed states
 * is up to date, so its record starts from that listing (no events from records, no
 * inspection) and it gets a PodSync (the dead thread may have written the entry without
 * delivering its events); every other pod is inspected and gets its events as on a cold start.
 * The cost is one entry decode per pod instead of two CRI calls per object, which keeps the
 * resync within a relist or two even mid-burst.
 *
 * Deliberate differences from the kubelet:
 *   - a pod is not inspected for what its pod worker is about to publish: a sandbox listed
 *     READY or a container listed RUNNING that no inspection or worker entry explains yet was
 *     made by a worker whose answer is in flight (only RunPodSandbox / StartContainer make those
 *     states), so the pod is deferred to the next relist (no write, no events; the worker's own
 *     entry is what readers see meanwhile) and then taken from that entry, or inspected if it
 *     is still missing (each object is deferred at most once in a row; see
 *     BulkPodStatusBuilder.build). Exits, sandbox deaths and removals are never deferred; nor is
 *     anything on the first relist, for a pod marked for reinspection or with an error entry;
 *   - a changed pod whose worker-published entry names exactly the listed objects in their
 *     listed states is neither built nor written: that entry is the status the relist would
 *     write (from the worker's own answers), and this relist's updateTime vouches for it;
 *   - a pod whose `set` lost to a newer entry (a pod worker published after this relist's t)
 *     still gets its events; if that entry does not name exactly the listed objects in their
 *     listed states, the next relist compares it with its own listing and reinspects the pod
 *     only if they still disagree, so the cache converges to the newest listed state even
 *     though "newer timestamp wins" (without reinspecting every pod a burst started);
 *   - events are bounded by unacknowledged count (eventCapacity, the kubelet's channel
 *     capacity 1000): the consumer acks what it took. A pod whose events do not fit has them
 *     counted as discarded (kubelet_pleg_discard_events) but keeps its old record, so they
 *     are generated again next relist instead of being lost (the kubelet loses them).
 */
import type { Clock, TimerHandle } from '../../src/shared/clock/clock.js';
import type { RuntimeService } from '../../src/shared/cri/runtime-service.js';
import { silentLogger, type Logger } from '../../src/shared/logging/logger.js';
import { CacheError } from '../../src/shared/pod-cache/pod-cache-errors.js';
import { cacheNow, type CacheEntry, type PodCacheWriter } from '../../src/shared/pod-cache/pod-cache.js';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import type { TerminationMessageReader } from '../runtime-status/termination-message.js';
import { BulkPodStatusBuilder, groupByPod, type RelistPod } from '../runtime-status/bulk-pod-status.js';
import { plegHealth, type PlegHealth } from '../../src/shared/pleg/pleg-health.js';
import { PlegCacheSync, type PlegCacheReader } from './pleg-cache-sync.js';
import type { PodLifecycleEvent } from './pleg-events.js';
import { isQuiet, type Listing, type SettledListing } from './pleg-quiet.js';
import { PodRecords } from './pleg-records.js';
import { countRuntime } from './pleg-runtime-counts.js';
import type { PlegCounters, RuntimeCounts } from '../../src/shared/protocol/pleg-protocol.js';

/** One relist's outcome, delivered to the sink whether or not it succeeded. */
export interface RelistReport {
  /** The relist timestamp (cache time: monotonic ms, taken before listing). */
  timestampMs: number;
  ok: boolean;
  /** kubelet_pleg_relist_duration_seconds observation. */
  durationSeconds: number;
  /** kubelet_pleg_relist_interval_seconds observation (since the previous successful relist start); null on the first. */
  intervalSeconds: number | null;
  events: PodLifecycleEvent[];
  /** Events dropped for lack of capacity in this relist (kubelet_pleg_discard_events increment). */
  discarded: number;
  /** What this relist listed (successful relists only): kubelet_running_pods / kubelet_running_containers. */
  runtimeCounts?: RuntimeCounts;
}


export type RelistSink = (report: RelistReport) => void;

export const GENERIC_PLEG_DEFAULTS = Object.freeze({
  relistPeriodMs: 1000,
  relistThresholdMs: 3 * 60_000,
  eventCapacity: 1000,
  inspectConcurrency: 16,
});

export interface GenericPlegOptions {
  runtime: RuntimeService;
  cache: PodCacheWriter;
  /** For keeping a dead pod's IPs (generic.go getPodIPs); without it the PLEG remembers what it wrote. */
  cacheReader?: PlegCacheReader;
  clock: Clock;
  sink: RelistSink;
  logger?: Logger;
  relistPeriodMs?: number;
  relistThresholdMs?: number;
  eventCapacity?: number;
  inspectConcurrency?: number;
  /** Reads exited containers' termination messages at inspection (pleg-thread.ts builds it from --root-dir). */
  messages?: TerminationMessageReader;
}

type Lifecycle = 'idle' | 'running' | 'closed';

/** What the status builder returns for one relist: built statuses, and pods deferred to the next. */
type BuildResult = Awaited<ReturnType<BulkPodStatusBuilder['build']>>;

/** One relist's outcome, filled in order by its steps (#updateCache, the seeded resyncs, the sweep). */
interface RelistTally {
  /** Events to deliver. */
  out: PodLifecycleEvent[];
  /** Events the channel can still take. */
  room: number;
  /** Events dropped for want of room (generated again next relist). */
  discarded: number;
  /** Listed pods the cache had no room for. */
  unstored: number;
  /** Pods to inspect afresh next relist. */
  needsReinspection: Set<string>;
  /** Pods whose set lost to a newer entry that disagrees with this listing (see #recheck). */
  recheck: Set<string>;
}

export class GenericPleg {
  readonly #runtime: RuntimeService;
  readonly #cache: PodCacheWriter;
  /** Reads and writes of the pod cache, and which entries were already checked (pleg-cache-sync.ts). */
  readonly #sync: PlegCacheSync;
  readonly #clock: Clock;
  readonly #sink: RelistSink;
  readonly #log: Logger;
  readonly #periodMs: number;
  readonly #thresholdMs: number;
  readonly #capacity: number;
  readonly #records = new PodRecords();
  readonly #builder: BulkPodStatusBuilder;
  /** Pods whose status fetch failed (or was not delivered) last relist: inspect again. */
  #reinspect = new Set<string>();
  /**
   * Pods whose cache write lost to a newer worker-published entry that did not agree with the
   * listing (the worker finished after the listing: its entry names more, or newer, objects).
   * Not reinspected at once: the next relist compares that entry with its own listing and
   * reinspects only if they still disagree (the runtime moved on from what the worker saw).
   */
  #recheck = new Set<string>();
  /** Rechecks whose entry was re-published after the relist began: carried to the next relist. */
  readonly #carriedRecheck = new Set<string>();
  /** Pods that get a PodSync event with this relist even without container events. */
  readonly #forceSync = new Set<string>();
  #lastRelistMs: number | undefined;
  #lastRelistMonotonic: number | undefined;
  #inFlight = 0;
  #relisting: Promise<void> | undefined;
  #timer: TimerHandle | undefined;
  #state: Lifecycle = 'idle';
  readonly #abort = new AbortController();
  readonly #counters = { quietRelistsTotal: 0, relistTotal: 0, relistErrorsTotal: 0, discardEventsTotal: 0, inspectErrorsTotal: 0, cacheFullTotal: 0, podErrorsTotal: 0 };
  /** The next relist is this PLEG's first: resync from the cache (see the header). */
  #first = true;
  /**
   * The foreign-writes reading (PlegCacheSync.foreignWrites) taken before the timestamp of the
   * last relist whose entry checks (objects vanished from the runtime, the sweep of unlisted
   * entries) all ran without error. While the reading is unchanged no other thread changed an
   * entry since, and the PLEG's own writes are of listed pods it checks by building them, so
   * the checks would find nothing new and are skipped.
   */
  #entriesCheckedAt: number | undefined;
  /** What the last settled relist listed (pleg-quiet.ts); undefined when it did not settle. */
  #settled: SettledListing | undefined;
  /** Pods the previous relist could not store (the cache was full at its maximum). */
  #unstored = 0;
  /** The cache's recovery count last seen: when it moves, every listed pod is reinspected. */
  #recoveriesSeen = 0;

  constructor(opts: GenericPlegOptions) {
    for (const k of ['runtime', 'cache', 'clock', 'sink'] as const) {
      if (!opts[k]) throw new TypeError(`GenericPleg: ${k} is required`);
    }
    this.#runtime = opts.runtime;
    this.#cache = opts.cache;
    this.#clock = opts.clock;
    this.#sink = opts.sink;
    this.#log = opts.logger ?? silentLogger;
    this.#sync = new PlegCacheSync({ cache: opts.cache, cacheReader: opts.cacheReader, logger: this.#log });
    this.#periodMs = positive('relistPeriodMs', opts.relistPeriodMs ?? GENERIC_PLEG_DEFAULTS.relistPeriodMs);
    this.#thresholdMs = positive('relistThresholdMs', opts.relistThresholdMs ?? GENERIC_PLEG_DEFAULTS.relistThresholdMs);
    this.#capacity = positive('eventCapacity', opts.eventCapacity ?? GENERIC_PLEG_DEFAULTS.eventCapacity);
    this.#builder = new BulkPodStatusBuilder({
      runtime: opts.runtime,
      inspectConcurrency: opts.inspectConcurrency ?? GENERIC_PLEG_DEFAULTS.inspectConcurrency,
      ...(opts.messages ? { messages: opts.messages } : {}),
    });
  }

  /** Relist now and then every period after each relist ends. No-op unless idle. */
  start(): void {
    if (this.#state !== 'idle') return;
    this.#state = 'running';
    this.#loop();
  }

  /** Stop scheduling and wait for a relist in progress to finish. Idempotent. */
  async close(): Promise<void> {
    this.#stopTimer();
    await this.#relisting;
  }

  /** Stop now: abort the relist in progress (its CRI calls are cancelled). Idempotent. */
  destroy(): void {
    this.#stopTimer();
    this.#abort.abort();
  }

  /** The consumer took `count` events off a batch: frees that much capacity. */
  ackEvents(count: number): void {
    this.#inFlight = Math.max(0, this.#inFlight - count);
  }

  healthy(): PlegHealth {
    return plegHealth(this.#lastRelistMonotonic, this.#clock.monotonic(), this.#thresholdMs);
  }

  /** Cache time (monotonic ms) of the last successful relist start, undefined before the first. */
  lastRelistMs(): number | undefined {
    return this.#lastRelistMs;
  }

  counters(): PlegCounters {
    return {
      ...this.#counters,
      inspectCallsTotal: this.#builder.inspectCalls,
      inspectsFromPublishedTotal: this.#builder.fromPublished,
      inspectsDeferredTotal: this.#builder.deferrals,
      podsTracked: this.#records.size,
      eventsInFlight: this.#inFlight,
    };
  }

  /** One relist (serialized: a call during a relist waits for it and does not relist again). */
  relist(): Promise<void> {
    if (this.#relisting) return this.#relisting;
    this.#relisting = this.#relistOnce().catch((err: unknown) => {
      // A bug, not a runtime error (those are handled inside): count it, keep relisting.
      this.#counters.relistErrorsTotal++;
      this.#log.error('GenericPLEG: relist failed', { err: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }).finally(() => {
      this.#relisting = undefined;
    });
    return this.#relisting;
  }

  #loop(): void {
    void this.relist().finally(() => {
      if (this.#state === 'running') this.#timer = this.#clock.setTimer(this.#periodMs, () => this.#loop());
    });
  }

  #stopTimer(): void {
    this.#state = 'closed';
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  async #relistOnce(): Promise<void> {
    const signal = this.#abort.signal;
    if (signal.aborted) return;
    // Read BEFORE the relist's timestamp: an entry another thread writes at or after that
    // timestamp (which this relist's checks leave to the next) moves it (pleg-quiet.ts).
    const foreignWrites = this.#sync.foreignWrites();
    const startMono = this.#clock.monotonic();
    const timestampMs = cacheNow(this.#clock);
    const intervalSeconds = this.#lastRelistMonotonic === undefined ? null : (startMono - this.#lastRelistMonotonic) / 1000;
    let runtimeCounts: RuntimeCounts | undefined;
    const report = (ok: boolean, events: PodLifecycleEvent[], discarded: number): void => {
      this.#sink({ timestampMs, ok, durationSeconds: (this.#clock.monotonic() - startMono) / 1000, intervalSeconds, events, discarded, ...(runtimeCounts ? { runtimeCounts } : {}) });
    };
    this.#counters.relistTotal++;
    let sandboxes, containers;
    try {
      [sandboxes, containers] = await Promise.all([this.#runtime.listPodSandbox({}, { signal }), this.#runtime.listContainers({}, { signal })]);
    } catch (err) {
      if (signal.aborted) return;
      this.#counters.relistErrorsTotal++;
      this.#log.error('GenericPLEG: Unable to retrieve pods', { err: String(err) });
      report(false, [], 0);
      return;
    }
    this.#lastRelistMs = timestampMs;
    this.#lastRelistMonotonic = startMono;

    const listing: Listing = { sandboxes, containers, foreignWrites, recoveries: this.#sync.recoveries() };
    const settled = this.#settled;
    if (isQuiet(listing, settled)) {
      // Nothing the full relist below reads has changed since the last one, which left nothing
      // pending: it would write nothing and produce no events. Only time moves.
      this.#counters.quietRelistsTotal++;
      runtimeCounts = settled.counts;
      this.#cache.updateTime(timestampMs, 0);
      report(true, [], 0);
      return;
    }
    this.#settled = undefined;
    const podErrors = this.#counters.podErrorsTotal;

    const pods = groupByPod(sandboxes, containers);
    runtimeCounts = countRuntime(pods.values());
    this.#records.setCurrent(pods);
    this.#builder.retainOnly(pods);
    const recoveries = this.#sync.recoveries();
    // First relist: entries a dead writer left torn are error entries, never seeded; the rest
    // are intact, so earlier recoveries do not force a reinspection of every pod.
    const first = this.#first;
    const seeded = first ? this.#seedFromCache(pods) : [];
    if (this.#first) this.#recoveriesSeen = recoveries;
    this.#first = false;
    if (recoveries !== this.#recoveriesSeen) {
      // A thread died mid-write and its entries were repaired into error entries: rewrite all.
      this.#recoveriesSeen = recoveries;
      for (const uid of pods.keys()) this.#reinspect.add(uid);
    }
    this.#judgeRechecks(pods, timestampMs);

    // Whether any entry changed by another thread since the checks below last ran in full: if
    // not, they would find what they found then (#entriesCheckedAt).
    const entriesUnchanged = foreignWrites !== undefined && foreignWrites === this.#entriesCheckedAt;
    if (!entriesUnchanged) this.#findVanished(pods, timestampMs);

    const changed = new Map<string, readonly PodLifecycleEvent[]>();
    for (const uid of this.#records.uids()) {
      const events = this.#records.computeEvents(uid);
      if (events.length === 0 && !this.#reinspect.has(uid)) continue;
      changed.set(uid, events);
    }
    const toBuild: RelistPod[] = [];
    /** Pods whose worker-published entry already names exactly this listing: nothing to build or write. */
    const agreed = new Map<string, CacheEntry>();
    for (const uid of changed.keys()) {
      const current = this.#records.getCurrent(uid);
      if (!current) continue;
      if (this.#reinspect.has(uid)) {
        this.#builder.forget(current.pod);
      } else if (!first) {
        const entry = this.#sync.agreeingEntry(uid, current.pod);
        if (entry) {
          agreed.set(uid, entry);
          this.#builder.rememberFrom(current.pod, entry.status);
          continue;
        }
      }
      toBuild.push(current.pod);
    }
    let built, deferred;
    try {
      // The first relist defers nothing: what it lists was made before this PLEG started, by
      // workers that may be gone (a replacement PLEG, an agent restart).
      ({ statuses: built, deferred } = await this.#builder.build(toBuild, {
        signal,
        published: (uid) => this.#published(uid),
        mayDefer: (uid) => !first && !this.#reinspect.has(uid) && !this.#sync.errorEntry(uid),
      }));
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }

    const tally: RelistTally = { out: [], room: Math.max(0, this.#capacity - this.#inFlight), discarded: 0, unstored: 0, needsReinspection: new Set(), recheck: new Set() };
    this.#updateCache(changed, { statuses: built, deferred }, agreed, timestampMs, tally);
    const { out, needsReinspection, recheck, unstored } = tally;
    let { room, discarded } = tally;

    // Pods resynced from their cache entry: a PodSync each, as room allows; the others are
    // inspected next relist and get theirs then (forceSync).
    for (const uid of seeded) {
      if (room > 0) {
        out.push({ id: uid, type: 'PodSync', data: '' });
        room--;
      } else {
        discarded++;
        this.#forceSync.add(uid);
        needsReinspection.add(uid);
      }
    }

    // Entries pod workers published for objects the runtime lost before any relist saw them:
    // dropped, and a resync asked for, so the pod is recreated (PlegCacheSync.sweepUnlisted).
    const tracked = (uid: string): boolean => pods.has(uid) || this.#records.has(uid);
    // No room for its PodSync: the entry stays (counted as discarded) and the next relist's sweep
    // runs in full again (#entriesCheckedAt), so the resync is asked for then, never lost.
    let sweepDeferred = false;
    if (!entriesUnchanged) {
      this.#sync.sweepUnlisted(tracked, timestampMs, (uid) => {
        if (room === 0) {
          discarded++;
          sweepDeferred = true;
          return false;
        }
        out.push({ id: uid, type: 'PodSync', data: '' });
        room--;
        return true;
      }, (uid, err) => this.#podError(uid, err));
    }
    this.#sync.retain(tracked, this.#records.size);
    for (const uid of this.#forceSync) if (!pods.has(uid) && !needsReinspection.has(uid)) this.#forceSync.delete(uid);

    // After every write of this relist, never before. With the pods it could not store: while
    // there are any, readers treat a missing entry as unknown (never as "no runtime objects").
    this.#cache.updateTime(timestampMs, unstored);
    if (unstored !== this.#unstored) {
      if (unstored > 0) this.#log.error('PLEG: pod cache full; pods without a status are not synced until there is room', { unstored, was: this.#unstored });
      else this.#log.info('PLEG: pod cache has room again; every listed pod has a status', { was: this.#unstored });
      this.#unstored = unstored;
    }

    if (discarded > 0) {
      this.#counters.discardEventsTotal += discarded;
      this.#log.error('Event channel is full, discard this relist() cycle event', { discarded });
    }
    this.#reinspect = needsReinspection;
    for (const uid of this.#carriedRecheck) if (!needsReinspection.has(uid)) recheck.add(uid);
    this.#carriedRecheck.clear();
    this.#recheck = recheck;
    this.#inFlight += out.length;
    // Settled when everything this relist saw is delivered and written and nothing waits for a
    // later relist: then an identical next listing, with no entry changed by another thread,
    // needs no work (pleg-quiet.ts).
    const settledNow = !first && discarded === 0 && deferred.size === 0 && unstored === 0 && podErrors === this.#counters.podErrorsTotal &&
      needsReinspection.size === 0 && recheck.size === 0 && this.#forceSync.size === 0;
    if (settledNow && runtimeCounts) this.#settled = { ...listing, counts: runtimeCounts };
    // Every entry was checked against this listing as of the reading taken before `timestampMs`
    // (entries written later were left to the next relist, and moved the count).
    this.#entriesCheckedAt = podErrors === this.#counters.podErrorsTotal && !sweepDeferred ? foreignWrites : undefined;
    report(true, out, discarded);
  }

  /**
   * The cache half of a relist (the kubelet's updateCache): per changed pod, in order (pods gone
   * from the runtime first, so their slots are free before new pods need one), store the built
   * status, keep the entry a worker already published for this listing, or delete the entry of
   * a pod no longer listed; and queue the pod's events while the channel has room. What could
   * not be stored, delivered or judged is noted in `tally` for the next relist.
   */
  #updateCache(changed: ReadonlyMap<string, readonly PodLifecycleEvent[]>, build: BuildResult, agreed: ReadonlyMap<string, CacheEntry>, timestampMs: number, tally: RelistTally): void {
    const { statuses: built, deferred } = build;
      // Pods gone from the runtime first: their slots are free before new pods need one.
      const listed = (uid: string): boolean => built.has(uid) || deferred.has(uid) || agreed.has(uid);
      const ordered = [...changed].sort(([a], [b]) => (listed(a) ? 1 : 0) - (listed(b) ? 1 : 0));
      for (const [uid, events] of ordered) {
        // Deferred (its worker has not published what it just made): as if unchanged this time;
        // the record stays old, so its events come with the next relist's build.
        if (deferred.has(uid)) continue;
        // One pod's cache error (a stuck lock, a corrupt entry) must not abort the relist of all.
        try {
          const deliver = events.filter((e) => e.type !== 'ContainerChanged');
          const result = built.get(uid);
          const entry = agreed.get(uid);
          if (entry) {
            // The entry is this listing's status already (the worker's own answers): it stands as
            // written, checked as of this relist (updateTime(t) below vouches for it at t).
            this.#sync.markChecked(uid, entry.timestampMs);
            this.#logExits(events, entry.status);
            if (this.#forceSync.has(uid) && deliver.length === 0) deliver.push({ id: uid, type: 'PodSync', data: '' });
          } else if (!result) {
            // Not listed any more: no visible containers or sandboxes.
            this.#log.v(4).info('PLEG: Delete status for pod', { podUID: uid });
            const had = this.#sync.hadObjects(uid);
            this.#sync.delete(uid);
            // A pod whose objects vanished without the events saying so (never seen, or seen
            // only by a failed inspection) still needs a sync, or it waits for the periodic resync.
            if (had && deliver.length === 0) deliver.push({ id: uid, type: 'PodSync', data: '' });
          } else {
            result.status.ips = this.#sync.preserveIps(uid, result.status);
            const stored = this.#sync.store(uid, result.status, result.error, timestampMs);
            if (stored === 'full') {
              this.#counters.cacheFullTotal++;
              tally.unstored++;
            }
            if (result.error || stored === 'failed' || stored === 'full') {
              if (result.error) {
                this.#counters.inspectErrorsTotal++;
                this.#log.v(4).info('PLEG: Ignoring events for pod', { pod: `${result.status.namespace}/${result.status.name}`, podUID: uid, err: result.error.message });
              }
              tally.needsReinspection.add(uid);
              continue;
            }
            if (stored !== 'stale') this.#sync.markChecked(uid, timestampMs);
            else if (!this.#sync.newerEntryAgrees(uid, this.#records.getCurrent(uid)?.pod)) tally.recheck.add(uid);
            this.#logExits(events, result.status);
            if (this.#forceSync.has(uid) && deliver.length === 0) deliver.push({ id: uid, type: 'PodSync', data: '' });
          }
          if (deliver.length > tally.room) {
            // No room: the record stays old, so these events are generated again next relist.
            tally.discarded += deliver.length;
            if (this.#forceSync.has(uid)) tally.needsReinspection.add(uid);
            continue;
          }
          tally.room -= deliver.length;
          this.#forceSync.delete(uid);
          this.#records.update(uid);
          tally.out.push(...deliver);
        } catch (err) {
          this.#podError(uid, err);
          tally.needsReinspection.add(uid);
        }
      }
  }

  /** Pods whose set lost to a disagreeing newer entry last relist (#recheck): judged on this listing. */
  #judgeRechecks(pods: ReadonlyMap<string, RelistPod>, timestampMs: number): void {
    for (const uid of this.#recheck) {
      if (this.#reinspect.has(uid)) continue;
      const listed = pods.get(uid);
      if (!listed) continue;
      try {
        if (this.#sync.publishedSince(uid, timestampMs)) this.#carriedRecheck.add(uid); // published again since: judge next relist
        else if (!this.#sync.newerEntryAgrees(uid, listed)) this.#reinspect.add(uid);
      } catch (err) {
        this.#podError(uid, err);
        this.#reinspect.add(uid);
      }
    }
    this.#recheck = new Set();
  }

  /**
   * Objects a worker published that the runtime lost (restarted without them) while the pod
   * itself is still listed: the records saw no change, so only the entry shows it.
   */
  #findVanished(pods: ReadonlyMap<string, RelistPod>, timestampMs: number): void {
    for (const uid of pods.keys()) {
      if (this.#reinspect.has(uid)) continue;
      try {
        if (this.#sync.vanished(uid, pods.get(uid)!, timestampMs)) {
          this.#log.v(2).info('PLEG: objects in the cache are gone from the runtime; reinspecting', { podUID: uid });
          this.#reinspect.add(uid);
          this.#forceSync.add(uid);
        }
      } catch (err) {
        this.#podError(uid, err);
      }
    }
  }

  /**
   * The first relist's resync from the cache (see the header): the pods whose entry matches
   * their listing start with that listing as their record. Returns them.
   */
  #seedFromCache(pods: ReadonlyMap<string, RelistPod>): string[] {
    const seeded = this.#sync.upToDate(pods, (uid, err) => this.#podError(uid, err));
    for (const uid of seeded) this.#records.seed(uid); // old := this listing: no events from the records
    if (seeded.length > 0) this.#log.info('PLEG: resynced from the pod cache', { pods: pods.size, fromCache: seeded.length });
    return seeded;
  }

  /**
   * A pod worker's published entry for the builder to take uninspected objects from (see
   * BulkPodStatusBuilder.build): none for pods to reinspect (their entry is what is doubted).
   */
  #published(uid: string): RuntimePodStatus | undefined {
    return this.#reinspect.has(uid) ? undefined : this.#sync.published(uid);
  }

  #podError(uid: string, err: unknown): void {
    this.#counters.podErrorsTotal++;
    this.#log.error('PLEG: pod skipped in this relist', { podUID: uid, code: err instanceof CacheError ? err.code : 'ERR_PLEG_POD', err: String(err) });
  }

  #logExits(events: readonly PodLifecycleEvent[], status: RuntimePodStatus): void {
    const log = this.#log.v(2);
    for (const e of events) {
      if (e.type !== 'ContainerDied') continue;
      const c = status.containers.find((x) => x.id === e.data);
      if (c) log.info('Generic (PLEG): container finished', { podID: e.id, containerID: e.data, exitCode: c.exitCode });
    }
  }
}


function positive(name: string, v: number): number {
  if (!Number.isFinite(v) || v <= 0) throw new RangeError(`GenericPleg: ${name} must be a positive number, got ${v}`);
  return v;
}
