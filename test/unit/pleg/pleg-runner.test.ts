/**
 * The supervised PLEG thread (src/main/pleg/pleg-runner.ts, what the agent wires): a thread that dies
 * is reported (onThreadExit, where the agent recovers its cache locks), replaced after the
 * backoff on the injected clock, and the replacement resyncs (its first relist takes every pod
 * whose cache entry matches the listing from the cache, with a PodSync each, and inspects the
 * others). Health is the one PLEG check, on the main thread's clock. With a warm spare (the
 * default) the replacement is the standby thread, booted beforehand; without one, a cold start.
 * Real threads and real gRPC to the in-process simulated runtime; every wait is bounded.
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
import type { PodLifecycleEvent } from '../../../src/shared/pleg/pod-lifecycle-event.js';

const BOUND_MS = 20_000;

/** Resolves when `pred` holds after some callback; rejects after the bound. */
class Signal<T> {
  #waiters: { pred: (v: T) => boolean; resolve: (v: T) => void }[] = [];
  readonly seen: T[] = [];
  push(v: T): void {
    this.seen.push(v);
    this.#waiters = this.#waiters.filter((w) => (w.pred(v) ? (w.resolve(v), false) : true));
  }
  next(pred: (v: T) => boolean, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), BOUND_MS);
      this.#waiters.push({ pred, resolve: (v) => (clearTimeout(timer), resolve(v)) });
    });
  }
}

for (const warmSpare of [true, false]) {
test(`a PLEG thread that dies is replaced after the backoff on the injected clock and resyncs (${warmSpare ? 'the warm spare is activated' : 'cold start'})`, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pleg-runner-'));
  const rt = await SimulatedRuntime.start({ socketPath: path.join(dir, 'cri.sock'), preloadImages: ['registry.k8s.io/pause:3.9'] });
  const client = new CriClient({ endpoint: rt.endpoint, timeoutMs: 10_000 });
  const cache = createPodCache({ capacity: 16 });
  // The PLEG thread stamps relists with the real process-wide monotonic clock: start the fake
  // clock there so health compares like with like; then only the test moves it.
  const clock = new FakeClock(Math.ceil(realClock.monotonic()) + 1_000);
  const events = new Signal<PodLifecycleEvent[]>();
  const relists = new Signal<boolean>();
  const exits = new Signal<number>();
  const spares = new Signal<true>();
  const runner = await startPleg({
    warmSpare, onSpareReady: () => spares.push(true),
    endpoint: rt.endpoint, cacheBuffer: cache.buffer, relistPeriodMs: 50, relistThresholdMs: 180_000,
    logger: silentLogger, clock, restartBackoff: { initialMs: 500, maxMs: 5_000 },
    onEvents: (e) => events.push(e),
    onRelist: (r) => relists.push(r.ok),
    onThreadExit: (id) => exits.push(id),
  });
  try {
    const uid = 'uid-runner-1';
    const sandboxId = await client.runPodSandbox({
      config: { metadata: { name: 'web', namespace: 'default', uid, attempt: 0 }, labels: { [KubernetesPodUIDLabel]: uid, [KubernetesPodNameLabel]: 'web', [KubernetesPodNamespaceLabel]: 'default' } },
    });
    await events.next((b) => b.some((e) => e.data === sandboxId), 'the sandbox\'s first event');
    assert.equal(runner.health().healthy, true);
    const first = runner.threadId();
    assert.ok(first !== undefined);
    if (warmSpare) await spares.next(() => true, 'the standby thread booted');
    assert.equal(runner.standbyReady(), warmSpare);

    const exited = exits.next(() => true, 'the thread exit');
    await runner.terminateThread();
    assert.equal(await exited, first, 'onThreadExit names the dead thread');
    assert.equal(runner.threadId(), undefined, 'no thread until the backoff passes');
    assert.equal(runner.health().healthy, true, 'health keeps the last relist until the threshold');

    // The replacement starts only when the injected clock passes the backoff.
    const resync = events.next((b) => b.some((e) => e.id === uid && e.type === 'PodSync'), 'the replacement\'s resync of the pod');
    clock.step(499);
    assert.equal(runner.restarts, 0);
    clock.step(1);
    assert.equal(runner.restarts, 1);
    assert.equal(runner.standbyReady(), false, 'the spare (if any) is the live thread now');
    await resync;
    const second = runner.threadId();
    assert.ok(second !== undefined && second !== first, 'a new thread');
    assert.equal(cache.reader.get(uid)?.status.sandboxes[0]?.id, sandboxId);
    if (warmSpare) {
      if (spares.seen.length < 2) await spares.next(() => spares.seen.length >= 2, 'a new standby thread once the activated one relisted');
      assert.equal(runner.standbyReady(), true);
    } else assert.equal(spares.seen.length, 0, 'no spare without warmSpare');

    // Past the threshold without a successful relist → unhealthy. The thread stamps relists with
    // the real monotonic clock, which may have overtaken the fake one on a loaded machine (the
    // test taking over 1.5 s): step to 181 s past the newest relist, not past the fake now.
    await runner.close();
    clock.stepTo(Math.max(clock.monotonic(), runner.lastRelistMs() ?? 0) + 181_000);
    assert.match(runner.health().reason, /^pleg was last seen active 3m\d+(\.\d+)?s ago; threshold is 3m0s$/);
  } finally {
    await runner.close();
    assert.equal(runner.standbyReady(), false, 'close stops the spare too');
    client.close();
    await rt.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
}
