/**
 * Test harness for kuberuntime: a KubeRuntimeSyncer over the FakeRuntime and a FakeClock, a pod
 * builder, and one-line summaries of API statuses so tests can assert what a user would see
 * (`kubectl get pod` columns and container states) over a sequence of syncs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Container, V1Pod, V1PodSpec, V1PodStatus } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { createLogger, type Logger } from '../../../src/shared/logging/logger.js';
import type { ProbeResult, ProbeType } from '../../../src/shared/protocol/probe-update.js';
import type { ProbeResultsReader } from '../../../workers/prober/probe-results.js';
import type { SyncPodOutcome } from '../../../workers/pod-sync.js';
import { KubeRuntimeSyncer } from '../../../workers/kuberuntime/kuberuntime-syncer.js';
import type { KubeRuntimeSyncerDeps } from '../../../workers/kuberuntime/kuberuntime-deps.js';
import { FakeRuntime } from './fake-runtime.js';

export class FakeProbeResults implements ProbeResultsReader {
  readonly results = new Map<string, ProbeResult>();
  set(containerId: string, type: ProbeType, r: ProbeResult): void {
    this.results.set(`${containerId}/${type}`, r);
  }
  get(containerId: string, type: ProbeType): ProbeResult {
    return this.results.get(`${containerId}/${type}`) ?? 'unknown';
  }
}

export interface Harness {
  clock: FakeClock;
  rt: FakeRuntime;
  probes: FakeProbeResults;
  syncer: KubeRuntimeSyncer;
  logDir: string;
  logLines: string[];
  /** syncPod with the fake's current runtime status (as the PLEG would cache it). */
  sync(pod: V1Pod, signal?: AbortSignal): Promise<SyncPodOutcome>;
  /** The CRI calls since the last `take()`. */
  take(): string[];
  cleanup(): void;
}

export function makeHarness(overrides: Partial<KubeRuntimeSyncerDeps> = {}): Harness {
  const clock = new FakeClock(1_700_000_000_000);
  const rt = new FakeRuntime(clock);
  const probes = new FakeProbeResults();
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kuberuntime-test-'));
  const logLines: string[] = [];
  const logger: Logger = createLogger({ verbosity: 4, sink: (l) => logLines.push(l), now: () => clock.now() });
  const syncer = new KubeRuntimeSyncer({
    runtime: rt, images: rt, clock, random: () => 0.5, logger, probeResults: probes,
    podLogsDir: logDir, nodeName: 'node-1', hostIP: '192.168.1.10', runtimeName: 'containerd', ...overrides,
  });
  let seen = 0;
  return {
    clock, rt, probes, syncer, logDir, logLines,
    sync: (pod, signal) => syncer.syncPod({ updateType: 'sync', pod, runtimeStatus: rt.podStatus(pod.metadata!.uid!), signal: signal ?? new AbortController().signal }),
    take() {
      const out = rt.calls.slice(seen);
      seen = rt.calls.length;
      return out;
    },
    cleanup: () => fs.rmSync(logDir, { recursive: true, force: true }),
  };
}

export function container(name: string, extra: Partial<V1Container> = {}): V1Container {
  return { name, image: 'busybox:1', ...extra };
}

export function makePod(spec: Partial<V1PodSpec> & { containers: V1Container[] }, meta: { name?: string; uid?: string } = {}): V1Pod {
  const name = meta.name ?? 'web';
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', uid: meta.uid ?? `uid-${name}`, labels: { app: name }, annotations: { 'kubernetes.io/config.source': 'api' } },
    spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 30, ...spec },
  };
}

/** "Phase c1=state c2=state" with state = running | waiting:Reason | terminated:Reason:code, plus restarts. */
export function summary(s: V1PodStatus): string {
  const one = (cs: NonNullable<V1PodStatus['containerStatuses']>[number]): string => {
    const st = cs.state;
    const state = st?.running ? 'running' : st?.terminated ? `terminated:${st.terminated.reason}:${st.terminated.exitCode}` : `waiting:${st?.waiting?.reason ?? ''}`;
    return `${cs.name}=${state}${cs.restartCount > 0 ? `/r${cs.restartCount}` : ''}`;
  };
  const init = (s.initContainerStatuses ?? []).map((c) => `init:${one(c)}`);
  return [s.phase ?? '?', ...init, ...(s.containerStatuses ?? []).map(one)].join(' ');
}

export function condition(s: V1PodStatus, type: string): string {
  const c = s.conditions?.find((x) => x.type === type);
  return c ? `${c.status}${c.reason ? `:${c.reason}` : ''}` : 'missing';
}
