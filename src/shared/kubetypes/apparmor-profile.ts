/**
 * Which AppArmor profile a container gets (pkg/security/apparmor/helpers.go GetProfile): the
 * container's securityContext.appArmorProfile, else the deprecated per-container annotation
 * `container.apparmor.security.beta.kubernetes.io/<container>` (static pods never had it synced
 * into the field), else the pod's securityContext.appArmorProfile. Pure; shared by the
 * admission (main thread) and the container config (workers).
 */
import type { V1AppArmorProfile, V1Container, V1Pod } from '@kubernetes/client-node';

export const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
export const APPARMOR_RUNTIME_DEFAULT = 'runtime/default';
export const APPARMOR_UNCONFINED = 'unconfined';
export const APPARMOR_LOCALHOST_PREFIX = 'localhost/';

/** The annotation's profile; undefined for no annotation or an invalid value (as the kubelet). */
function fromAnnotation(annotations: Record<string, string> | undefined, containerName: string): V1AppArmorProfile | undefined {
  const v = annotations?.[APPARMOR_ANNOTATION_PREFIX + containerName];
  if (v === undefined) return undefined;
  if (v === APPARMOR_RUNTIME_DEFAULT) return { type: 'RuntimeDefault' };
  if (v === APPARMOR_UNCONFINED) return { type: 'Unconfined' };
  if (v.startsWith(APPARMOR_LOCALHOST_PREFIX)) return { type: 'Localhost', localhostProfile: v.slice(APPARMOR_LOCALHOST_PREFIX.length) };
  return undefined;
}

export function appArmorProfileOf(pod: V1Pod, container: V1Container): V1AppArmorProfile | undefined {
  return container.securityContext?.appArmorProfile ?? fromAnnotation(pod.metadata?.annotations, container.name) ?? pod.spec?.securityContext?.appArmorProfile;
}

/**
 * isRequired: whether the pod asks for any confinement (a profile other than Unconfined in a
 * field, or an annotation other than `unconfined`).
 */
export function appArmorRequired(pod: V1Pod): boolean {
  if (pod.spec?.securityContext?.appArmorProfile && pod.spec.securityContext.appArmorProfile.type !== 'Unconfined') return true;
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? []), ...((pod.spec?.ephemeralContainers ?? []) as V1Container[])];
  if (all.some((c) => c.securityContext?.appArmorProfile && c.securityContext.appArmorProfile.type !== 'Unconfined')) return true;
  for (const [k, v] of Object.entries(pod.metadata?.annotations ?? {})) {
    if (k.startsWith(APPARMOR_ANNOTATION_PREFIX)) return v !== APPARMOR_UNCONFINED;
  }
  return false;
}
