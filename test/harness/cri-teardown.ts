/**
 * Best-effort CRI teardown of everything a runtime holds: StopPodSandbox + RemovePodSandbox for
 * every sandbox (which stops and removes its containers and, for pod-network sandboxes, runs
 * CNI DEL). Used by the harness before killing containerd so that netns mounts, veths and
 * host-local leases go away the normal way, and by tests to leave a runtime empty.
 */
import { CriClient } from '../../src/cri/cri-client.js';
import { mapSettled } from './bounded-concurrency.js';

/** Returns the number of sandboxes that could not be removed. */
export async function teardownAllPods(endpoint: string, timeoutMs: number, concurrency = 8): Promise<number> {
  const client = new CriClient({ endpoint, timeoutMs });
  try {
    const sandboxes = await client.listPodSandbox();
    const results = await mapSettled(sandboxes, concurrency, async (s) => {
      await client.stopPodSandbox(s.id);
      await client.removePodSandbox(s.id);
    });
    return results.filter((r) => r.status === 'rejected').length;
  } finally {
    client.close();
  }
}
