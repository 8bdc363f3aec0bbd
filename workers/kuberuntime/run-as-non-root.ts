/**
 * runAsNonRoot, checked against the user the container will run as (the kubelet's
 * verifyRunAsNonRoot, kuberuntime/security_context_others.go), before the container is created.
 * A refusal is a CreateContainerConfigError with the kubelet's message.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { effectiveSecurityContext } from './security-context.js';
import type { ImageUser } from './image-user.js';
import { formatPod } from './pod-spec.js';

const MAX_INT32 = 2147483647;

/** Undefined when the container may run; else the kubelet's error message. */
export function verifyRunAsNonRoot(pod: V1Pod, container: V1Container, user: ImageUser): string | undefined {
  const sc = effectiveSecurityContext(pod, container);
  if (sc.runAsNonRoot !== true) return undefined;
  const who = `(pod: ${JSON.stringify(formatPod(pod))}, container: ${container.name})`;
  if (sc.runAsUser !== undefined) {
    return sc.runAsUser === 0 ? `container's runAsUser breaks non-root policy ${who}` : undefined;
  }
  if (user.uid === undefined && user.username) {
    return `container has runAsNonRoot and image has non-numeric user (${user.username}), cannot verify user is non-root ${who}`;
  }
  if (user.uid !== undefined) {
    if (user.uid === 0) return `container has runAsNonRoot and image will run as root ${who}`;
    if (user.uid < 0 || user.uid > MAX_INT32) {
      return `container has runAsNonRoot and image has an invalid user id (${user.uid}). (Must be 1-(${MAX_INT32})): must be between 0 and ${MAX_INT32}, inclusive ${who}`;
    }
  }
  return undefined;
}
