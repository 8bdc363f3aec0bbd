/**
 * Scenario harness for pod lifecycle tests: the agent's real per-pod stack, in-process, on ONE
 * FakeClock, against the in-process SimulatedRuntime (real gRPC over a unix socket).
 *
 *   main-thread role (real code): PodConfig (one 'api' source) → SyncLoop → PodLifecycle →
 *     InlineDispatcher; WorkQueue requeues; StatusManager holds what /pods shows. The harness
 *     subclasses StatusManager only to record every status it is given.
 *   worker role (real code, wired as workers/pod-worker-factory.ts wires it): CriClient,
 *     pod cache, ProberManager, KubeRuntimeSyncer, PodWorkers with the fresh-status refresher.
 *   PLEG: GenericPleg on the same clock writes the cache and feeds the sync loop's PLEG input.
 *
 * Time: nothing moves unless the test calls `advance`/`until`, which step the clock from one
 * due timer to the next and let real I/O settle between steps. "Settled" is decided by
 * counting, not by waiting: every CRI call, log-directory operation and probe run goes through a
 * counting wrapper. Calls that cannot wait on the clock (everything but ExecSync, StopContainer,
 * StopPodSandbox, PullImage and probe runs) are always awaited; clock-waitable ones are
 * considered parked on the clock when nothing at all progressed for PARK_TURNS event-loop turns
 * (an unparked round trip to the in-process server takes a handful of turns). While a call that
 * cannot wait on the clock is in flight, settle awaits the next start/finish instead of turning
 * (bounded in real time). No wall-clock sleeps anywhere; a settle that never ends fails loudly
 * after MAX_SETTLE_TURNS. Still counted in turns: deciding that nothing more will happen without
 * time passing (idle) and that a clock-waitable call is parked — no component reports either.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Container, V1ContainerStatus, V1Pod, V1PodSpec, V1PodStatus } from '@kubernetes/client-node';
import { FakeClock } from '../../src/shared/clock/fake-clock.js';
import { within } from '../harness/poll.js';
import { applyApiDefaults } from '../../src/shared/manifest/pod-api-defaults.js';
import { PodConfig } from '../../src/main/config/pod-config.js';
import { ApiserverSource, type PodSetSink } from '../../src/shared/manifest/pod-update.js';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { InlineDispatcher } from '../../src/main/dispatch/inline-dispatcher.js';
import type { PodDispatcher } from '../../src/main/dispatch/pod-dispatcher.js';
import { createLogger, type Logger } from '../../src/shared/logging/logger.js';
import { createPodCache } from '../../src/shared/pod-cache/pod-cache-create.js';
import { PodManager } from '../../src/main/pod-manager/pod-manager.js';
import { SimulatedRuntime } from '../../src/simruntime/simulated-runtime.js';
import { StatusManager } from '../../src/main/status/status-manager.js';
import { PodLifecycle } from '../../src/main/syncloop/pod-lifecycle.js';
import { SyncLoop } from '../../src/main/syncloop/sync-loop.js';
import { WorkQueue } from '../../src/main/syncloop/work-queue.js';
import { KubeRuntimeSyncer } from '../../workers/kuberuntime/kuberuntime-syncer.js';
import { nodePodLogDirs } from '../../workers/kuberuntime/pod-log-dirs.js';
import type { ImagePullWindow } from '../../src/shared/protocol/pod-worker-protocol.js';
import type { PodLogDirs } from '../../workers/kuberuntime/sync-pod.js';
import { GenericPleg } from '../../workers/pleg/generic-pleg.js';
import { PodWorkerHost } from '../../workers/pod-worker-host.js';
import type { WorkerToMain } from '../../src/shared/protocol/pod-worker-protocol.js';
import { freshStatusRefresher } from '../../workers/fresh-status.js';
import { PodWorkers } from '../../workers/pod-workers.js';
import { createProber, type Prober } from '../../workers/prober/prober.js';
import type { ProbeType, ProbeUpdate } from '../../src/shared/protocol/probe-update.js';
import { ProberManager } from '../../workers/prober/prober-manager.js';

/** Turns without any progress after which in-flight clock-waitable calls count as parked on the clock. */
const PARK_TURNS = 40;
/** Real-time bound on a call that cannot wait on the clock (a hung call fails the test). */
const AWAITED_BOUND_MS = 60_000;
/** Turns after which a settle fails (a hung call, or a bug in the harness). */
const MAX_SETTLE_TURNS = 200_000;
/** CRI methods that may legitimately wait on the (fake) clock inside the simulated runtime. */
const CLOCK_WAITABLE = new Set(['execSync', 'stopContainer', 'stopPodSandbox', 'pullImage']);

