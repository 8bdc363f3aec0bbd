/**
 * The `info` map of verbose ContainerStatus / PodSandboxStatus, shaped like containerd 1.6's: one
 * key, "info", holding JSON with `config` (the CRI config as received; camelCase here, Go's
 * snake_case in containerd) and `runtimeSpec`, the OCI runtime spec fields the security settings
 * became. The runtimeSpec part uses the OCI field names, so a test can read
 * `runtimeSpec.process.user`, `process.capabilities`, `process.noNewPrivileges`,
 * `root.readonly`, `linux.seccomp`, `linux.maskedPaths`, `linux.readonlyPaths` and
 * `linux.sysctl` from either runtime.
 */
import type { StringMap } from '../shared/cri/cri-types.js';
import { CAPABILITY_NAMES, type SimSecurity } from './sim-security.js';
import type { ContainerRecord, SandboxRecord } from './sim-state.js';

function capNames(hex: string): string[] {
  const mask = BigInt(`0x${hex}`);
  return CAPABILITY_NAMES.filter((_, bit) => (mask & (1n << BigInt(bit))) !== 0n).map((n) => `CAP_${n}`);
}

/** A stand-in for the profile the runtime loads: its default action tells "filter" from none. */
function seccompOf(profileType: string | undefined, localhostRef: string | undefined, privileged: boolean): unknown {
  if (privileged || profileType === undefined || profileType === 'Unconfined') return undefined;
  return { defaultAction: 'SCMP_ACT_ERRNO', profile: profileType === 'Localhost' ? `localhost/${localhostRef ?? ''}` : 'runtime/default' };
}

export function containerVerboseInfo(c: ContainerRecord, sec: SimSecurity): StringMap {
  const sc = c.config.linux?.securityContext;
  const bounding = capNames(sec.capBnd);
  const effective = capNames(sec.capEff);
  const spec = {
    process: {
      user: { uid: sec.uid, gid: sec.gid, additionalGids: sec.groups },
      args: c.argv,
      capabilities: { bounding, effective, permitted: effective },
      noNewPrivileges: sec.noNewPrivs,
      ...(sc?.apparmor && sc.apparmor.profileType !== 'Unconfined' && !sec.privileged ? { apparmorProfile: sc.apparmor.profileType === 'Localhost' ? sc.apparmor.localhostRef : 'cri-containerd.apparmor.d' } : {}),
      ...(sc?.selinuxOptions ? { selinuxLabel: [sc.selinuxOptions.user, sc.selinuxOptions.role, sc.selinuxOptions.type, sc.selinuxOptions.level].join(':') } : {}),
    },
    root: { path: 'rootfs', readonly: sec.readonlyRootfs },
    linux: {
      seccomp: seccompOf(sc?.seccomp?.profileType, sc?.seccomp?.localhostRef, sec.privileged),
      maskedPaths: sec.privileged ? [] : sc?.maskedPaths ?? [],
      readonlyPaths: sec.privileged ? [] : sc?.readonlyPaths ?? [],
    },
  };
  return { info: JSON.stringify({ sandboxID: c.sandboxId, pid: 0, removing: false, snapshotter: 'overlayfs', runtimeType: 'io.containerd.runc.v2', config: c.config, runtimeSpec: spec }) };
}

export function sandboxVerboseInfo(s: SandboxRecord): StringMap {
  const sc = s.config.linux?.securityContext;
  const uid = Number(sc?.runAsUser?.value ?? 0);
  const gid = Number(sc?.runAsGroup?.value ?? 0);
  const spec = {
    process: { user: { uid, gid, additionalGids: [gid, ...(sc?.supplementalGroups ?? []).map(Number)].sort((a, b) => a - b) }, noNewPrivileges: true },
    root: { path: 'rootfs', readonly: true },
    linux: {
      sysctl: { ...(s.config.linux?.sysctls ?? {}) },
      seccomp: seccompOf(sc?.seccomp?.profileType, sc?.seccomp?.localhostRef, sc?.privileged === true),
    },
  };
  return { info: JSON.stringify({ pid: 0, processStatus: s.state === 'SANDBOX_READY' ? 'running' : 'stopped', netNamespaceClosed: s.state !== 'SANDBOX_READY', image: 'docker.io/local/pause:1', runtimeHandler: s.runtimeHandler, runtimeType: 'io.containerd.runc.v2', config: s.config, runtimeSpec: spec }) };
}
