/**
 * The seam between the prober (workers/prober/, running on the pod's worker thread) and the
 * runtime logic (kuberuntime/ syncPod, status generation) on the same thread. Mirrors the
 * kubelet's prober/results.Manager: the last result per container and probe type. The result
 * values and the update sent to the main thread are thread protocol
 * (src/shared/protocol/probe-update.ts).
 */
import type { ProbeResult, ProbeType } from '../../src/shared/protocol/probe-update.js';

export interface ProbeResultsReader {
  /** The latest result for the container instance (by CRI container id), or 'unknown' if none yet. */
  get(containerId: string, type: ProbeType): ProbeResult;
}
