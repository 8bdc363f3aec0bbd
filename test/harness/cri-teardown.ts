/**
 * Best-effort CRI teardown of everything a runtime holds: StopPodSandbox + RemovePodSandbox for
 * every sandbox (which stops and removes its containers and, for pod-network sandboxes, runs
 * CNI DEL). Used by the harness before killing containerd so that netns mounts, veths and
 * host-local leases go away the normal way, and by tests to leave a runtime empty.
 *
 * Bounded twice: each call by `callTimeoutMs`, the whole teardown by `totalTimeoutMs` (calls
 * still in flight then are cancelled), so a wedged runtime cannot hold a test run hostage; the
 * harness's process kills are the backstop.
 */
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { mapSettled } from './bounded-concurrency.js';

export interface TeardownOptions {
  readonly callTimeoutMs?: number;
  readonly totalTimeoutMs?: number;
  readonly concurrency?: number;
}

/** Returns the number of sandboxes that could not be removed. */
export async function teardownAllPods(endpoint: string, opts: TeardownOptions = {}): Promise<number> {
  const client = new CriClient({ endpoint, timeoutMs: opts.callTimeoutMs ?? 30_000 });
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), opts.totalTimeoutMs ?? 120_000);
  try {
    const sandboxes = await client.listPodSandbox(undefined, { signal: abort.signal });
    const results = await mapSettled(sandboxes, opts.concurrency ?? 8, async (s) => {
      await client.stopPodSandbox(s.id, { signal: abort.signal });
      await client.removePodSandbox(s.id, { signal: abort.signal });
    });
    return results.filter((r) => r.status === 'rejected').length;
  } finally {
    clearTimeout(timer);
    client.close();
  }
}
