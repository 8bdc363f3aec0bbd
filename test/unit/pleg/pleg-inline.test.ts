/**
 * The inline PLEG (hollow mode) end to end over real gRPC: the simulated runtime in-process on a
 * temp socket, GenericPleg on this thread through startInlinePleg, the shared cache. A started
 * container is reported and cached; sim-pod-crash.ts kills it (the hollow `crash` fault) and the
 * next relist reports it died with exit 137; close() stops relisting; the runner has no thread.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { realClock } from '../../../src/shared/clock/clock.js';
import { CriClient } from '../../../src/shared/cri/cri-client.js';
import { KubernetesContainerNameLabel, KubernetesPodNameLabel, KubernetesPodNamespaceLabel, KubernetesPodUIDLabel } from '../../../src/shared/kubetypes/kubelet-labels.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import type { PodLifecycleEvent } from '../../../src/shared/pleg/pod-lifecycle-event.js';
import { createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import { InlinePlegError, startInlinePleg } from '../../../src/main/pleg/pleg-inline.js';
import type { RelistObservation } from '../../../src/main/pleg/pleg-runner.js';
import { crashPodContainers } from '../../../src/simruntime/sim-pod-crash.js';
import { SimulatedRuntime } from '../../../src/simruntime/simulated-runtime.js';

test('inline PLEG: relists on this thread, caches, reports a crash the sim fault caused, stops on close', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pleg-inline-'));
  const rt = await SimulatedRuntime.start({ socketPath: path.join(dir, 'cri.sock'), preloadImages: ['docker.io/local/busybox:1'] });
  const client = new CriClient({ endpoint: rt.endpoint, timeoutMs: 10_000 });
  const { buffer, reader } = createPodCache({ capacity: 16 });
  const events: PodLifecycleEvent[] = [];
  const relists: RelistObservation[] = [];
  const waiters: (() => void)[] = [];
  // Bounded wait for an event matching `pred` (a completion signal from onEvents).
  const waitEvent = (pred: (e: PodLifecycleEvent) => boolean, what: string): Promise<PodLifecycleEvent> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within 20 s; got ${JSON.stringify(events)}; relists ${JSON.stringify(relists.slice(-3))} of ${relists.length}`)), 20_000);
      const check = (): void => {
        const e = events.find(pred);
        if (e) {
          clearTimeout(timer);
          resolve(e);
        } else waiters.push(check);
      };
      check();
    });
  // The pod exists before the PLEG starts: the first relist reports it (later, a RUNNING container
  // no worker explains is deferred to its worker's publish; there is no worker here).
  const uid = 'uid-inline-1';
  const config = {
    metadata: { name: 'web', namespace: 'ns1', uid, attempt: 0 },
    labels: { [KubernetesPodUIDLabel]: uid, [KubernetesPodNameLabel]: 'web', [KubernetesPodNamespaceLabel]: 'ns1' },
  };
  const sandboxId = await client.runPodSandbox({ config });
  const containerId = await client.createContainer({
    podSandboxId: sandboxId, sandboxConfig: config,
    config: { metadata: { name: 'c', attempt: 0 }, image: { image: 'docker.io/local/busybox:1' }, command: ['sleep', '3600'], labels: { [KubernetesPodUIDLabel]: uid, [KubernetesContainerNameLabel]: 'c', [KubernetesPodNameLabel]: 'web', [KubernetesPodNamespaceLabel]: 'ns1' } },
  });
  await client.startContainer(containerId);
  const pleg = await startInlinePleg({
    endpoint: rt.endpoint, cacheBuffer: buffer, relistPeriodMs: 20, clock: realClock, logger: silentLogger,
    onEvents: (evs) => {
      events.push(...evs);
      for (const w of waiters.splice(0)) w();
    },
    onRelist: (r) => relists.push(r),
  });
  try {
    assert.equal(pleg.threadId(), 0);
    assert.equal(pleg.standbyReady(), false);
    await assert.rejects(pleg.terminateThread(), (e: unknown) => e instanceof InlinePlegError && e.code === 'ERR_PLEG_INLINE');
    await waitEvent((e) => e.id === uid && e.type === 'ContainerStarted' && e.data === containerId, 'ContainerStarted');
    assert.equal(reader.get(uid)?.status.containers.find((c) => c.id === containerId)?.state, 'CONTAINER_RUNNING');
    assert.ok(pleg.health().healthy);

    assert.equal(crashPodContainers(rt.core, 'ns1', 'web'), 1);
    assert.equal(crashPodContainers(rt.core, 'ns1', 'other'), 0);
    await waitEvent((e) => e.id === uid && e.type === 'ContainerDied' && e.data === containerId, 'ContainerDied');
    const died = reader.get(uid)?.status.containers.find((c) => c.id === containerId);
    assert.equal(died?.state, 'CONTAINER_EXITED');
    assert.equal(died?.exitCode, 137);
    assert.ok(relists.length > 0 && relists.every((r) => r.ok));
  } finally {
    await pleg.close();
    const after = relists.length;
    client.close();
    await rt.close();
    fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(relists.length, after, 'no relist after close');
  }
});
