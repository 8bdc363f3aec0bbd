/**
 * Test-machine preparation, run by `test/run-all.ts` before any test file (and runnable on its
 * own: `node dist/test/harness/prepare.js`).
 *
 * Installs, with apt and only when something is missing, what the containerd harness, the CRI
 * contract suite and the Prometheus scrape test need: containerd, runc, the CNI plugins, gcc +
 * libc6-dev (the static pause program), busybox-static (the busybox image) and prometheus.
 * Then what the kube-apiserver harness needs (apiserver-install.ts): etcd-server, etcd-client,
 * openssl, a kubectl, and kube-apiserver built from Debian's `kubernetes` source package, cached
 * under /var/cache/shardlet-tools (~6 min the first time, with progress on stderr; a no-op later).
 *
 * Contract:
 * - Idempotent, and fast when everything is present: two `dpkg-query`s, a few `stat`s and the
 *   build script's cache check (`apt-cache showsrc`), no apt-get.
 * - Root only (CI is root). Non-root with something missing exits 1 with a clear message;
 *   non-root with everything present is fine (nothing to do).
 * - Never leaves the system containerd running: if installing containerd started the distro
 *   service, it is stopped (by PID when systemd is not PID 1) and disabled. The harness runs its
 *   own private containerd instances.
 * - `apt-get` waits up to 10 min for the dpkg lock: other engineers (or another test driver) may
 *   be installing at the same moment.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ensureControlPlaneTools } from './apiserver-install.js';
import { aptInstall, missingPackages as missingOf, shInherit as sh, type Requirement } from './apt-packages.js';
import { findSystemContainerdPids } from './host-processes.js';

export const REQUIREMENTS: readonly Requirement[] = Object.freeze([
  { pkg: 'containerd', paths: ['/usr/bin/containerd', '/usr/bin/ctr', '/usr/bin/containerd-shim-runc-v2'] },
  { pkg: 'runc', paths: ['/usr/sbin/runc'] },
  { pkg: 'containernetworking-plugins', paths: ['/usr/lib/cni/bridge', '/usr/lib/cni/host-local', '/usr/lib/cni/loopback'] },
  { pkg: 'gcc', paths: ['/usr/bin/gcc'] },
  { pkg: 'libc6-dev', paths: [] },
  { pkg: 'busybox-static', paths: ['/bin/busybox'] },
  { pkg: 'prometheus', paths: ['/usr/bin/prometheus'] },
]);

export function missingPackages(): string[] {
  return missingOf(REQUIREMENTS);
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

/** The apt packages of the containerd harness, contract suite and Prometheus test. */
function preparePackages(): number {
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
  if (aptInstall(missing) !== 0) {
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

/** etcd, etcdctl, kubectl, openssl and the cached kube-apiserver build (apiserver-install.ts). */
async function prepareControlPlane(): Promise<number> {
  try {
    const tools = await ensureControlPlaneTools();
    process.stdout.write(`prepare: kube-apiserver harness ready (${tools.kubeApiserver})\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`prepare: kube-apiserver harness: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

export async function prepare(): Promise<number> {
  const code = preparePackages();
  if (code !== 0) return code;
  return prepareControlPlane();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = await prepare();
}
