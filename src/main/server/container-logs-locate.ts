/**
 * Finds the log file of a pod's container through the CRI, as the kubelet's
 * GetContainerLogs does from the pod's runtime status: the newest container of that name in the
 * pod (by creation time) is the current one, the one before it the previous instance
 * (`previous=true`, the kubelet's LastTerminationState). Answers are data: the refusal messages
 * are the kubelet's.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { RuntimeService } from '../../shared/cri/runtime-service.js';
import { KubernetesContainerNameLabel, KubernetesPodUIDLabel } from '../../shared/kubetypes/kubelet-labels.js';

export type LocateResult =
  | { readonly ok: true; readonly containerId: string; readonly logPath: string }
  | { readonly ok: false; readonly message: string };

export class ContainerLogLocator {
  readonly #runtime: Pick<RuntimeService, 'listContainers' | 'containerStatus'>;

  constructor(opts: { runtime: Pick<RuntimeService, 'listContainers' | 'containerStatus'> }) {
    if (!opts?.runtime) throw new TypeError('ContainerLogLocator: runtime is required');
    this.#runtime = opts.runtime;
  }

  async locate(pod: V1Pod, container: string, previous: boolean): Promise<LocateResult> {
    const podName = pod.metadata?.name ?? '';
    const uid = pod.metadata?.uid ?? '';
    const list = await this.#runtime.listContainers({ labelSelector: { [KubernetesPodUIDLabel]: uid, [KubernetesContainerNameLabel]: container } });
    // Newest first; int64 nanosecond strings compare as BigInt.
    const sorted = [...list].sort((a, b) => {
      const d = BigInt(b.createdAt || '0') - BigInt(a.createdAt || '0');
      return d > 0n ? 1 : d < 0n ? -1 : 0;
    });
    const target = sorted[previous ? 1 : 0];
    if (target === undefined) {
      return {
        ok: false,
        message: previous
          ? `previous terminated container "${container}" in pod "${podName}" not found`
          : `container "${container}" in pod "${podName}" is waiting to start: ContainerCreating`,
      };
    }
    const st = await this.#runtime.containerStatus(target.id);
    const logPath = st.status?.logPath ?? '';
    if (logPath === '') return { ok: false, message: `container "${container}" in pod "${podName}" has no log path` };
    return { ok: true, containerId: target.id, logPath };
  }

  async isRunning(containerId: string): Promise<boolean> {
    try {
      const st = await this.#runtime.containerStatus(containerId);
      return st.status?.state === 'CONTAINER_RUNNING';
    } catch {
      return false;
    }
  }
}
