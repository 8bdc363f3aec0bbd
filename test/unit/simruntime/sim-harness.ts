/**
 * Test harness for the simulated runtime: an in-process SimulatedRuntime on a temp socket and
 * SignalClock (a FakeClock that signals armed timers), a CriClient on it, and builders for sandbox/container configs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CriClient } from '../../../src/shared/cri/cri-client.js';
import type { ContainerConfig, PodSandboxConfig } from '../../../src/shared/cri/cri-types.js';
import { SimulatedRuntime, type SimulatedRuntimeOptions } from '../../../src/simruntime/simulated-runtime.js';
import { SignalClock } from '../node-status/signal-clock.js';

export interface Harness {
  dir: string;
  /** Tells the test when the runtime parks on its timers (whenPendingTimers, nextSleep, armed). */
  clock: SignalClock;
  rt: SimulatedRuntime;
  client: CriClient;
  close(): Promise<void>;
}

export async function startHarness(opts: Partial<SimulatedRuntimeOptions> = {}): Promise<Harness> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simrt-'));
  const clock = (opts.clock as SignalClock | undefined) ?? new SignalClock();
  const rt = await SimulatedRuntime.start({
    socketPath: path.join(dir, 'cri.sock'),
    clock,
    preloadImages: ['busybox', 'registry.k8s.io/pause:3.9', 'nginx:1.25'],
    reportError: (msg) => {
      throw new Error(`unexpected sim-runtime error: ${msg}`);
    },
    ...opts,
  });
  const client = new CriClient({ endpoint: rt.endpoint, timeoutMs: 10_000 });
  return {
    dir,
    clock,
    rt,
    client,
    async close() {
      client.close();
      await rt.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

let seq = 0;

export function sandboxConfig(over: Partial<PodSandboxConfig> & { name?: string; hostNetwork?: boolean; logDirectory?: string } = {}): PodSandboxConfig {
  const name = over.name ?? `pod-${++seq}`;
  const { hostNetwork, name: _n, ...rest } = over;
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}`, attempt: 0 },
    labels: { 'io.kubernetes.pod.name': name, app: 'web' },
    annotations: { 'note': 'sb' },
    ...(hostNetwork ? { linux: { securityContext: { namespaceOptions: { network: 'NODE' } } } } : {}),
    ...rest,
  };
}

export function containerConfig(name: string, command: string[] | undefined, over: Partial<ContainerConfig> = {}): ContainerConfig {
  return {
    metadata: { name, attempt: 0 },
    image: { image: 'busybox' },
    ...(command ? { command } : {}),
    labels: { 'io.kubernetes.container.name': name },
    annotations: { 'io.kubernetes.container.hash': 'abc' },
    ...over,
  };
}

/** Tracks a promise's settlement so a test can assert "not yet" and "now". */
export function track<T>(p: Promise<T>): { done: () => boolean; promise: Promise<T> } {
  let settled = false;
  const promise = p.finally(() => {
    settled = true;
  });
  promise.catch(() => {});
  return { done: () => settled, promise };
}

/** Creates a sandbox and one started container running `command`; returns their ids. */
export async function runPod(h: Harness, command: string[] | undefined, over: Partial<ContainerConfig> = {}, sbOver: Parameters<typeof sandboxConfig>[0] = {}): Promise<{ sandboxId: string; containerId: string; sandbox: PodSandboxConfig }> {
  const sandbox = sandboxConfig(sbOver);
  const sandboxId = await h.client.runPodSandbox({ config: sandbox });
  const containerId = await h.client.createContainer({ podSandboxId: sandboxId, config: containerConfig('app', command, over), sandboxConfig: sandbox });
  await h.client.startContainer(containerId);
  return { sandboxId, containerId, sandbox };
}
