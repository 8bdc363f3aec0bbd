/**
 * Debian packages the harness needs: which are missing (one `dpkg-query`, a few `stat`s) and
 * installing them with apt-get (root only). Shared by `prepare.ts` (before any test) and the
 * control-plane install (`apiserver-install.ts`, which `startControlPlane` calls on its own so a
 * bench run works before any test run).
 *
 * `apt-get` waits up to 10 min for the dpkg lock: other engineers (or another test driver) may be
 * installing at the same moment.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

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

/** dpkg status of each package in one call: `install ok installed` means present. */
function installedPackages(pkgs: readonly string[]): Set<string> {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Package} ${db:Status-Status}\\n', ...pkgs], { encoding: 'utf8' });
  const out = new Set<string>();
  for (const line of (r.stdout ?? '').split('\n')) {
    const [name, status] = line.trim().split(' ');
    if (name && status === 'installed') out.add(name);
  }
  return out;
}

export function missingPackages(reqs: readonly Requirement[]): string[] {
  const installed = installedPackages(reqs.map((r) => r.pkg));
  const present = (r: Requirement): boolean => r.paths.every((p) => fs.existsSync(p));
  return reqs.filter((r) => (r.pathsSuffice === true && r.paths.length > 0 ? !present(r) : !installed.has(r.pkg) || !present(r))).map((r) => r.pkg);
}

/** Runs a command with inherited stdio, echoing it first (progress for a human watching). */
export function shInherit(cmd: string, args: readonly string[], env?: NodeJS.ProcessEnv): number {
  process.stdout.write(`prepare: $ ${cmd} ${args.join(' ')}\n`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.error) process.stderr.write(`prepare: ${cmd}: ${r.error.message}\n`);
  return r.status ?? 1;
}

export const APT_ENV: NodeJS.ProcessEnv = Object.freeze({ DEBIAN_FRONTEND: 'noninteractive' });
const APT_LOCK_WAIT = ['-o', 'DPkg::Lock::Timeout=600'];

/** `apt-get update` then `install -y --no-install-recommends`; returns the exit status. */
export function aptInstall(pkgs: readonly string[]): number {
  if (shInherit('apt-get', [...APT_LOCK_WAIT, 'update'], APT_ENV) !== 0) return 1;
  return shInherit('apt-get', [...APT_LOCK_WAIT, 'install', '-y', '--no-install-recommends', ...pkgs], APT_ENV);
}
