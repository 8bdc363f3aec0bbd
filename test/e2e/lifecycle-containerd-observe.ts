/**
 * Observation helpers for the pod lifecycle scenarios on real containerd
 * (lifecycle-containerd.test.ts): a free-form manifest writer, kubectl's one-word pod status, a
 * recorder of the distinct states a pod passed through in the agent's /pods, and a recorder of
 * the runtime's view of a pod's containers (CRI ContainerStatus, which keeps exit codes and
 * timestamps after the agent's API status has moved on).
 *
 * Everything here observes external state by bounded polling (test/harness/poll.ts); nothing
 * waits a fixed time.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { CriClient } from '../../src/shared/cri/cri-client.js';
import type { ContainerStatus } from '../../src/shared/cri/cri-types.js';

/** Writes `<dir>/<name>.yaml` with `yaml` as is (atomically: temp file + rename). */
export function writeManifest(dir: string, name: string, yaml: string): string {
  const file = path.join(dir, `${name}.yaml`);
  const tmp = path.join(dir, `.${name}.yaml.tmp`);
  fs.writeFileSync(tmp, yaml);
  fs.renameSync(tmp, file);
  return file;
}

/**
 * The STATUS column of `kubectl get pods` (printPod in kubectl's printers): `Init:0/2`,
 * `Init:CrashLoopBackOff`, `PodInitializing`, a container's waiting/terminated reason, `Running`,
 * `Completed`, `Error`, or the phase.
 */
export function displayStatus(pod: V1Pod): string {
  const st = pod.status ?? {};
  let reason = st.reason || st.phase || 'Unknown';
  const inits = pod.spec?.initContainers ?? [];
  const initStatuses = st.initContainerStatuses ?? [];
  let initializing = false;
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i]!;
    const term = c.state?.terminated;
    if (term && term.exitCode === 0) continue;
    if (term) {
      reason = term.reason ? `Init:${term.reason}` : term.signal ? `Init:Signal:${term.signal}` : `Init:ExitCode:${term.exitCode}`;
    } else if (c.state?.waiting?.reason && c.state.waiting.reason !== 'PodInitializing') {
      reason = `Init:${c.state.waiting.reason}`;
    } else {
      reason = `Init:${i}/${inits.length}`;
    }
    initializing = true;
    break;
  }
  if (!initializing) {
    let hasRunning = false;
    const statuses = st.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i]!;
      if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
      else if (c.state?.terminated?.reason) reason = c.state.terminated.reason;
      else if (c.state?.terminated) reason = c.state.terminated.signal ? `Signal:${c.state.terminated.signal}` : `ExitCode:${c.state.terminated.exitCode}`;
      else if (c.ready && c.state?.running) hasRunning = true;
    }
    if (reason === 'Completed' && hasRunning) reason = 'Running';
  }
  return reason;
}

