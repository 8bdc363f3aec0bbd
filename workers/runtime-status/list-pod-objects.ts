/**
 * The pod's objects as the runtime lists them (ListPodSandbox and ListContainers filtered by the
 * pod UID label), without any inspection: what the kubelet kills a pod from when it has no
 * status for it (its runningPod from GetPods, kuberuntime_manager.go KillPod). A kill must
 * never depend on a readable cached status: this is the fallback when the pod's cache entry
 * carries an error (a status that could not be stored, a failed inspection, a dead writer).
 *
 * List data tells ids, names, states and creation order, which is all killPod and cleanupPod
 * use; details only an inspection knows (exit codes, IPs) stay at their empty values.
 */
import type { RuntimeService } from '../../src/shared/cri/runtime-service.js';
import { KubernetesPodUIDLabel } from '../../src/shared/kubetypes/kubelet-labels.js';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { assemblePodStatus, listOnlyDetails, toContainerStatus, toSandboxStatus } from './cri-status-convert.js';

export async function listPodObjects(runtime: RuntimeService, uid: string, name: string, namespace: string, signal?: AbortSignal): Promise<RuntimePodStatus> {
  const opts = signal ? { signal } : {};
  const selector = { labelSelector: { [KubernetesPodUIDLabel]: uid } };
  const [sandboxes, containers] = await Promise.all([runtime.listPodSandbox(selector, opts), runtime.listContainers(selector, opts)]);
  return assemblePodStatus(
    { uid, name, namespace },
    sandboxes.map((s) => toSandboxStatus(s, { ip: '', ips: [], hostNetwork: false })),
    containers.map((c) => toContainerStatus(c, c.podSandboxId, listOnlyDetails(c))),
  );
}
