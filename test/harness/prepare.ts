/**
 * Test-machine preparation, run by `test/run-all.ts` before any test file (and runnable on its
 * own: `node dist/test/harness/prepare.js`).
 *
 * Installs, with apt and only when something is missing, what the containerd harness, the CRI
 * contract suite and the Prometheus scrape test need: containerd, runc, the CNI plugins, gcc +
 * libc6-dev (the static pause program), busybox-static (the busybox image) and prometheus.
 *
 * Contract:
 * - Idempotent, and fast when everything is present: one `dpkg-query` plus a few `stat`s, no apt.
 * - Root only (CI is root). Non-root with something missing exits 1 with a clear message;
 *   non-root with everything present is fine (nothing to do).
 * - Never leaves the system containerd running: if installing containerd started the distro
 *   service, it is stopped (by PID when systemd is not PID 1) and disabled. The harness runs its
 *   own private containerd instances.
 * - `apt-get` waits up to 10 min for the dpkg lock: other engineers (or another test driver) may
 *   be installing at the same moment.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { findSystemContainerdPids } from './host-processes.js';

/** One required Debian package and the files that prove it is usable. */
interface Requirement {
  readonly pkg: string;
  /** Absolute paths that must exist (commands, plugins); checked in addition to dpkg status. */
  readonly paths: readonly string[];
}

export const REQUIREMENTS: readonly Requirement[] = Object.freeze([
  { pkg: 'containerd', paths: ['/usr/bin/containerd', '/usr/bin/ctr', '/usr/bin/containerd-shim-runc-v2'] },
  { pkg: 'runc', paths: ['/usr/sbin/runc'] },
  { pkg: 'containernetworking-plugins', paths: ['/usr/lib/cni/bridge', '/usr/lib/cni/host-local', '/usr/lib/cni/loopback'] },
  { pkg: 'gcc', paths: ['/usr/bin/gcc'] },
  { pkg: 'libc6-dev', paths: [] },
  { pkg: 'busybox-static', paths: ['/bin/busybox'] },
  { pkg: 'prometheus', paths: ['/usr/bin/prometheus'] },
]);

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

export function missingPackages(): string[] {
  const installed = installedPackages(REQUIREMENTS.map((r) => r.pkg));
  return REQUIREMENTS.filter((r) => !installed.has(r.pkg) || r.paths.some((p) => !fs.existsSync(p))).map((r) => r.pkg);
}

function sh(cmd: string, args: string[], env?: NodeJS.ProcessEnv): number {
  process.stdout.write(`prepare: $ ${cmd} ${args.join(' ')}\n`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.error) process.stderr.write(`prepare: ${cmd}: ${r.error.message}\n`);
  return r.status ?? 1;
}

const APT_ENV: NodeJS.ProcessEnv = { DEBIAN_FRONTEND: 'noninteractive' };
const APT_LOCK_WAIT = ['-o', 'DPkg::Lock::Timeout=600'];

function install(pkgs: string[]): number {
  if (sh('apt-get', [...APT_LOCK_WAIT, 'update'], APT_ENV) !== 0) return 1;
  return sh('apt-get', [...APT_LOCK_WAIT, 'install', '-y', '--no-install-recommends', ...pkgs], APT_ENV);
}

/**
 * The distro package enables and (under systemd) starts `containerd.service`. Our harness runs
 * private instances; a system one would only compete for CPU. Stop it the way this machine allows.
 */
function stopSystemContainerd(): void {
  const systemdIsInit = fs.existsSync('/run/systemd/system');
  if (fs.existsSync('/usr/bin/systemctl') || fs.existsSync('/bin/systemctl')) {
    // `disable` works without a running systemd (it only removes symlinks); `--now` needs it.
    sh('systemctl', systemdIsInit ? ['disable', '--now', 'containerd'] : ['disable', 'containerd']);
  }
  // Without systemd, a postinst may still have started it through invoke-rc.d.
  for (const pid of findSystemContainerdPids()) {
    process.stdout.write(`prepare: stopping system containerd pid ${pid}\n`);
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}

export function prepare(): number {
  const missing = missingPackages();
  if (missing.length === 0) return 0;
  if (process.getuid?.() !== 0) {
    process.stderr.write(
      `prepare: missing packages: ${missing.join(' ')}\n` +
        'prepare: the containerd harness and contract tests need root (apt-get install, private containerd, CNI bridges).\n' +
        `prepare: run as root, or install them: apt-get install -y ${missing.join(' ')}\n`,
    );
    return 1;
  }
  process.stdout.write(`prepare: installing ${missing.join(' ')}\n`);
  if (install(missing) !== 0) {
    process.stderr.write('prepare: apt-get install failed\n');
    return 1;
  }
  if (missing.includes('containerd')) stopSystemContainerd();
  const still = missingPackages();
  if (still.length > 0) {
    process.stderr.write(`prepare: still missing after install: ${still.join(' ')}\n`);
    return 1;
  }
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = prepare();
}
