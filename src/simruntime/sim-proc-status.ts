/**
 * `/proc/self/status` of a simulated container process, as Linux 5.x/6.x formats it, with the
 * identity and confinement fields computed from the container's security (sim-security.ts):
 * Uid/Gid (real, effective, saved, fs), Groups (each followed by a space), the capability sets,
 * NoNewPrivs and Seccomp / Seccomp_filters. The other fields are plausible constants.
 * `/proc/sys/<name>` answers the sandbox's sysctls (a sysctl the pod did not set is not known).
 */
import type { SimSecurity } from './sim-security.js';
import { normalizeSysctlName } from '../shared/kubetypes/sysctl-names.js';

export function procSelfStatus(sec: SimSecurity, command: string, pid: number): string {
  const ids = (n: number): string => `${n}\t${n}\t${n}\t${n}`;
  return [
    `Name:\t${command.slice(0, 15)}`,
    'Umask:\t0022',
    'State:\tR (running)',
    `Tgid:\t${pid}`,
    'Ngid:\t0',
    `Pid:\t${pid}`,
    'PPid:\t0',
    'TracerPid:\t0',
    `Uid:\t${ids(sec.uid)}`,
    `Gid:\t${ids(sec.gid)}`,
    'FDSize:\t64',
    `Groups:\t${sec.groups.map((g) => `${g} `).join('')}`,
    `NStgid:\t${pid}`,
    `NSpid:\t${pid}`,
    `NSpgid:\t${pid}`,
    `NSsid:\t${pid}`,
    'Threads:\t1',
    'SigQ:\t0/63619',
    'SigPnd:\t0000000000000000',
    'ShdPnd:\t0000000000000000',
    'SigBlk:\t0000000000000000',
    'SigIgn:\t0000000000000000',
    'SigCgt:\t0000000000000000',
    'CapInh:\t0000000000000000',
    `CapPrm:\t${sec.capPrm}`,
    `CapEff:\t${sec.capEff}`,
    `CapBnd:\t${sec.capBnd}`,
    'CapAmb:\t0000000000000000',
    `NoNewPrivs:\t${sec.noNewPrivs ? 1 : 0}`,
    `Seccomp:\t${sec.seccompMode}`,
    `Seccomp_filters:\t${sec.seccompMode === 2 ? 1 : 0}`,
    'Speculation_Store_Bypass:\tthread vulnerable',
    'Cpus_allowed_list:\t0-1',
    'voluntary_ctxt_switches:\t0',
    'nonvoluntary_ctxt_switches:\t0',
    '',
  ].join('\n');
}

/** `/proc/sys/kernel/shm_rmid_forced` → the sandbox's `kernel.shm_rmid_forced` (dotted or slashed) + newline. */
export function procSysValue(sysctls: Record<string, string> | undefined, p: string): string | undefined {
  if (!sysctls || !p.startsWith('/proc/sys/')) return undefined;
  const rel = p.slice('/proc/sys/'.length);
  for (const [name, value] of Object.entries(sysctls)) {
    // The dotted form with dots and slashes swapped is the path (eth0/100 names eth0.100).
    const asPath = [...normalizeSysctlName(name)].map((ch) => (ch === '.' ? '/' : ch === '/' ? '.' : ch)).join('');
    if (asPath === rel) return `${value}\n`;
  }
  return undefined;
}
