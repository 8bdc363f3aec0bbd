/**
 * Probe results as they cross the thread boundary: a pod worker's prober (workers/prober/)
 * sends a {@link ProbeUpdate} to the main thread's syncLoop when a result changes (the
 * kubelet's liveness/readiness/startup update channels). Plain data, structured-clone safe;
 * imported by both sides (pod-worker-protocol.ts carries it).
 */
export type ProbeType = 'liveness' | 'readiness' | 'startup';
export type ProbeResult = 'success' | 'failure' | 'unknown';

/** A probe result change, as sent to the main thread's syncLoop (the kubelet's probe update channels). */
export interface ProbeUpdate {
  podUID: string;
  containerId: string;
  containerName: string;
  type: ProbeType;
  result: ProbeResult;
}
