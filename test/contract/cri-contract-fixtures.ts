/**
 * Pod and container specs and small runtime-driving steps shared by the CRI contract tests.
 * Specs are shaped like the kubelet's (kuberuntime_sandbox.go / kuberuntime_container.go) but
 * minimal: what the contract needs and nothing a runtime could trip over.
 */
import { CriError } from '../../src/shared/cri/cri-errors.js';
import type { RuntimeService } from '../../src/shared/cri/runtime-service.js';
import type { ContainerConfig, ContainerState, ContainerStatus, PodSandboxConfig, StringMap } from '../../src/shared/cri/cri-types.js';
import { BUSYBOX_IMAGE } from '../harness/local-images.js';
import { pollUntil } from '../harness/poll.js';

export { BUSYBOX_IMAGE };

let seq = 0;
/** A unique suffix per call within this process (pod names and uids must not collide). */
export function uniqueName(prefix: string): string {
  seq += 1;
  return `${prefix}-${process.pid}-${seq}`;
}

export interface PodSpecOptions {
  readonly hostNetwork?: boolean;
  readonly logDirectory?: string;
  readonly labels?: StringMap;
  readonly annotations?: StringMap;
  /** Reuse exact metadata (name conflict tests). */
  readonly metadata?: PodSandboxConfig['metadata'];
}

export function podConfig(name: string, opts: PodSpecOptions = {}): PodSandboxConfig {
  const hostNetwork = opts.hostNetwork ?? true;
  return {
    metadata: opts.metadata ?? { name, uid: `uid-${name}`, namespace: 'contract', attempt: 0 },
    hostname: hostNetwork ? '' : name,
    ...(opts.logDirectory !== undefined ? { logDirectory: opts.logDirectory } : {}),
    labels: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': 'contract', ...opts.labels },
    annotations: { ...opts.annotations },
    linux: {
      cgroupParent: '',
      securityContext: { namespaceOptions: { network: hostNetwork ? 'NODE' : 'POD', pid: 'CONTAINER', ipc: 'POD' } },
    },
  };
}

export interface ContainerSpecOptions {
  readonly labels?: StringMap;
  readonly logPath?: string;
  readonly attempt?: number;
  /** The container's PID namespace: its own (CONTAINER, the kubelet's default) or the pod's (POD, unset). */
  readonly pidNamespace?: 'CONTAINER' | 'POD';
}

export function containerConfig(name: string, command: string[], opts: ContainerSpecOptions = {}): ContainerConfig {
  return {
    metadata: { name, attempt: opts.attempt ?? 0 },
    image: { image: BUSYBOX_IMAGE },
    command,
    args: [],
    labels: { 'io.kubernetes.container.name': name, ...opts.labels },
    annotations: {},
    logPath: opts.logPath ?? `${name}/${opts.attempt ?? 0}.log`,
    ...(opts.pidNamespace ? { linux: { securityContext: { namespaceOptions: { pid: opts.pidNamespace } } } } : {}),
  };
}

export interface RunningPod {
  readonly sandboxId: string;
  readonly config: PodSandboxConfig;
}

export async function runPod(rt: RuntimeService, name: string, opts: PodSpecOptions = {}): Promise<RunningPod> {
  const config = podConfig(name, opts);
  const sandboxId = await rt.runPodSandbox({ config });
  return { sandboxId, config };
}

/** CreateContainer + StartContainer; returns the container id. */
export async function startContainer(rt: RuntimeService, pod: RunningPod, config: ContainerConfig): Promise<string> {
  const id = await rt.createContainer({ podSandboxId: pod.sandboxId, config, sandboxConfig: pod.config });
  await rt.startContainer(id);
  return id;
}

/** Polls ContainerStatus until the container reaches `state` (bounded). */
export function waitContainerState(rt: RuntimeService, id: string, state: ContainerState, timeoutMs = 15_000): Promise<ContainerStatus> {
  return pollUntil(
    async () => {
      const st = (await rt.containerStatus(id)).status;
      return st?.state === state ? st : undefined;
    },
    { what: `container ${id} to be ${state}`, timeoutMs, intervalMs: 25 },
  );
}

/** Resolves to the rejection of `p` (fails the test when `p` resolves). */
export async function rejectionOf(p: Promise<unknown>): Promise<CriError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof CriError) return err;
    throw new Error(`expected a CriError, got ${String(err)}`);
  }
  throw new Error('expected the call to fail, it succeeded');
}

/** Nanoseconds since the epoch, as a BigInt, from the wall clock (for timestamp bounds). */
export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

export const ns = (v: string): bigint => BigInt(v);

/** CRI log line: `<RFC3339Nano> <stdout|stderr> <F|P> <text>`. */
export const CRI_LOG_LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)) (stdout|stderr) (F|P) (.*)$/;