/** Counts in-flight asynchronous operations at the seams, and every start/finish as progress. */
class Activity {
  awaited = 0;
  waitable = 0;
  progress = 0;
  readonly inFlight = new Map<string, number>();
  /** Every tracked call, in order, with the clock time (for diagnostics). */
  readonly calls: string[] = [];
  now: () => number = () => 0;
  #changeWaiters: (() => void)[] = [];

  /** Resolves at the next start or finish of a tracked operation (a completion signal). */
  nextChange(): Promise<void> {
    return new Promise<void>((resolve) => this.#changeWaiters.push(resolve));
  }

  track<T>(what: string, p: Promise<T>, waitable: boolean): Promise<T> {
    this.calls.push(`${this.now()} ${what}`);
    this.#add(what, waitable, 1);
    const done = (): void => this.#add(what, waitable, -1);
    p.then(done, done);
    return p;
  }

  #add(what: string, waitable: boolean, d: 1 | -1): void {
    if (waitable) this.waitable += d;
    else this.awaited += d;
    this.progress++;
    const n = (this.inFlight.get(what) ?? 0) + d;
    if (n === 0) this.inFlight.delete(what);
    else this.inFlight.set(what, n);
    const w = this.#changeWaiters;
    this.#changeWaiters = [];
    for (const f of w) f();
  }
}

/** A Proxy that counts every promise-returning method call of `target`. */
function counted<T extends object>(target: T, activity: Activity, waitable: (method: string) => boolean): T {
  return new Proxy(target, {
    get(t, prop) {
      const v: unknown = Reflect.get(t, prop, t);
      if (typeof v !== 'function' || typeof prop !== 'string') return v;
      return (...args: unknown[]) => {
        const r: unknown = (v as (...a: unknown[]) => unknown).apply(t, args);
        return r instanceof Promise ? activity.track(prop, r, waitable(prop)) : r;
      };
    },
  });
}

export interface RecordedStatus {
  atMs: number;
  uid: string;
  status: V1PodStatus;
}

/** What the StatusManager's start-latency hooks reported (kubelet_pod_start_duration / _sli). */
export interface RecordedStartLatency {
  uid: string;
  kind: 'seenToRunning' | 'sli';
  seconds: number;
}

