/**
 * The seccomp profile a container runs with (the kubelet's getSeccompProfile / fieldProfile,
 * kuberuntime/helpers.go): the container's securityContext.seccompProfile, else the pod's, else
 * RuntimeDefault with --seccomp-default and Unconfined without (the kubelet's default).
 * Localhost profiles are files under `<root-dir>/seccomp`; the runtime gets the absolute path.
 *
 * Beyond the kubelet, which joins the path unchecked (the API server validated it): a
 * localhostProfile that is absolute or climbs out of the profile root is refused here, so a
 * manifest that reached the node unvalidated cannot point the runtime at an arbitrary host file.
 */
import path from 'node:path';
import type { V1PodSecurityContext, V1SeccompProfile, V1SecurityContext } from '@kubernetes/client-node';
import type { SecurityProfile } from '../../src/shared/cri/cri-types.js';
import { isWithin } from '../path-containment.js';

export type SeccompResult = { ok: true; profile: SecurityProfile } | { ok: false; message: string };

function fieldProfile(scmp: V1SeccompProfile, root: string, fieldPath: string): SeccompResult {
  switch (scmp.type) {
    case 'RuntimeDefault':
      return { ok: true, profile: { profileType: 'RuntimeDefault' } };
    case 'Localhost': {
      const rel = scmp.localhostProfile ?? '';
      if (rel === '') return { ok: false, message: 'localhostProfile must be set if seccompProfile type is Localhost.' };
      const resolvedRoot = path.resolve(root);
      const full = path.join(resolvedRoot, rel);
      if (path.isAbsolute(rel) || rel.split('/').includes('..') || !isWithin(resolvedRoot, full) || full === resolvedRoot) {
        return { ok: false, message: `${fieldPath}.localhostProfile ${JSON.stringify(rel.slice(0, 256))} must be a path below the seccomp profile root ${JSON.stringify(resolvedRoot)}` };
      }
      return { ok: true, profile: { profileType: 'Localhost', localhostRef: full } };
    }
    default:
      // Unconfined (and, as in the kubelet, any other value the API server would have refused).
      return { ok: true, profile: { profileType: 'Unconfined' } };
  }
}

/**
 * `fieldPath` names the container in messages (e.g. `spec.containers[0].securityContext`).
 * `root` is the profile root (`<root-dir>/seccomp`); `seccompDefault` the --seccomp-default flag.
 */
export function seccompProfileFor(
  podSc: V1PodSecurityContext | undefined,
  containerSc: V1SecurityContext | undefined,
  root: string,
  seccompDefault: boolean,
  fieldPath: string,
): SeccompResult {
  if (containerSc?.seccompProfile) return fieldProfile(containerSc.seccompProfile, root, `${fieldPath}.seccompProfile`);
  if (podSc?.seccompProfile) return fieldProfile(podSc.seccompProfile, root, 'spec.securityContext.seccompProfile');
  return { ok: true, profile: { profileType: seccompDefault ? 'RuntimeDefault' : 'Unconfined' } };
}
