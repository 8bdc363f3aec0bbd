/**
 * The PLEG's warm spare is kept only while the runtime holds pods (pleg-runner.ts): none on an
 * empty runtime, one booted once a relist lists a sandbox, stopped once relists have found the
 * runtime empty for spareIdleStopMs on the injected clock. Real threads and the in-process
 * simulated runtime; every wait is bounded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { realClock } from '../../../src/shared/clock/clock.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { CriClient } from '../../../src/shared/cri/cri-client.js';
import { KubernetesPodNameLabel, KubernetesPodNamespaceLabel, KubernetesPodUIDLabel } from '../../../src/shared/kubetypes/kubelet-labels.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import { startPleg } from '../../../src/main/pleg/pleg-runner.js';
import { SimulatedRuntime } from '../../../src/simruntime/simulated-runtime.js';

const BOUND_MS = 20_000;

/** Counts successful relists; `after(n)` resolves once n more have been observed (bounded). */
class Relists {
  #count = 0;
  #waiters: { at: number; resolve: () => void }[] = [];
  ok(): void {
    this.#count++;
    this.#waiters = this.#waiters.filter((w) => (this.#count >= w.at ? (w.resolve(), false) : true));
  }
  after(n: number, what: string): Promise<void> {
    const at = this.#count + n;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), BOUND_MS);
      this.#waiters.push({ at, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }
}

test('no spare on an empty runtime; one once pods exist; stopped after the runtime stays empty', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pleg-spare-'));
  const rt = await SimulatedRuntime.start({ socketPath: path.join(dir, 'cri.sock'), preloadImages: ['registry.k8s.io/pause:3.9'] });
  const client = new CriClient({ endpoint: rt.endpoint, timeoutMs: 10_000 });
  const cache = createPodCache({ capacity: 16 });
  const clock = new FakeClock(Math.ceil(realClock.monotonic()) + 1_000);
  const relists = new Relists();
  let sparesReady = 0;
  const runner = await startPleg({
    onSpareReady: () => sparesReady++, spareIdleStopMs: 30_000,
    endpoint: rt.endpoint, cacheBuffer: cache.buffer, relistPeriodMs: 50, relistThresholdMs: 180_000,
    logger: silentLogger, clock, onEvents: () => {}, onRelist: (r) => r.ok && relists.ok(),
  });
  try {
    // Each relist decides synchronously whether to spawn the spare: three relists of an empty
    // runtime have each decided not to.
    await relists.after(3, 'three relists of the empty runtime');
    assert.equal(runner.hasStandby(), false, 'no standby thread while the runtime is empty');

    const uid = 'uid-spare-1';
    const sandboxId = await client.runPodSandbox({
      config: { metadata: { name: 'web', namespace: 'default', uid, attempt: 0 }, labels: { [KubernetesPodUIDLabel]: uid, [KubernetesPodNameLabel]: 'web', [KubernetesPodNamespaceLabel]: 'default' } },
    });
    await relists.after(2, 'relists that list the sandbox');
    assert.equal(runner.hasStandby(), true, 'a standby thread boots once the runtime holds a pod');
    const deadline = Date.now() + BOUND_MS;
    while (!runner.standbyReady()) {
      if (Date.now() > deadline) throw new Error('the standby thread did not become ready');
      await relists.after(1, 'a relist while the standby boots');
    }
    assert.equal(sparesReady, 1);

    await client.stopPodSandbox(sandboxId);
    await client.removePodSandbox(sandboxId);
    await relists.after(2, 'relists of the emptied runtime');
    assert.equal(runner.hasStandby(), true, 'kept until the runtime has been empty for spareIdleStopMs');
    clock.step(30_000);
    await relists.after(2, 'relists past spareIdleStopMs');
    assert.equal(runner.hasStandby(), false, 'the standby thread is stopped');
  } finally {
    await runner.close();
    client.close();
    await rt.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
