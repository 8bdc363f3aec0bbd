/**
 * The security admission of a pod, in the kubelet's handler order (NewMainKubelet: the sysctl
 * allowlist, then the AppArmor validator), plus the pod-spec security settings shardlet does not
 * implement, refused with a reason and a message naming the field instead of being dropped:
 *
 *   SysctlForbidden                        a sysctl outside the allowlist (sysctl-allowlist.ts)
 *   AppArmor                               "Cannot enforce AppArmor: AppArmor is not enabled on the
 *                                          host" (apparmor/validate.go), or an empty Localhost name
 *   SupplementalGroupsPolicyNotSupported   supplementalGroupsPolicy: Strict (the runtime reports no
 *                                          support for it; Merge is the runtime's behaviour)
 *   SeccompAnnotationNotSupported          (shardlet's reason) a deprecated seccomp annotation that
 *                                          asks for confinement the seccompProfile fields do not
 *                                          express: the kubelet stopped reading these in 1.27 and
 *                                          would run the pod unconfined without a word
 */
import fs from 'node:fs';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { appArmorProfileOf, appArmorRequired } from '../../shared/kubetypes/apparmor-profile.js';
import type { AdmitResult } from '../syncloop/pod-admitter.js';
import type { SysctlAllowlist } from './sysctl-allowlist.js';

export const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
export const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';

export interface SecurityAdmitDeps {
  sysctls: SysctlAllowlist;
  /** Whether the host enforces AppArmor (checked once at startup, as the kubelet's validator). */
  appArmorEnabled: boolean;
}

/** runc's apparmor.IsEnabled: /sys/kernel/security/apparmor exists and the module parameter says Y. */
export function hostAppArmorEnabled(
  exists: (p: string) => boolean = (p) => fs.existsSync(p),
  read: (p: string) => string = (p) => fs.readFileSync(p, 'utf8'),
): boolean {
  if (!exists('/sys/kernel/security/apparmor')) return false;
  try {
    return read('/sys/module/apparmor/parameters/enabled').startsWith('Y');
  } catch {
    return false;
  }
}

function allContainers(pod: V1Pod): V1Container[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
}

function admitAppArmor(pod: V1Pod, enabled: boolean): AdmitResult {
  // The kubelet re-checks only pods that have not started.
  if ((pod.status?.phase ?? 'Pending') !== 'Pending' || !appArmorRequired(pod)) return { admit: true };
  if (!enabled) return { admit: false, reason: 'AppArmor', message: 'Cannot enforce AppArmor: AppArmor is not enabled on the host' };
  for (const c of allContainers(pod)) {
    const p = appArmorProfileOf(pod, c);
    if (p?.type === 'Localhost' && (p.localhostProfile ?? '').trim() === '') {
      return { admit: false, reason: 'AppArmor', message: `Cannot enforce AppArmor: invalid empty AppArmor profile name: ${JSON.stringify(p)}` };
    }
  }
  return { admit: true };
}

function admitUnsupported(pod: V1Pod): AdmitResult {
  const sc = pod.spec?.securityContext;
  if (sc?.supplementalGroupsPolicy === 'Strict') {
    return { admit: false, reason: 'SupplementalGroupsPolicyNotSupported', message: 'spec.securityContext.supplementalGroupsPolicy: SupplementalGroupsPolicy=Strict is not supported in this node' };
  }
  const ann = pod.metadata?.annotations ?? {};
  const confining = (v: string | undefined): boolean => v !== undefined && v !== 'unconfined';
  if (confining(ann[SECCOMP_POD_ANNOTATION]) && !sc?.seccompProfile) {
    return {
      admit: false, reason: 'SeccompAnnotationNotSupported',
      message: `metadata.annotations[${SECCOMP_POD_ANNOTATION}]: the seccomp annotations are not honoured (removed in Kubernetes 1.27); set spec.securityContext.seccompProfile`,
    };
  }
  for (const c of allContainers(pod)) {
    const key = SECCOMP_CONTAINER_ANNOTATION_PREFIX + c.name;
    if (confining(ann[key]) && !c.securityContext?.seccompProfile && !sc?.seccompProfile) {
      return {
        admit: false, reason: 'SeccompAnnotationNotSupported',
        message: `metadata.annotations[${key}]: the seccomp annotations are not honoured (removed in Kubernetes 1.27); set the container's securityContext.seccompProfile`,
      };
    }
  }
  return { admit: true };
}

/** The first refusal of the security handlers, or admit. */
export function admitSecurity(pod: V1Pod, deps: SecurityAdmitDeps): AdmitResult {
  const sysctls = deps.sysctls.admit(pod);
  if (!sysctls.admit) return sysctls;
  const aa = admitAppArmor(pod, deps.appArmorEnabled);
  if (!aa.admit) return aa;
  return admitUnsupported(pod);
}
