/**
 * getPodStatus: the kubelet's kuberuntime GetPodStatus for one pod, used by a pod worker right
 * after its own CRI calls (it then publishes the result to the pod cache). Every sandbox and
 * container of the pod is inspected; objects that vanish between List and Status (NotFound)
 * are skipped, as the kubelet does; any other error is thrown (a CriError).
 */
import { isNotFound } from '../../src/shared/cri/cri-errors.js';
import type { RuntimeService } from '../../src/shared/cri/runtime-service.js';
import { KubernetesPodUIDLabel } from '../../src/shared/kubetypes/kubelet-labels.js';
import type { RuntimeContainerStatus, RuntimePodStatus, RuntimeSandboxStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';
import { assemblePodStatus, sandboxDetails, toContainerStatus, toSandboxStatus } from './cri-status-convert.js';
import { inspectedDetails, type TerminationMessageReader } from './termination-message.js';

export async function getPodStatus(
  runtime: RuntimeService,
  uid: string,
  name: string,
  namespace: string,
  signal?: AbortSignal,
  messages?: TerminationMessageReader,
): Promise<RuntimePodStatus> {
  const opts = signal ? { signal } : {};
  const selector = { labelSelector: { [KubernetesPodUIDLabel]: uid } };
  const [sandboxList, containerList] = await Promise.all([
    runtime.listPodSandbox(selector, opts),
    runtime.listContainers(selector, opts),
  ]);
  const sandboxes = (await Promise.all(sandboxList.map(async (s): Promise<RuntimeSandboxStatus | undefined> => {
    try {
      const st = (await runtime.podSandboxStatus(s.id, opts)).status;
      return st ? toSandboxStatus(st, sandboxDetails(st)) : undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }))).filter((s): s is RuntimeSandboxStatus => s !== undefined);
  const containers = (await Promise.all(containerList.map(async (c): Promise<RuntimeContainerStatus | undefined> => {
    try {
      const st = (await runtime.containerStatus(c.id, opts)).status;
      // Identity and labels from the status (newer); the sandbox id only the list carries.
      return st ? toContainerStatus(st, c.podSandboxId, await inspectedDetails(st, messages)) : undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }))).filter((c): c is RuntimeContainerStatus => c !== undefined);
  return assemblePodStatus({ uid, name, namespace }, sandboxes, containers);
}
