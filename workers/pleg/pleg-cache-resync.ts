/**
 * The test behind a replacement PLEG's resync from the pod cache (generic-pleg.ts, "The first
 * relist of a PLEG that starts with entries in the cache"): an entry is up to date when it
 * names exactly the listed sandboxes and containers, each in its listed state — then no change
 * happened since it was written and the pod needs no inspection, only a PodSync. Pure.
 */
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import type { RelistPod } from '../runtime-status/bulk-pod-status.js';

/** Whether a status names exactly the listed sandboxes and containers, each in its listed state. */
export function matchesListing(status: RuntimePodStatus, pod: RelistPod): boolean {
  if (status.sandboxes.length !== pod.sandboxes.length || status.containers.length !== pod.containers.length) return false;
  const listed = new Map<string, string>();
  for (const s of pod.sandboxes) listed.set(s.id, s.state);
  for (const c of pod.containers) listed.set(c.id, c.state);
  return status.sandboxes.every((s) => listed.get(s.id) === s.state) && status.containers.every((c) => listed.get(c.id) === c.state);
}
