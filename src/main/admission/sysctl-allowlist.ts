/**
 * The kubelet's sysctl admission (pkg/kubelet/sysctl/allowlist.go): a pod may set the safe
 * sysctls (sysctl-names.ts) and those --allowed-unsafe-sysctls allows (names, or prefixes ending
 * in `*`); a sysctl of a namespace the pod shares with the host (hostNetwork: Net, hostIPC: IPC)
 * is refused even when listed. A refusal fails the pod with reason SysctlForbidden and the
 * kubelet's message `forbidden sysctl: "<name>" not allowlisted` (or `... not allowed with host
 * Net enabled`).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { isValidSysctlPattern, normalizeSysctlName, safeSysctls, sysctlNamespace, SYSCTL_MAX_LENGTH, type SysctlNamespace } from '../../shared/kubetypes/sysctl-names.js';
import type { AdmitResult } from '../syncloop/pod-admitter.js';

export const SYSCTL_FORBIDDEN_REASON = 'SysctlForbidden';

export class SysctlAllowlistError extends Error {
  override readonly name = 'SysctlAllowlistError';
  readonly code = 'ERR_SYSCTL_ALLOWLIST';
}

export class SysctlAllowlist {
  readonly #sysctls = new Map<string, SysctlNamespace>();
  /** Prefix → namespace, in the order given (the kubelet's map has no order; the first match decides either way). */
  readonly #prefixes = new Map<string, SysctlNamespace>();

  /** NewAllowlist: throws {@link SysctlAllowlistError} for a pattern that is invalid or not known to be namespaced. */
  constructor(patterns: readonly string[]) {
    for (const s of patterns) {
      if (!isValidSysctlPattern(s)) {
        throw new SysctlAllowlistError(`sysctl ${JSON.stringify(s)} must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]`);
      }
      const { ns, nameOrPrefix, prefixed } = sysctlNamespace(s);
      if (ns === '') throw new SysctlAllowlistError(`the sysctls ${JSON.stringify(nameOrPrefix)} are not known to be namespaced`);
      (prefixed ? this.#prefixes : this.#sysctls).set(nameOrPrefix, ns);
    }
  }

  /** The kubelet's allowlist: the safe sysctls of this kernel plus the unsafe ones allowed. */
  static forNode(kernelRelease: string, allowedUnsafe: readonly string[]): SysctlAllowlist {
    return new SysctlAllowlist([...safeSysctls(kernelRelease), ...allowedUnsafe]);
  }

  /** validateSysctl: undefined when allowed, else why not. */
  check(sysctl: string, hostNet: boolean, hostIPC: boolean): string | undefined {
    const name = normalizeSysctlName(sysctl);
    const hostConflict = (ns: SysctlNamespace): string | undefined =>
      (ns === 'IPC' && hostIPC) || (ns === 'Net' && hostNet) ? `${JSON.stringify(name)} not allowed with host ${ns} enabled` : undefined;
    const exact = this.#sysctls.get(name);
    if (exact !== undefined) return hostConflict(exact);
    for (const [p, ns] of this.#prefixes) if (name.startsWith(p)) return hostConflict(ns);
    return `${JSON.stringify(name)} not allowlisted`;
  }

  /** Admit: the first forbidden sysctl of the pod fails it. */
  admit(pod: V1Pod): AdmitResult {
    const list = pod.spec?.securityContext?.sysctls ?? [];
    for (const s of list) {
      const why = this.check(String(s.name ?? ''), pod.spec?.hostNetwork === true, pod.spec?.hostIPC === true);
      if (why !== undefined) return { admit: false, reason: SYSCTL_FORBIDDEN_REASON, message: `forbidden sysctl: ${why}` };
    }
    return { admit: true };
  }
}
