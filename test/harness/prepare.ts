/**
 * Test-machine preparation: installs, with apt and only when something is missing, the Debian
 * packages the tests, the harnesses and the benchmark need. The one place that installs them:
 * - `test/run-all.ts` runs it (all of `REQUIREMENTS`) before any test file, and it is runnable on
 *   its own: `node dist/test/harness/prepare.js`;
 * - the containerd harness (and so `npm run bench` and `bench:ceiling --runtime containerd`)
 *   calls `ensurePackages(CONTAINERD_REQUIREMENTS)` before it starts containerd;
 * - the grpc-go client harness calls `ensurePackages(GO_GRPC_CLIENT_REQUIREMENTS)`.
 *
 * Contract:
 * - Idempotent, and fast when everything is present: one `dpkg-query` plus a few `stat`s, no apt.
 * - Root only (CI is root). Non-root with something missing fails with a clear message;
 *   non-root with everything present is fine (nothing to do).
 * - Never leaves a distro daemon it installed running or enabled: the harnesses run private
 *   instances, a system one would only compete for CPU (and Prometheus would hold port 9090).
 *   After installing `containerd` its service is stopped and disabled; after installing
 *   `prometheus` its service is stopped, disabled and masked (its postinst enables it on systemd
 *   machines). Without systemd as init, a daemon a postinst started through invoke-rc.d is
 *   stopped by PID (only the exact distro invocation, see host-processes.ts).
 * - `apt-get` waits up to 10 min for the dpkg lock: other engineers (or another test driver) may
 *   be installing at the same moment.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { findSystemContainerdPids, findSystemPrometheusPids } from './host-processes.js';

/** One required Debian package and the files that prove it is usable. */
export interface Requirement {
  readonly pkg: string;
  /** Absolute paths that must exist (commands, plugins); checked in addition to dpkg status. */
  readonly paths: readonly string[];
}

/** What a private containerd with CNI and the locally built images needs. */
export const CONTAINERD_REQUIREMENTS: readonly Requirement[] = Object.freeze([
  { pkg: 'containerd', paths: ['/usr/bin/containerd', '/usr/bin/ctr', '/usr/bin/containerd-shim-runc-v2'] },
  { pkg: 'runc', paths: ['/usr/sbin/runc'] },
  { pkg: 'containernetworking-plugins', paths: ['/usr/lib/cni/bridge', '/usr/lib/cni/host-local', '/usr/lib/cni/loopback'] },
  { pkg: 'gcc', paths: ['/usr/bin/gcc'] },
  { pkg: 'libc6-dev', paths: [] },
  { pkg: 'busybox-static', paths: ['/bin/busybox'] },
]);

/** The Go toolchain and Debian's grpc-go, to build test/harness/go-grpc-client. */
export const GO_GRPC_CLIENT_REQUIREMENTS: readonly Requirement[] = Object.freeze([
  { pkg: 'golang-go', paths: ['/usr/bin/go'] },
  { pkg: 'golang-google-grpc-dev', paths: ['/usr/share/gocode/src/google.golang.org/grpc/clientconn.go'] },
]);

/** Everything `npm test` needs. */
export const REQUIREMENTS: readonly Requirement[] = Object.freeze([
  ...CONTAINERD_REQUIREMENTS,
  { pkg: 'prometheus', paths: ['/usr/bin/prometheus'] },
  ...GO_GRPC_CLIENT_REQUIREMENTS,
]);

/** The machine, as prepare sees it (a seam for the unit test). */
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
});

export function missingPackages(requirements: readonly Requirement[] = REQUIREMENTS, host: PrepareHost = realHost): string[] {
  const installed = host.installedPackages(requirements.map((r) => r.pkg));
  return requirements.filter((r) => !installed.has(r.pkg) || r.paths.some((p) => !host.exists(p))).map((r) => r.pkg);
}

const APT_ENV: NodeJS.ProcessEnv = { DEBIAN_FRONTEND: 'noninteractive' };
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
  const ok = host.run('apt-get', [...APT_LOCK_WAIT, 'update'], APT_ENV) === 0 && host.run('apt-get', [...APT_LOCK_WAIT, 'install', '-y', '--no-install-recommends', ...missing], APT_ENV) === 0;
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

/** The CLI / run-all entry: everything `npm test` needs; 0 on success, 1 with a message. */
export function prepare(requirements: readonly Requirement[] = REQUIREMENTS, host: PrepareHost = realHost): number {
  try {
    ensurePackages(requirements, host);
    return 0;
  } catch (err) {
    if (!(err instanceof PrepareError)) throw err;
    process.stderr.write(`prepare: ${err.message}\n`);
    return 1;
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

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = prepare();
}
