/**
 * What a simulated container process runs as, derived from its CRI config the way containerd 1.6
 * and runc apply it (containerd pkg/cri/server/container_create_linux.go, oci/spec_opts.go):
 *
 *  - user: run_as_user, else run_as_username looked up in the image's /etc/passwd, else the
 *    image's user (Config.User), else root. The primary group is run_as_group, else the user's
 *    group in /etc/passwd, else 0. Supplementary groups (getgroups, kernel-sorted): the primary
 *    group (containerd ensureAdditionalGids, since the CVE-2023-25173 fix), the user's groups in
 *    /etc/group, then supplemental_groups.
 *  - capabilities: privileged or add ALL → every capability the runtime itself holds
 *    (WithAllCurrentCapabilities); else containerd's default set; then drop ALL, individual adds,
 *    individual drops (names get the CAP_ prefix; unknown names are ignored, as runc does). A
 *    process of a non-root user has empty effective/permitted sets after exec (no file or
 *    ambient capabilities); the bounding set keeps the computed set.
 *  - seccomp: filter mode (2) for RuntimeDefault and Localhost, none (0) for Unconfined and for
 *    privileged containers; no_new_privs as given; readonly_rootfs as given.
 *
 * Pure apart from {@link runtimeCapabilities} (reads the runtime process's own /proc/self/status).
 * Plain data (caps as hex strings) so a record with it persists as JSON.
 */
import fs from 'node:fs';
import type { ContainerConfig } from '../shared/cri/cri-types.js';
import type { SimImageUserDb } from './sim-image-users.js';

/** Capability names by bit (linux/capability.h), without the CAP_ prefix. */
export const CAPABILITY_NAMES: readonly string[] = Object.freeze([
  'CHOWN', 'DAC_OVERRIDE', 'DAC_READ_SEARCH', 'FOWNER', 'FSETID', 'KILL', 'SETGID', 'SETUID', 'SETPCAP', 'LINUX_IMMUTABLE',
  'NET_BIND_SERVICE', 'NET_BROADCAST', 'NET_ADMIN', 'NET_RAW', 'IPC_LOCK', 'IPC_OWNER', 'SYS_MODULE', 'SYS_RAWIO', 'SYS_CHROOT',
  'SYS_PTRACE', 'SYS_PACCT', 'SYS_ADMIN', 'SYS_BOOT', 'SYS_NICE', 'SYS_RESOURCE', 'SYS_TIME', 'SYS_TTY_CONFIG', 'MKNOD', 'LEASE',
  'AUDIT_WRITE', 'AUDIT_CONTROL', 'SETFCAP', 'MAC_OVERRIDE', 'MAC_ADMIN', 'SYSLOG', 'WAKE_ALARM', 'BLOCK_SUSPEND', 'AUDIT_READ',
  'PERFMON', 'BPF', 'CHECKPOINT_RESTORE',
]);

/** containerd 1.6's default capability set (oci.defaultUnixCaps): 0x00000000a80425fb. */
export const DEFAULT_CAPABILITIES: readonly string[] = Object.freeze([
  'CHOWN', 'DAC_OVERRIDE', 'FSETID', 'FOWNER', 'MKNOD', 'NET_RAW', 'SETGID', 'SETUID', 'SETFCAP', 'SETPCAP', 'NET_BIND_SERVICE',
  'SYS_CHROOT', 'KILL', 'AUDIT_WRITE',
]);

export interface SimSecurity {
  uid: number;
  gid: number;
  /** Supplementary groups as getgroups(2) returns them (sorted). */
  groups: number[];
  /** Hex (16 digits) capability sets, as /proc/<pid>/status prints them. */
  capEff: string;
  capPrm: string;
  capBnd: string;
  noNewPrivs: boolean;
  /** /proc/<pid>/status Seccomp: 0 none, 2 filter. */
  seccompMode: 0 | 2;
  readonlyRootfs: boolean;
  privileged: boolean;
}

export function capMaskOf(names: Iterable<string>): bigint {
  let m = 0n;
  for (const n of names) {
    const bit = CAPABILITY_NAMES.indexOf(n.toUpperCase().replace(/^CAP_/, ''));
    if (bit >= 0) m |= 1n << BigInt(bit);
  }
  return m;
}

export function capHex(mask: bigint): string {
  return mask.toString(16).padStart(16, '0');
}

/** The capabilities the runtime process holds (its CapEff), what "all capabilities" means to containerd. */
export function runtimeCapabilities(read: () => string = () => fs.readFileSync('/proc/self/status', 'utf8')): bigint {
  try {
    const m = /^CapEff:\s*([0-9a-f]+)$/m.exec(read());
    if (m?.[1]) return BigInt(`0x${m[1]}`);
  } catch {
    // not Linux: fall through
  }
  return (1n << BigInt(CAPABILITY_NAMES.length)) - 1n;
}

/** The capability set of the container (setOCICapabilities / WithPrivileged). */
function capabilitiesOf(config: ContainerConfig, all: bigint): bigint {
  const sc = config.linux?.securityContext;
  if (sc?.privileged) return all;
  const add = sc?.capabilities?.addCapabilities ?? [];
  const drop = sc?.capabilities?.dropCapabilities ?? [];
  const isAll = (c: string): boolean => c.toUpperCase() === 'ALL';
  let caps = capMaskOf(DEFAULT_CAPABILITIES);
  if (add.some(isAll)) caps = all;
  if (drop.some(isAll)) caps = 0n;
  caps |= capMaskOf(add.filter((c) => !isAll(c)).map((c) => `CAP_${c.toUpperCase()}`)) & all;
  caps &= ~capMaskOf(drop.filter((c) => !isAll(c)).map((c) => `CAP_${c.toUpperCase()}`));
  return caps;
}

export type SimSecurityResult = { ok: true; security: SimSecurity } | { ok: false; message: string };

/** The process security of a container created from `config` with `image`'s users. */
export function simSecurityOf(config: ContainerConfig, image: SimImageUserDb, allCaps: bigint): SimSecurityResult {
  const sc = config.linux?.securityContext;
  let uid: number;
  let passwdGid: number | undefined;
  const runAsUser = sc?.runAsUser?.value;
  if (runAsUser !== undefined && runAsUser !== null) {
    uid = Number(runAsUser);
    passwdGid = image.byUid(uid)?.gid;
  } else {
    const name = sc?.runAsUsername || image.configUser;
    const resolved = image.resolve(name);
    if (!resolved.ok) return resolved;
    uid = resolved.uid;
    passwdGid = resolved.gid;
  }
  const runAsGroup = sc?.runAsGroup?.value;
  const gid = runAsGroup !== undefined && runAsGroup !== null ? Number(runAsGroup) : passwdGid ?? 0;
  const userName = image.byUid(uid)?.name;
  const groups = [gid, ...(userName ? image.memberOf(userName) : []), ...(sc?.supplementalGroups ?? []).map(Number)].sort((a, b) => a - b);
  const bounding = capabilitiesOf(config, allCaps);
  const effective = uid === 0 ? bounding : 0n;
  const privileged = sc?.privileged === true;
  const profile = sc?.seccomp?.profileType ?? 'Unconfined';
  return {
    ok: true,
    security: {
      uid, gid, groups,
      capEff: capHex(effective), capPrm: capHex(effective), capBnd: capHex(bounding),
      noNewPrivs: sc?.noNewPrivs === true,
      seccompMode: !privileged && (profile === 'RuntimeDefault' || profile === 'Localhost') ? 2 : 0,
      readonlyRootfs: sc?.readonlyRootfs === true,
      privileged,
    },
  };
}
