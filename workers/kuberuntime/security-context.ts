/**
 * Pod and container securityContext → CRI, as the kubelet builds them:
 *  - the container's LinuxContainerSecurityContext (determineEffectiveSecurityContext,
 *    kuberuntime/security_context.go, with pkg/securitycontext/util.go): the pod's fields
 *    (seLinuxOptions, runAsUser, runAsGroup, runAsNonRoot) overridden by the container's, then
 *    capabilities, privileged, readonlyRootfs, seccomp, AppArmor, the image's user when no
 *    runAsUser is set, namespace options, supplemental groups (fsGroup first, then
 *    supplementalGroups), no_new_privs and the masked/readonly /proc paths;
 *  - the sandbox's LinuxSandboxSecurityContext and sysctls (generatePodSandboxLinuxConfig,
 *    kuberuntime_sandbox_linux.go).
 * Pure functions of the pod, the container and the image's user.
 *
 * Not sent (each refused at admission instead, see src/main/admission/security-admit.ts):
 * supplementalGroupsPolicy Strict. windowsOptions are ignored on Linux as by the kubelet.
 */
import type { V1Container, V1Pod, V1SecurityContext } from '@kubernetes/client-node';
import type { Capability, LinuxContainerSecurityContext, LinuxSandboxSecurityContext, NamespaceOption, SELinuxOption, StringMap } from '../../src/shared/cri/cri-types.js';
import { appArmorProfileOf, APPARMOR_LOCALHOST_PREFIX, APPARMOR_RUNTIME_DEFAULT, APPARMOR_UNCONFINED } from '../../src/shared/kubetypes/apparmor-profile.js';
import { seccompProfileFor } from './seccomp-profile.js';
import type { ImageUser } from './image-user.js';
import { appContainers, initContainers } from './pod-spec.js';

/**
 * /proc paths masked and made read-only unless procMount is Unmasked (pkg/securitycontext
 * defaultMaskedPaths / defaultReadonlyPaths, kept in sync with moby's oci/defaults.go).
 */
export const DEFAULT_MASKED_PATHS: readonly string[] = Object.freeze([
  '/proc/asound', '/proc/acpi', '/proc/kcore', '/proc/keys', '/proc/latency_stats', '/proc/timer_list',
  '/proc/timer_stats', '/proc/sched_debug', '/proc/scsi', '/sys/firmware', '/sys/devices/virtual/powercap',
]);
export const DEFAULT_READONLY_PATHS: readonly string[] = Object.freeze(['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger']);

/** DetermineEffectiveSecurityContext: the pod's inheritable fields, each overridden by the container's. */
export function effectiveSecurityContext(pod: V1Pod, container: V1Container): V1SecurityContext {
  const podSc = pod.spec?.securityContext;
  const out: V1SecurityContext = {};
  if (podSc) {
    if (podSc.seLinuxOptions) out.seLinuxOptions = { ...podSc.seLinuxOptions };
    if (podSc.windowsOptions) out.windowsOptions = { ...podSc.windowsOptions };
    if (podSc.runAsUser !== undefined) out.runAsUser = podSc.runAsUser;
    if (podSc.runAsGroup !== undefined) out.runAsGroup = podSc.runAsGroup;
    if (podSc.runAsNonRoot !== undefined) out.runAsNonRoot = podSc.runAsNonRoot;
  }
  const c = container.securityContext;
  if (!c) return out;
  for (const k of ['seLinuxOptions', 'windowsOptions', 'capabilities', 'privileged', 'runAsUser', 'runAsGroup', 'runAsNonRoot', 'readOnlyRootFilesystem', 'allowPrivilegeEscalation', 'procMount', 'seccompProfile', 'appArmorProfile'] as const) {
    if (c[k] !== undefined && c[k] !== null) (out as Record<string, unknown>)[k] = c[k];
  }
  return out;
}

/** AddNoNewPrivileges: only an explicit allowPrivilegeEscalation: false sets no_new_privs. */
export function addNoNewPrivileges(sc: V1SecurityContext): boolean {
  return sc.allowPrivilegeEscalation === false;
}

function selinuxOf(o: V1SecurityContext['seLinuxOptions']): SELinuxOption | undefined {
  if (!o) return undefined;
  return { user: o.user ?? '', role: o.role ?? '', type: o.type ?? '', level: o.level ?? '' };
}

function capabilitiesOf(sc: V1SecurityContext): Capability | undefined {
  const caps = sc.capabilities;
  if (!caps) return undefined;
  return { addCapabilities: [...(caps.add ?? [])], dropCapabilities: [...(caps.drop ?? [])] };
}

/** The pod-level supplemental groups, in the kubelet's order: fsGroup, then supplementalGroups. */
function podSupplementalGroups(pod: V1Pod): number[] {
  const sc = pod.spec?.securityContext;
  const out: number[] = [];
  if (sc?.fsGroup !== undefined && sc.fsGroup !== null) out.push(sc.fsGroup);
  for (const g of sc?.supplementalGroups ?? []) out.push(g);
  return out;
}