/** Sum of the app containers' restart counts. */
export function restartCount(pod: V1Pod): number {
  return (pod.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
}

/** One distinct state of a pod in /pods, with the time (ms, test clock) it was first seen. */
export interface PodStep {
  readonly phase: string;
  readonly display: string;
  readonly restarts: number;
  readonly atMs: number;
}

/**
 * The sequence of distinct (phase, display status, restartCount) a pod went through, as seen by
 * polling /pods, plus the last pod object. Feed it every /pods answer with `observe`.
 */
export class PodTimeline {
  readonly steps: PodStep[] = [];
  last: V1Pod | undefined;
  /** True once the pod appeared in /pods and later vanished from it. */
  gone = false;
  goneAtMs: number | undefined;

  constructor(readonly name: string) {}

  observe(pods: readonly V1Pod[], nowMs: number): void {
    const pod = pods.find((p) => p.metadata?.name === this.name);
    if (!pod) {
      if (this.last && !this.gone) {
        this.gone = true;
        this.goneAtMs = nowMs;
      }
      return;
    }
    this.last = pod;
    const step = { phase: pod.status?.phase ?? '', display: displayStatus(pod), restarts: restartCount(pod), atMs: nowMs };
    const prev = this.steps.at(-1);
    if (!prev || prev.phase !== step.phase || prev.display !== step.display || prev.restarts !== step.restarts) this.steps.push(step);
  }

  /** The steps without times, as `phase/display/restarts`, for assertions and messages. */
  tuples(): string[] {
    return this.steps.map((s) => `${s.phase}/${s.display}/${s.restarts}`);
  }

  /** The steps as `+ms phase/display/restarts`, times relative to the first step, for diagnostics. */
  timedTuples(): string[] {
    const t0 = this.steps[0]?.atMs ?? 0;
    return this.steps.map((s) => `+${s.atMs - t0} ${s.phase}/${s.display}/${s.restarts}`);
  }

  /** The distinct display statuses in order (consecutive repeats folded). */
  displays(): string[] {
    const out: string[] = [];
    for (const s of this.steps) if (out.at(-1) !== s.display) out.push(s.display);
    return out;
  }

  /** The first time the restart count reached `n` (ms), if it did. */
  firstRestartAt(n: number): number | undefined {
    return this.steps.find((s) => s.restarts >= n)?.atMs;
  }

  container(name: string): V1ContainerStatus | undefined {
    const st = this.last?.status;
    return [...(st?.initContainerStatuses ?? []), ...(st?.containerStatuses ?? [])].find((c) => c.name === name);
  }
}

/** A container as the runtime last reported it (latest ContainerStatus per container ID). */
export interface RuntimeContainer {
  readonly id: string;
  readonly name: string;
  readonly attempt: number;
  readonly state: string;
  /** Nanoseconds since the epoch, as bigint (0n when not yet). */
  readonly createdAt: bigint;
  readonly startedAt: bigint;
  readonly finishedAt: bigint;
  readonly exitCode: number;
  readonly reason: string;
}

function toRuntimeContainer(s: ContainerStatus): RuntimeContainer {
  return {
    id: s.id,
    name: s.metadata?.name ?? '',
    attempt: s.metadata?.attempt ?? 0,
    state: s.state,
    createdAt: BigInt(s.createdAt || '0'),
    startedAt: BigInt(s.startedAt || '0'),
    finishedAt: BigInt(s.finishedAt || '0'),
    exitCode: s.exitCode,
    reason: s.reason,
  };
}

/**
 * Remembers every container the runtime ever showed for a pod (by pod name label), with its
 * latest status: containers the agent removes later (pruned attempts, a deleted pod) keep the
 * last status seen before they went.
 */
export class RuntimeRecorder {
  readonly containers = new Map<string, RuntimeContainer>();
  /** Sandbox IDs listed by the last observation. */
  sandboxes: string[] = [];
  /** The first observation (ms, test clock) that found neither sandbox nor container after some had been seen. */
  goneAtMs: number | undefined;

  constructor(readonly podName: string) {}

  async observe(cri: CriClient, nowMs = Date.now()): Promise<void> {
    const selector = { labelSelector: { 'io.kubernetes.pod.name': this.podName } };
    const [sandboxes, list] = await Promise.all([cri.listPodSandbox(selector), cri.listContainers(selector)]);
    this.sandboxes = sandboxes.map((s) => s.id);
    if (sandboxes.length > 0 || list.length > 0) this.goneAtMs = undefined;
    else if (this.containers.size > 0) this.goneAtMs ??= nowMs;
    await Promise.all(
      list.map(async (c) => {
        try {
          const res = await cri.containerStatus(c.id);
          if (res.status) this.containers.set(c.id, toRuntimeContainer(res.status));
        } catch {
          // removed between List and Status: keep the last status seen
        }
      }),
    );
  }

  /** Containers named `name`, oldest attempt first. */
  byName(name: string): RuntimeContainer[] {
    return [...this.containers.values()].filter((c) => c.name === name).sort((a, b) => a.attempt - b.attempt);
  }
}

/** Nanosecond timestamps → milliseconds (as a number) for messages and comparisons. */
export function nsToMs(ns: bigint): number {
  return Number(ns / 1_000_000n);
}
