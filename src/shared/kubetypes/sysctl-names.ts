/**
 * Sysctl names as the kubelet and the API server read them: the name syntax
 * (pkg/apis/core/validation IsValidSysctlName), the slash/dot normalization
 * (component-helpers/node/util/sysctl NormalizeName), which kernel namespace a sysctl belongs to
 * (namespace.go GetNamespace) and the kubelet's safe set (pkg/kubelet/sysctl/safe_sysctls.go).
 * Pure: no I/O. Used by manifest validation, by the sysctl admission (main thread) and by tests.
 *
 * Invariant that keeps sysctl names harmless as paths: a name that passes {@link isValidSysctlName}
 * is segments of `[a-z0-9]([-_a-z0-9]*[a-z0-9])?` joined by `.` or `/`, so no segment is empty,
 * `.` or `..`; the runtime's `/proc/sys/<name with separators as />` never leaves /proc/sys.
 */

/** The API server's SysctlMaxLength. */
export const SYSCTL_MAX_LENGTH = 253;
/** The API server's sysctlContainSlashRegexp (segments joined by `.` or `/`). */
export const SYSCTL_NAME_PATTERN = '([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?';
const SYSCTL_NAME_RE = new RegExp(`^${SYSCTL_NAME_PATTERN}$`);
/**
 * A pattern for --allowed-unsafe-sysctls (policy SysctlContainSlashPatternFmt): a name whose last
 * segment may end in `*` (`kernel.msg*`, `net.ipv4.*`).
 */
const SYSCTL_PATTERN_RE = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]$/;

export function isValidSysctlName(name: string): boolean {
  return name.length <= SYSCTL_MAX_LENGTH && SYSCTL_NAME_RE.test(name);
}

export function isValidSysctlPattern(pattern: string): boolean {
  return pattern.length <= SYSCTL_MAX_LENGTH && SYSCTL_PATTERN_RE.test(pattern);
}

/**
 * `/`-separated names in the dotted form (`net/ipv4/conf/eno2.100/rp_filter` →
 * `net.ipv4.conf.eno2/100.rp_filter`): when the first separator is `/`, dots and slashes swap.
 */
export function normalizeSysctlName(name: string): string {
  const i = name.search(/[./]/);
  if (i === -1 || name[i] === '.') return name;
  let out = '';
  for (const ch of name) out += ch === '.' ? '/' : ch === '/' ? '.' : ch;
  return out;
}

/** The kernel namespace a sysctl lives in ('' when it is not known to be namespaced). */
export type SysctlNamespace = 'IPC' | 'Net' | '';

const NAME_TO_NAMESPACE: ReadonlyMap<string, SysctlNamespace> = new Map([
  ['kernel.sem', 'IPC'],
  ['kernel.shmall', 'IPC'],
  ['kernel.shmmax', 'IPC'],
  ['kernel.shmmni', 'IPC'],
  ['kernel.shm_rmid_forced', 'IPC'],
  ['kernel.shm', 'IPC'],
  ['kernel.msgmax', 'IPC'],
  ['kernel.msgmnb', 'IPC'],
  ['kernel.msgmni', 'IPC'],
  ['kernel.msg', 'IPC'],
]);
const PREFIX_TO_NAMESPACE: readonly (readonly [string, SysctlNamespace])[] = [
  ['net', 'Net'],
  ['fs.mqueue', 'IPC'],
];

function namespaceOf(name: string): SysctlNamespace {
  const ns = NAME_TO_NAMESPACE.get(name);
  if (ns !== undefined) return ns;
  for (const [p, n] of PREFIX_TO_NAMESPACE) if (name.startsWith(`${p}.`)) return n;
  return '';
}

/**
 * GetNamespace: the namespace, the normalized name (cut at the first `*`), and whether it is a
 * prefix pattern.
 */
export function sysctlNamespace(sysctl: string): { ns: SysctlNamespace; nameOrPrefix: string; prefixed: boolean } {
  let nameOrPrefix = normalizeSysctlName(sysctl);
  const star = nameOrPrefix.indexOf('*');
  const prefixed = star !== -1;
  if (prefixed) nameOrPrefix = nameOrPrefix.slice(0, star);
  return { ns: namespaceOf(nameOrPrefix), nameOrPrefix, prefixed };
}

/** The kubelet's safe sysctls with the kernel version each needs ('' = any). */
const SAFE_SYSCTLS: readonly (readonly [string, string])[] = [
  ['kernel.shm_rmid_forced', ''],
  ['net.ipv4.ip_local_port_range', ''],
  ['net.ipv4.tcp_syncookies', ''],
  ['net.ipv4.ping_group_range', ''],
  ['net.ipv4.ip_unprivileged_port_start', ''],
  ['net.ipv4.ip_local_reserved_ports', '3.16'],
  ['net.ipv4.tcp_keepalive_time', '4.5'],
  ['net.ipv4.tcp_fin_timeout', '4.6'],
  ['net.ipv4.tcp_keepalive_intvl', '4.5'],
  ['net.ipv4.tcp_keepalive_probes', '4.5'],
  ['net.ipv4.tcp_rmem', '4.15'],
  ['net.ipv4.tcp_wmem', '4.15'],
];

function versionAtLeast(have: string, want: string): boolean {
  const h = have.split(/[.-]/).map((x) => Number.parseInt(x, 10));
  const w = want.split('.').map((x) => Number.parseInt(x, 10));
  for (let i = 0; i < w.length; i++) {
    const a = h[i] ?? 0;
    const b = w[i] ?? 0;
    if (!Number.isFinite(a)) return false;
    if (a !== b) return a > b;
  }
  return true;
}

/**
 * SafeSysctlAllowlist: the safe sysctls this kernel (`os.release()`) has; an unreadable version
 * keeps only those with no minimum, as the kubelet does.
 */
export function safeSysctls(kernelRelease: string): string[] {
  return SAFE_SYSCTLS.filter(([, min]) => min === '' || versionAtLeast(kernelRelease, min)).map(([n]) => n);
}
