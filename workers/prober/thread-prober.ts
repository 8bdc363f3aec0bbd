/**
 * The prober of one pod-worker thread wired to that thread's metrics, as the factory builds it
 * (workers/pod-worker-factory.ts): every probe run is recorded (prober_probe_total,
 * prober_probe_duration_seconds) and a probe worker that stops for good (its pod removed or
 * terminating, its container exited for good) deletes its series, as the kubelet's probe worker
 * does when it exits. Without the deletion the per-pod series pile up with pod churn until the
 * thread's metrics region is full and new series are dropped.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { WorkerMetrics } from '../metrics/worker-metrics.js';
import { ProberManager, type ProberManagerDeps } from './prober-manager.js';

export type ThreadProberDeps = Omit<ProberManagerDeps, 'onProbe' | 'onWorkerStopped'> & {
  metrics: Pick<WorkerMetrics, 'probe' | 'removeProbeSeries'>;
};

export function createThreadProber(deps: ThreadProberDeps): ProberManager {
  const { metrics, ...rest } = deps;
  const labels = (pod: V1Pod, container: string): { container: string; pod: string; namespace: string; podUID: string } =>
    ({ container, pod: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '', podUID: pod.metadata?.uid ?? '' });
  return new ProberManager({
    ...rest,
    onProbe: (type, result, seconds, pod, container) => metrics.probe({ type, result, seconds, ...labels(pod, container) }),
    onWorkerStopped: (type, pod, container) => metrics.removeProbeSeries({ type, ...labels(pod, container) }),
  });
}
