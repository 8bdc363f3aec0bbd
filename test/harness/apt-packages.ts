/**
 * Debian packages the tests, the harnesses and the benchmark need: which are missing (one
 * `dpkg-query`, a few `stat`s) and installing them with apt-get (root only). The one place that
 * installs packages; callers only list what they need:
 * - `prepare.ts` (run by `test/run-all.ts` before any test) installs everything `npm test` needs;
 * - the containerd harness (so `npm run bench` works before `npm test`), the grpc-go client
 *   harness and the control-plane install (`apiserver-install.ts`) call `ensurePackages` with
 *   their own lists.
 *
 * Contract:
 * - Idempotent, and fast when everything is present: one `dpkg-query` plus a few `stat`s, no apt.
 * - Root only (CI is root). Non-root with something missing fails with a clear message;
 *   non-root with everything present is fine (nothing to do).
 * - Never leaves a distro daemon it installed running or enabled: the harnesses run private
 *   instances, a system one would only compete for CPU (and Prometheus would hold port 9090).
 *   After installing `containerd` or `etcd-server` its service is stopped and disabled; after
 *   installing `prometheus` its service is stopped, disabled and masked (its postinst enables it
 *   on systemd machines). Without systemd as init, a daemon a postinst started through
 *   invoke-rc.d is stopped by PID (only the exact distro invocation, see host-processes.ts).
 * - `apt-get` waits up to 10 min for the dpkg lock: other engineers (or another test driver) may
 *   be installing at the same moment.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { findSystemContainerdPids, findSystemEtcdPids, findSystemPrometheusPids } from './host-processes.js';

/** One required Debian package and the files that prove it is usable. */
export interface Requirement {
  readonly pkg: string;
  /** Absolute paths that must exist (commands, plugins); checked in addition to dpkg status. */
  readonly paths: readonly string[];
  /**
   * The paths alone satisfy the requirement, whoever installed them (kubectl: the machine image
   * may carry a newer one than Debian's `kubernetes-client`; either will do).
   */
  readonly pathsSuffice?: boolean;
}

/** The machine, as package preparation sees it (a seam for the unit test). */
export interface PrepareHost {
  isRoot(): boolean;
  /** Of `pkgs`, those dpkg reports as installed. */
  installedPackages(pkgs: readonly string[]): Set<string>;
  exists(p: string): boolean;
  /** Runs a command (output inherited); returns its exit status. */
  run(cmd: string, args: readonly string[], env?: NodeJS.ProcessEnv): number;
  /** True when systemd is PID 1 (`systemctl --now` works). */
  systemdIsInit(): boolean;
  /** PIDs of the distro's own daemon for `pkg` (the invocation its service uses), if running. */
  distroDaemonPids(pkg: string): number[];
  kill(pid: number): void;
  log(line: string): void;
}

export class PrepareError extends Error {
  override readonly name = 'PrepareError';
  readonly code: 'ERR_PREPARE_NOT_ROOT' | 'ERR_PREPARE_INSTALL';
  constructor(code: PrepareError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

/** Distro services whose package enables and starts them; what to do after installing each. */
const SERVICES: Readonly<Record<string, { unit: string; mask: boolean }>> = Object.freeze({
  containerd: { unit: 'containerd', mask: false },
  prometheus: { unit: 'prometheus', mask: true },
  'etcd-server': { unit: 'etcd', mask: false },
});

export function missingPackages(requirements: readonly Requirement[], host: PrepareHost = realHost): string[] {
  const installed = host.installedPackages(requirements.map((r) => r.pkg));
  const present = (r: Requirement): boolean => r.paths.every((p) => host.exists(p));
  return requirements
    .filter((r) => (r.pathsSuffice === true && r.paths.length > 0 ? !present(r) : !installed.has(r.pkg) || !present(r)))
    .map((r) => r.pkg);
}

const APT_ENV: NodeJS.ProcessEnv = Object.freeze({ DEBIAN_FRONTEND: 'noninteractive' });
const APT_LOCK_WAIT = ['-o', 'DPkg::Lock::Timeout=600'];

/**
 * Installs what `requirements` lack; throws PrepareError when that is impossible (not root) or
 * fails. Stops/disables the distro services it installed (see the contract above).
 */
export function ensurePackages(requirements: readonly Requirement[], host: PrepareHost = realHost): void {
  const missing = missingPackages(requirements, host);
  if (missing.length === 0) return;
  if (!host.isRoot()) {
    throw new PrepareError(
      'ERR_PREPARE_NOT_ROOT',
      `missing packages: ${missing.join(' ')}; installing them needs root (run as root like CI, or: apt-get install -y ${missing.join(' ')})`,
    );
  }
  host.log(`prepare: installing ${missing.join(' ')}`);
  const ok =
    host.run('apt-get', [...APT_LOCK_WAIT, 'update'], APT_ENV) === 0 &&
    host.run('apt-get', [...APT_LOCK_WAIT, 'install', '-y', '--no-install-recommends', ...missing], APT_ENV) === 0;
  // Even after a partial failure: a service that did get installed must not stay running.
  for (const pkg of missing) {
    const svc = SERVICES[pkg];
    if (svc) quietDistroService(pkg, svc.unit, svc.mask, host);
  }
  if (!ok) throw new PrepareError('ERR_PREPARE_INSTALL', `apt-get install ${missing.join(' ')} failed`);
  const still = missingPackages(requirements, host);
  if (still.length > 0) throw new PrepareError('ERR_PREPARE_INSTALL', `still missing after install: ${still.join(' ')}`);
}

/**
 * Stops and disables (and masks, when asked) a service the package just installed. `disable`
 * works without a running systemd (it only removes symlinks); `--now` needs systemd as init.
 */
function quietDistroService(pkg: string, unit: string, mask: boolean, host: PrepareHost): void {
  if (host.exists('/usr/bin/systemctl') || host.exists('/bin/systemctl')) {
    host.run('systemctl', host.systemdIsInit() ? ['disable', '--now', unit] : ['disable', unit]);
    if (mask) host.run('systemctl', ['mask', unit]);
  }
  // Without systemd, a postinst may still have started it through invoke-rc.d.
  for (const pid of host.distroDaemonPids(pkg)) {
    host.log(`prepare: stopping the system ${unit} (pid ${pid})`);
    host.kill(pid);
  }
}

export const realHost: PrepareHost = {
  isRoot: () => process.getuid?.() === 0,
  installedPackages(pkgs) {
    const r = spawnSync('dpkg-query', ['-W', '-f=${Package} ${db:Status-Status}\\n', ...pkgs], { encoding: 'utf8' });
    const out = new Set<string>();
    for (const line of (r.stdout ?? '').split('\n')) {
      const [name, status] = line.trim().split(' ');
      if (name && status === 'installed') out.add(name);
    }
    return out;
  },
  exists: (p) => fs.existsSync(p),
  run(cmd, args, env) {
    process.stdout.write(`prepare: $ ${cmd} ${args.join(' ')}\n`);
    const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
    if (r.error) process.stderr.write(`prepare: ${cmd}: ${r.error.message}\n`);
    return r.status ?? 1;
  },
  systemdIsInit: () => fs.existsSync('/run/systemd/system'),
  distroDaemonPids(pkg) {
    if (pkg === 'containerd') return findSystemContainerdPids();
    if (pkg === 'prometheus') return findSystemPrometheusPids();
    if (pkg === 'etcd-server') return findSystemEtcdPids();
    return [];
  },
  kill(pid) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  },
  log: (line) => process.stdout.write(line + '\n'),
};
