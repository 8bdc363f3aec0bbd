/**
 * Fault injection: a pod's running containers crash. Every RUNNING container of the pod's READY
 * sandbox(es) gets SIGKILL, so it exits 137 as an OOM-less kill would, and the agent sees an
 * ordinary container death at its next relist (restart per restartPolicy, back-off, events).
 * Used by hollow mode (src/cli/hollow-sim.ts); a standalone runtime has the same effect through
 * the `crash-after-ms` annotation (sim-annotations.ts) at pod creation.
 */
import type { SimRuntimeCore } from './sim-runtime.js';

/** Kills the pod's running containers; returns how many. A pod the runtime does not have: 0. */
export function crashPodContainers(core: SimRuntimeCore, namespace: string, pod: string): number {
  let n = 0;
  for (const sb of core.store.allSandboxes()) {
    if (sb.state !== 'SANDBOX_READY' || sb.config.metadata.namespace !== namespace || sb.config.metadata.name !== pod) continue;
    for (const c of core.store.containersOf(sb.id)) {
      if (c.state !== 'CONTAINER_RUNNING' || c.process === undefined) continue;
      c.process.signal('SIGKILL');
      n++;
    }
  }
  return n;
}