export interface ContainerSecurityOptions {
  /** `<root-dir>/seccomp`: where Localhost seccomp profiles live. */
  seccompProfileRoot: string;
  /** --seccomp-default: RuntimeDefault instead of Unconfined when no profile is given. */
  seccompDefault: boolean;
  /** Names the container in messages, e.g. `spec.containers[0].securityContext`. */
  fieldPath: string;
  /** The pod's namespace modes (sandbox-config.ts namespaceOptionsForPod). */
  namespaceOptions: NamespaceOption;
}

export type ContainerSecurityResult = { ok: true; securityContext: LinuxContainerSecurityContext } | { ok: false; message: string };

/** The container's LinuxContainerSecurityContext (a failure is a CreateContainerConfigError). */
export function containerSecurityContext(pod: V1Pod, container: V1Container, user: ImageUser, opts: ContainerSecurityOptions): ContainerSecurityResult {
  const eff = effectiveSecurityContext(pod, container);
  const sc: LinuxContainerSecurityContext = {};
  const caps = capabilitiesOf(eff);
  if (caps) sc.capabilities = caps;
  const selinux = selinuxOf(eff.seLinuxOptions);
  if (selinux) sc.selinuxOptions = selinux;
  if (eff.runAsUser !== undefined) sc.runAsUser = { value: eff.runAsUser };
  if (eff.runAsGroup !== undefined) sc.runAsGroup = { value: eff.runAsGroup };
  if (eff.privileged !== undefined) sc.privileged = eff.privileged;
  if (eff.readOnlyRootFilesystem !== undefined) sc.readonlyRootfs = eff.readOnlyRootFilesystem;

  const seccomp = seccompProfileFor(pod.spec?.securityContext, container.securityContext, opts.seccompProfileRoot, opts.seccompDefault, opts.fieldPath);
  if (!seccomp.ok) return seccomp;
  sc.seccomp = seccomp.profile;

  const aa = appArmorProfileOf(pod, container);
  if (aa) {
    switch (aa.type) {
      case 'RuntimeDefault':
        sc.apparmor = { profileType: 'RuntimeDefault' };
        sc.apparmorProfile = APPARMOR_RUNTIME_DEFAULT;
        break;
      case 'Unconfined':
        sc.apparmor = { profileType: 'Unconfined' };
        sc.apparmorProfile = APPARMOR_UNCONFINED;
        break;
      case 'Localhost':
        if (!aa.localhostProfile) return { ok: false, message: 'missing localhost apparmor profile name' };
        sc.apparmor = { profileType: 'Localhost', localhostRef: aa.localhostProfile };
        sc.apparmorProfile = APPARMOR_LOCALHOST_PREFIX + aa.localhostProfile;
        break;
      default:
        return { ok: false, message: `unknown apparmor profile type: ${JSON.stringify(String(aa.type).slice(0, 64))}` };
    }
  }

  if (sc.runAsUser === undefined) {
    if (user.uid !== undefined) sc.runAsUser = { value: user.uid };
    if (user.username) sc.runAsUsername = user.username;
  }
  sc.namespaceOptions = { ...opts.namespaceOptions };
  const groups = podSupplementalGroups(pod);
  if (groups.length > 0) sc.supplementalGroups = groups;
  sc.noNewPrivs = addNoNewPrivileges(eff);
  const unmasked = eff.procMount === 'Unmasked';
  sc.maskedPaths = unmasked ? [] : [...DEFAULT_MASKED_PATHS];
  sc.readonlyPaths = unmasked ? [] : [...DEFAULT_READONLY_PATHS];
  return { ok: true, securityContext: sc };
}

/** HasPrivilegedContainer: any init or app container asks for privileged. */
export function hasPrivilegedContainer(pod: V1Pod): boolean {
  return [...initContainers(pod), ...appContainers(pod)].some((c) => c.securityContext?.privileged === true);
}

/**
 * The sandbox's Linux security context and sysctls (generatePodSandboxLinuxConfig). The sandbox
 * always runs with the runtime's default seccomp profile (kubelet issue #84623).
 */
export function sandboxSecurity(pod: V1Pod, namespaceOptions: NamespaceOption): { securityContext: LinuxSandboxSecurityContext; sysctls: StringMap } {
  const sc: LinuxSandboxSecurityContext = {
    namespaceOptions,
    privileged: hasPrivilegedContainer(pod),
    seccomp: { profileType: 'RuntimeDefault' },
  };
  const sysctls: StringMap = {};
  const podSc = pod.spec?.securityContext;
  if (podSc) {
    for (const s of podSc.sysctls ?? []) sysctls[s.name] = s.value;
    if (podSc.runAsUser !== undefined) sc.runAsUser = { value: podSc.runAsUser };
    if (podSc.runAsGroup !== undefined) sc.runAsGroup = { value: podSc.runAsGroup };
    const groups = podSupplementalGroups(pod);
    if (groups.length > 0) sc.supplementalGroups = groups;
    const selinux = selinuxOf(podSc.seLinuxOptions);
    if (selinux) sc.selinuxOptions = selinux;
  }
  return { securityContext: sc, sysctls };
}
