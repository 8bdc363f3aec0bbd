/**
 * The PLEG thread end to end over real gRPC: the simulated runtime in-process on a temp socket,
 * pleg-thread.js on a worker thread, the cache shared through its SharedArrayBuffer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { CriClient } from '../../../src/shared/cri/cri-client.js';
import { KubernetesPodNameLabel, KubernetesPodNamespaceLabel, KubernetesPodUIDLabel } from '../../../src/shared/kubetypes/kubelet-labels.js';
import { createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import { SimulatedRuntime } from '../../../src/simruntime/simulated-runtime.js';
import type { PlegOutbound, PlegStartOptions } from '../../../src/shared/protocol/pleg-protocol.js';

const THREAD = new URL('../../../workers/pleg/pleg-thread.js', import.meta.url);

test('pleg thread relists the runtime, fills the shared cache, batches events, acks and stops', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pleg-'));
  const rt = await SimulatedRuntime.start({ socketPath: path.join(dir, 'cri.sock'), preloadImages: ['registry.k8s.io/pause:3.9'] });
  const client = new CriClient({ endpoint: rt.endpoint, timeoutMs: 10_000 });
  const { buffer, reader } = createPodCache({ capacity: 16 });
  const options: PlegStartOptions = { endpoint: rt.endpoint, cacheBuffer: buffer, relistPeriodMs: 20, relistThresholdMs: 180_000 };
  const worker = new Worker(THREAD, { workerData: options });
  const messages: PlegOutbound[] = [];
  // Every wait is bounded (generous: a loaded 2-core machine), and fails naming what it awaited.
  const waitFor = (pred: (m: PlegOutbound) => boolean, boundMs = 20_000): Promise<PlegOutbound> => new Promise((resolve, reject) => {
    const found = messages.find(pred);
    if (found) return resolve(found);
    const timer = setTimeout(() => {
      worker.off('message', onMsg);
      reject(new Error(`no matching PLEG message within ${boundMs} ms; got ${messages.map((m) => m.type).join(',')}`));
    }, boundMs);
    const onMsg = (m: PlegOutbound): void => {
      if (pred(m)) {
        clearTimeout(timer);
        worker.off('message', onMsg);
        resolve(m);
      }
    };
    worker.on('message', onMsg);
    worker.once('error', reject);
  });
  worker.on('message', (m: PlegOutbound) => {
    messages.push(m);
    if (m.type === 'relist' && m.events.length > 0) worker.postMessage({ type: 'ack', count: m.events.length });
  });
  try {
    await waitFor((m) => m.type === 'started');
    const uid = 'uid-pleg-thread-1';
    const sandboxId = await client.runPodSandbox({
      config: {
        metadata: { name: 'web', namespace: 'default', uid, attempt: 0 },
        labels: { [KubernetesPodUIDLabel]: uid, [KubernetesPodNameLabel]: 'web', [KubernetesPodNamespaceLabel]: 'default' },
      },
    });
    const relist = await waitFor((m) => m.type === 'relist' && m.events.some((e) => e.data === sandboxId));
    assert.ok(relist.type === 'relist');
    assert.deepEqual(relist.events.filter((e) => e.id === uid), [{ id: uid, type: 'ContainerStarted', data: sandboxId }]);
    // The cache was written before the batch was posted.
    const e = reader.get(uid);
    assert.equal(e?.status.sandboxes[0]?.id, sandboxId);
    assert.equal(e?.status.name, 'web');
    assert.ok((reader.globalTimestampMs() ?? 0) >= relist.timestampMs);
    const health = await waitFor((m) => m.type === 'health');
    assert.ok(health.type === 'health' && health.health.healthy);

    await client.stopPodSandbox(sandboxId);
    await client.removePodSandbox(sandboxId);
    await waitFor((m) => m.type === 'relist' && m.events.some((ev) => ev.type === 'ContainerRemoved' && ev.data === sandboxId));
    assert.equal(reader.get(uid), undefined);

    worker.postMessage({ type: 'stop' });
    await waitFor((m) => m.type === 'stopped');
  } finally {
    await worker.terminate();
    client.close();
    await rt.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
