/**
 * Static pods (from files or URLs) may not refer to API objects: "the spec of a static Pod
 * cannot refer to other API objects (ServiceAccount, ConfigMap, Secret, ...)" (Kubernetes docs;
 * the API server refuses such a mirror pod, NodeRestriction). shardlet rejects them at
 * admission with a message naming what they refer to, instead of leaving them waiting forever
 * for objects a static pod never gets. The reason string is shardlet's: the kubelet has no
 * admission reason of its own for this.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { podObjectRefs } from '../config-objects/pod-object-refs.js';
import { isStaticPod } from '../pod-manager/pod-manager.js';
import type { AdmitResult } from '../syncloop/pod-admitter.js';

export const STATIC_POD_API_REFS_REASON = 'StaticPodReferencesAPIObjects';

export function admitStaticPodRefs(pod: V1Pod): AdmitResult {
  if (!isStaticPod(pod)) return { admit: true };
  const r = podObjectRefs(pod);
  const what = [
    ...[...r.configMaps].map((n) => `configmap ${JSON.stringify(n)}`),
    ...[...r.secrets].map((n) => `secret ${JSON.stringify(n)}`),
    ...(r.tokens.size > 0 ? ['a service account token'] : []),
    ...(pod.spec?.volumes ?? []).filter((v) => v.persistentVolumeClaim).map((v) => `persistentVolumeClaim ${JSON.stringify(v.persistentVolumeClaim?.claimName ?? '')}`),
  ];
  if (what.length === 0) return { admit: true };
  return { admit: false, reason: STATIC_POD_API_REFS_REASON, message: `static pods may not refer to API objects; this one refers to ${what.slice(0, 5).join(', ')}${what.length > 5 ? ', ...' : ''}` };
}