class RecordingStatusManager extends StatusManager {
  readonly records: RecordedStatus[] = [];
  readonly startLatencies: RecordedStartLatency[];
  readonly #now: () => number;
  constructor(clock: FakeClock, logger: Logger) {
    const startLatencies: RecordedStartLatency[] = [];
    super({
      clock, logger,
      onPodRunning: (pod, seconds) => startLatencies.push({ uid: pod.metadata?.uid ?? '', kind: 'seenToRunning', seconds }),
      onPodStartedSLI: (pod, seconds) => startLatencies.push({ uid: pod.metadata?.uid ?? '', kind: 'sli', seconds }),
    });
    this.startLatencies = startLatencies;
    this.#now = () => clock.now();
  }
  override setStatus(pod: V1Pod, status: V1PodStatus, pullWindow?: ImagePullWindow): void {
    super.setStatus(pod, status, pullWindow);
    this.records.push({ atMs: this.#now(), uid: pod.metadata?.uid ?? '', status: structuredClone(status) });
  }
}

export interface LifecycleHarnessOptions {
  /** The node IP: status.hostIP, and the probe host of host-network pods. Default 127.0.0.1. */
  hostIP?: string;
  /** Images present in the runtime at start. Default busybox:1.36. */
  preloadImages?: readonly string[];
  /** The first N pod log directory removals fail with EBUSY (a removal the agent must retry). */
  failLogDirRemovals?: number;
  /** The runtime's NetworkReady=false message while it is not ready (the agent wires RuntimeHealth.networkError here). */
  networkError?: () => string | undefined;
}

export class LifecycleHarness {
  readonly clock: FakeClock;
  readonly sim: SimulatedRuntime;
  /** A client for the test's own inspection of the runtime (not counted). */
  readonly cri: CriClient;
  readonly podLogsDir: string;
  readonly probeUpdates: Array<ProbeUpdate & { atMs: number }> = [];
  /** Probe runs that completed, by type (like prober_probe_total without labels). */
  readonly probeRuns: Record<ProbeType, number> = { liveness: 0, readiness: 0, startup: 0 };
  /** The stack's log lines at -v 4 (for diagnosing a failed scenario). */
  readonly logLines: string[];
  readonly #dir: string;
  readonly #activity: Activity;
  readonly #statuses: RecordingStatusManager;
  readonly #sink: PodSetSink;
  readonly #desired = new Map<string, V1Pod>();
  readonly #close: () => Promise<void>;

  private constructor(parts: {
    clock: FakeClock; sim: SimulatedRuntime; cri: CriClient; dir: string; activity: Activity;
    statuses: RecordingStatusManager; sink: PodSetSink; lines: string[]; close: () => Promise<void>;
  }) {
    this.logLines = parts.lines;
    this.clock = parts.clock;
    this.sim = parts.sim;
    this.cri = parts.cri;
    this.#dir = parts.dir;
    this.podLogsDir = path.join(parts.dir, 'pods');
    this.#activity = parts.activity;
    this.#statuses = parts.statuses;
    this.#sink = parts.sink;
    this.#close = parts.close;
  }

  static async start(opts: LifecycleHarnessOptions = {}): Promise<LifecycleHarness> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lifecycle-sim-'));
    const clock = new FakeClock(1_700_000_000_000);
    const random = (): number => 0; // no jitter: requeues and first probe ticks are exact
    const lines: string[] = [];
    const logger = createLogger({ verbosity: 4, sink: (l) => lines.push(l), now: () => clock.now() });
    const hostIP = opts.hostIP ?? '127.0.0.1';
    const sim = await SimulatedRuntime.start({ socketPath: path.join(dir, 'cri.sock'), clock, preloadImages: opts.preloadImages ?? ['busybox:1.36'] });
    const activity = new Activity();
    activity.now = () => clock.now();
    const rawCri = new CriClient({ endpoint: sim.endpoint, timeoutMs: 60_000 });
    const cri = counted(rawCri, activity, (m) => CLOCK_WAITABLE.has(m));
    const inspect = new CriClient({ endpoint: sim.endpoint, timeoutMs: 60_000 });
    const nodeLogDirs = nodePodLogDirs(path.join(dir, 'pods'));
    let failRemovals = opts.failLogDirRemovals ?? 0;
    const logDirs: PodLogDirs = {
      mkdir: (d) => activity.track('mkdir', nodeLogDirs.mkdir(d), false),
      remove: (d) => activity.track('rm', failRemovals-- > 0 ? Promise.reject(Object.assign(new Error(`EBUSY: resource busy or locked, rm '${d}'`), { code: 'EBUSY' })) : nodeLogDirs.remove(d), false),
      removeFiles: (f) => activity.track('rm-log', nodeLogDirs.removeFiles(f), false),
    };
    const cache = createPodCache({ capacity: 64 });

    let onMessage: (msg: WorkerToMain) => void = () => {};
    const emit = (msg: WorkerToMain): void => onMessage(msg);
    const realProber = createProber({ runtime: cri, clock });
    const prober: Prober = { run: (spec, target) => activity.track('probe', realProber.run(spec, target), true) };
    let harness: LifecycleHarness | undefined;
    const probes = new ProberManager({
      runtime: cri, clock, random, logger, hostIP, prober,
      onUpdate: (update) => emit({ kind: 'probe', threadId: 0, update }),
      onProbe: (type) => void (harness && harness.probeRuns[type]++),
    });
    const syncer = new KubeRuntimeSyncer({
      runtime: cri, images: cri, clock, random, logger, probeResults: probes.results,
      podLogsDir: path.join(dir, 'pods'), nodeName: 'node-1', hostIP, runtimeName: 'containerd', logDirs,
    });
    // The factory's fresh-status refresher (workers/fresh-status.ts), on the counted client.
    const refreshStatus = freshStatusRefresher({ runtime: cri, cache, clock });
    const workers = new PodWorkers({
      syncer, cache: cache.reader, refreshStatus, clock, random, logger, emit, threadId: 0,
      hooks: {
        podSynced(pod, status, state) {
          const uid = pod.metadata?.uid ?? '';
          if (state === 'syncing') {
            probes.addPod(pod);
            if (status) probes.updatePodStatus(uid, status);
          } else probes.markTerminating(uid);
        },
        podForgotten: (uid) => probes.removePod(uid),
      },
    });
    // --workers 0 wiring, with every update the main thread sends noted in the call log.
    const inline = new InlineDispatcher(new PodWorkerHost(workers, () => probes.close()));
    const dispatcher: PodDispatcher = {
      threads: 0,
      send(msg) {
        activity.calls.push(`${clock.now()} dispatch ${msg.uid} ${msg.updateType}${msg.kill ? ` ${JSON.stringify(msg.kill)}` : ''}`);
        inline.send(msg);
      },
      stats: () => inline.stats(),
      close: () => inline.close(),
    };

    const podConfig = new PodConfig({ clock, logger });
    const sink = podConfig.channel(ApiserverSource);
    const statuses = new RecordingStatusManager(clock, logger);
    const lifecycle = new PodLifecycle({
      clock, logger, dispatcher, podManager: new PodManager(), statusManager: statuses, workQueue: new WorkQueue(),
      admitter: { admit: () => ({ admit: true }) }, sourcesReady: () => podConfig.sourcesReady(), cache: cache.reader,
      ...(opts.networkError ? { networkError: opts.networkError } : {}),
    });
    const loop = new SyncLoop({ clock, logger, updates: podConfig, lifecycle, runtimeErrors: () => [] });
    onMessage = (msg) => {
      if (msg.kind === 'podResult') lifecycle.handlePodResult(msg);
      else if (msg.kind === 'probe') {
        harness?.probeUpdates.push({ ...msg.update, atMs: clock.now() });
        loop.pushProbeUpdate(msg.update);
      }
    };
    let pleg: GenericPleg | undefined;
    pleg = new GenericPleg({
      runtime: cri, cache: cache.writer, cacheReader: cache.reader, clock, logger,
      sink: (r) => {
        if (r.events.length === 0) return;
        loop.pushPlegEvents(r.events);
        pleg?.ackEvents(r.events.length);
      },
    });
    const stop = new AbortController();
    const loopDone = loop.run(stop.signal);
    pleg.start();
    sink.set([]); // the source has delivered: sourcesReady

    harness = new LifecycleHarness({
      clock, sim, cri: inspect, dir, activity, statuses, sink, lines,
      close: async () => {
        stop.abort();
        await pleg?.close();
        await dispatcher.close();
        await loopDone.catch(() => {});
        podConfig.close();
        rawCri.close();
        inspect.close();
        await sim.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    });
    await harness.settle();
    return harness;
  }

  /** Create or update a pod in the API source (API defaults applied, as the API server would). */
  apply(pod: V1Pod): V1Pod {
    const copy = structuredClone(pod);
    applyApiDefaults(copy);
    this.#desired.set(copy.metadata?.uid ?? '', copy);
    this.#sink.set([...this.#desired.values()]);
    return copy;
  }

  /** Graceful deletion (kubectl delete --grace-period=N): deletionTimestamp and grace set. */
  delete(uid: string, gracePeriodSeconds?: number): void {
    const pod = this.#desired.get(uid);
    if (!pod) throw new Error(`no pod ${uid}`);
    const copy = structuredClone(pod);
    const meta = (copy.metadata ??= {});
    meta.deletionTimestamp = new Date(this.clock.now());
    meta.deletionGracePeriodSeconds = gracePeriodSeconds ?? copy.spec?.terminationGracePeriodSeconds ?? 30;
    this.#desired.set(uid, copy);
    this.#sink.set([...this.#desired.values()]);
  }

  /** The pod is gone from the source (REMOVE): terminated, then its runtime objects removed. */
  remove(uid: string): void {
    this.#desired.delete(uid);
    this.#sink.set([...this.#desired.values()]);
  }

  /** Start latencies the StatusManager reported for a pod, in order. */
  startLatencies(uid: string): RecordedStartLatency[] {
    return this.#statuses.startLatencies.filter((l) => l.uid === uid);
  }

  /** Let real I/O run until nothing is in flight, or what is in flight waits on the clock. */
  async settle(): Promise<void> {
    const a = this.#activity;
    let idle = 0;
    let still = 0;
    let seen = a.progress;
    for (let turn = 0; turn < MAX_SETTLE_TURNS; turn++) {
      if (a.awaited > 0) {
        // A call that never waits on the clock is in flight: wait for it (or anything else) to
        // start or finish — a completion signal, bounded in real time — instead of turning.
        await within(a.nextChange(), `progress of the calls in flight ${JSON.stringify([...a.inFlight])}`, AWAITED_BOUND_MS);
      } else await new Promise<void>((r) => setImmediate(r));
      if (a.progress !== seen) {
        seen = a.progress;
        still = 0;
        idle = 0;
        continue;
      }
      still++;
      if (a.awaited > 0) continue;
      if (a.waitable === 0 ? ++idle >= 3 : still >= PARK_TURNS) return;
    }
    throw new Error(`harness: not settled after ${MAX_SETTLE_TURNS} turns; in flight: ${JSON.stringify([...a.inFlight])}`);
  }

  /** Advance fake time by `ms`, timer by timer, settling after each step. */
  async advance(ms: number): Promise<void> {
    // Timers run on monotonic time (FakeClock.stepWall moves only the wall clock).
    const target = this.clock.monotonic() + ms;
    await this.settle();
    for (;;) {
      const next = this.clock.nextTimerAt();
      if (next === undefined || next > target) break;
      this.clock.stepTo(Math.max(next, this.clock.monotonic()));
      await this.settle();
    }
    this.clock.stepTo(target);
    await this.settle();
  }

  /** Advance until `done()` holds (checked after every step); fails with the pod timelines after `maxMs`. */
  async until(what: string, done: () => boolean, maxMs = 120_000): Promise<void> {
    const end = this.clock.monotonic() + maxMs;
    await this.settle();
    while (!done()) {
      if (this.clock.monotonic() >= end) {
        const lines = [...new Set(this.#statuses.records.map((r) => r.uid))].map((u) => `${u}: ${this.timeline(u).join(' | ')}`);
        throw new Error(`harness: timed out after ${maxMs} ms of fake time waiting for ${what}\n${lines.join('\n')}`);
      }
      const next = this.clock.nextTimerAt();
      this.clock.stepTo(Math.min(end, Math.max(next ?? end, this.clock.monotonic())));
      await this.settle();
    }
  }

  /** Fake seconds since `sinceMs` at which the pod's reported status first satisfied `pred` (undefined: never). */
  firstSeen(uid: string, sinceMs: number, pred: (s: V1PodStatus) => boolean): number | undefined {
    const r = this.history(uid).find((x) => x.atMs >= sinceMs && pred(x.status));
    return r === undefined ? undefined : (r.atMs - sinceMs) / 1000;
  }

  /** The pod's current status as the agent reports it (/pods). */
  status(uid: string): V1PodStatus | undefined {
    return this.#statuses.get(uid);
  }

  /** Every status reported for the pod, in order, with the fake time it was reported. */
  history(uid: string): RecordedStatus[] {
    return this.#statuses.records.filter((r) => r.uid === uid);
  }

  /** What a user watching the pod would see: `view` of each reported status, consecutive repeats dropped. */
  timeline(uid: string, view: (s: V1PodStatus) => string = summary): string[] {
    const out: string[] = [];
    for (const r of this.history(uid)) {
      const line = view(r.status);
      if (out[out.length - 1] !== line) out.push(line);
    }
    return out;
  }

  /** Like `timeline` for statuses reported at or after `sinceMs`, each line prefixed by the fake seconds since then. */
  timedTimeline(uid: string, sinceMs: number, view: (s: V1PodStatus) => string = summary): string[] {
    const out: string[] = [];
    let last = '';
    for (const r of this.history(uid)) {
      if (r.atMs < sinceMs) continue;
      const line = view(r.status);
      if (line !== last) out.push(`${((r.atMs - sinceMs) / 1000).toFixed(1)}s ${line}`);
      last = line;
    }
    return out;
  }

  async close(): Promise<void> {
    await this.#close();
  }

  /** Every CRI call, log-directory operation, probe run and dispatched update, in order: `<ms> <what>`. */
  get calls(): readonly string[] {
    return this.#activity.calls;
  }

  get tempDir(): string {
    return this.#dir;
  }
}

/** A view of one container (init or app) by name: its `containerSummary` without the name, or 'absent'. */
export function containerView(name: string): (s: V1PodStatus) => string {
  return (s) => {
    const cs = [...(s.initContainerStatuses ?? []), ...(s.containerStatuses ?? [])].find((c) => c.name === name);
    return cs ? containerSummary(cs).slice(name.length + 1) : 'absent';
  };
}

export const phaseView = (s: V1PodStatus): string => s.phase ?? '?';

/**
 * Asserts that `expected` occurs in `actual` in order (a subsequence): the states a user must
 * see, allowing extra intermediate ones (how soon a status is reported may legitimately change).
 */
export function assertInOrder(actual: readonly string[], expected: readonly string[], what = 'sequence'): void {
  let i = 0;
  for (const line of actual) if (i < expected.length && line === expected[i]) i++;
  if (i < expected.length) {
    throw new Error(`${what}: expected ${JSON.stringify(expected[i])} (item ${i} of ${JSON.stringify(expected)}) in order within\n  ${actual.join('\n  ')}`);
  }
}

export interface InstanceTimes {
  containerID: string;
  startedAtMs: number | undefined;
  finishedAtMs: number | undefined;
  exitCode: number | undefined;
  reason: string | undefined;
}

/**
 * Every instance of container `name` the statuses ever showed (state or lastState), by start
 * time: the runtime's own timestamps, independent of when the status was reported.
 */
export function instancesOf(records: readonly RecordedStatus[], name: string): InstanceTimes[] {
  const byId = new Map<string, InstanceTimes>();
  const ms = (d: Date | string | undefined): number | undefined => (d === undefined ? undefined : new Date(d).getTime());
  const note = (id: string | undefined, started: Date | undefined, finished: Date | undefined, exitCode: number | undefined, reason: string | undefined): void => {
    if (!id) return;
    const e = byId.get(id) ?? { containerID: id, startedAtMs: undefined, finishedAtMs: undefined, exitCode: undefined, reason: undefined };
    e.startedAtMs ??= ms(started);
    e.finishedAtMs ??= ms(finished);
    e.exitCode ??= exitCode;
    e.reason ??= reason;
    byId.set(id, e);
  };
  for (const r of records) {
    for (const cs of [...(r.status.initContainerStatuses ?? []), ...(r.status.containerStatuses ?? [])]) {
      if (cs.name !== name) continue;
      const run = cs.state?.running;
      if (run) note(cs.containerID, run.startedAt, undefined, undefined, undefined);
      for (const term of [cs.state?.terminated, cs.lastState?.terminated]) {
        if (term) note(term.containerID ?? (term === cs.state?.terminated ? cs.containerID : undefined), term.startedAt, term.finishedAt, term.exitCode, term.reason);
      }
    }
  }
  return [...byId.values()].sort((a, b) => (a.startedAtMs ?? Infinity) - (b.startedAtMs ?? Infinity));
}

/** Seconds between each instance's start and the previous instance's start. */
export function restartGapsSeconds(instances: readonly InstanceTimes[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < instances.length; i++) out.push(((instances[i]!.startedAtMs ?? NaN) - (instances[i - 1]!.startedAtMs ?? NaN)) / 1000);
  return out;
}

/** One container as a user sees it: `name=state[/rN][+ready]`; state running | waiting:Reason | terminated:Reason:code. */
export function containerSummary(cs: V1ContainerStatus): string {
  const st = cs.state;
  const state = st?.running ? 'running' : st?.terminated ? `terminated:${st.terminated.reason}:${st.terminated.exitCode}` : `waiting:${st?.waiting?.reason ?? ''}`;
  return `${cs.name}=${state}${cs.restartCount > 0 ? `/r${cs.restartCount}` : ''}${cs.ready ? '+ready' : ''}`;
}

/** `Phase init:a=... b=...` (init containers prefixed), as `kubectl get pod -o wide` plus states. */
export function summary(s: V1PodStatus): string {
  const init = (s.initContainerStatuses ?? []).map((c) => `init:${containerSummary(c)}`);
  return [s.phase ?? '?', ...init, ...(s.containerStatuses ?? []).map(containerSummary)].join(' ');
}

/** The pod conditions in the kubelet's order, `Type=Status[:Reason]`. */
export function conditions(s: V1PodStatus): string {
  const order = ['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready', 'PodScheduled'];
  return order
    .map((type) => {
      const c = s.conditions?.find((x) => x.type === type);
      return c ? `${type}=${c.status}${c.reason ? `:${c.reason}` : ''}` : `${type}=missing`;
    })
    .join(' ');
}

export function container(name: string, extra: Partial<V1Container> = {}): V1Container {
  return { name, image: 'busybox:1.36', ...extra };
}

export function pod(name: string, spec: Partial<V1PodSpec> & { containers: V1Container[] }, annotations: Record<string, string> = {}): V1Pod {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, annotations, creationTimestamp: new Date(1_700_000_000_000) },
    spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 30, ...spec },
  };
}
