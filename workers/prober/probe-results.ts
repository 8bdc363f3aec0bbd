/**
 * The seam between the prober (workers/prober/, running on the pod's worker thread) and the
 * runtime logic (kuberuntime/ syncPod, status generation) on the same thread. Mirrors the
 * kubelet's prober/results.Manager: the last result per container and probe type.
 */
export type ProbeType = 'liveness' | 'readiness' | 'startup';
export type ProbeResult = 'success' | 'failure' | 'unknown';

export interface ProbeResultsReader {
  /** The latest result for the container instance (by CRI container id), or 'unknown' if none yet. */
  get(containerId: string, type: ProbeType): ProbeResult;
}

/** A probe result change, as sent to the main thread's syncLoop (the kubelet's probe update channels). */
export interface ProbeUpdate {
  podUID: string;
  containerId: string;
  containerName: string;
  type: ProbeType;
  result: ProbeResult;
}
