/**
 * What the kube-apiserver harness needs on the machine, and installing it (root) when missing:
 *
 * - Debian packages: `etcd-server` (/usr/bin/etcd, 3.4), `etcd-client` (/usr/bin/etcdctl, for
 *   forced compactions), `openssl` (certificates) and a kubectl at /usr/bin/kubectl (any: the
 *   machine image's, or Debian's `kubernetes-client` 1.20 when there is none). If installing
 *   etcd-server started the distro's etcd service, it is stopped and disabled: each harness
 *   instance runs its own etcd.
 * - kube-apiserver v1.20.2, built from Debian bookworm's `kubernetes` source package by
 *   `test/harness/build-kube-apiserver.sh` (adds a deb-src entry, installs golang-go, rsync, make
 *   and Debian's reflect2 v1.0.2 which replaces the vendored v1.0.1; ~6 min cold on 2 cores). The
 *   binary is cached OUTSIDE the repository, keyed by the Debian source version:
 *   `${SHARDLET_TOOLS_DIR:-/var/cache/shardlet-tools}/kube-apiserver-<version>/kube-apiserver`.
 *   A later run finds it and skips the build; concurrent first runs serialise on a lock file there.
 *   `SHARDLET_KUBE_APISERVER=/path/to/kube-apiserver` bypasses all of this (no apt, no build).
 *
 * Called by `prepare.ts` (before `npm test`) and by `startControlPlane` itself (so `npm run bench`
 * works on a fresh machine). Within one process the work happens at most once.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensurePackages, PrepareError, type Requirement } from './apt-packages.js';

export const CONTROL_PLANE_REQUIREMENTS: readonly Requirement[] = Object.freeze([
  { pkg: 'etcd-server', paths: ['/usr/bin/etcd'] },
  { pkg: 'etcd-client', paths: ['/usr/bin/etcdctl'] },
  { pkg: 'openssl', paths: ['/usr/bin/openssl'] },
  { pkg: 'kubernetes-client', paths: ['/usr/bin/kubectl'], pathsSuffice: true },
]);

/** Absolute paths of every program the harness runs. */
export interface ControlPlaneTools {
  readonly etcd: string;
  readonly etcdctl: string;
  readonly openssl: string;
  readonly kubectl: string;
  readonly kubeApiserver: string;
}

export class ControlPlaneInstallError extends Error {
  override readonly name = 'ControlPlaneInstallError';
  readonly code: 'ERR_HARNESS_NOT_ROOT' | 'ERR_HARNESS_INSTALL' | 'ERR_HARNESS_BUILD';
  constructor(code: ControlPlaneInstallError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

/** `build-kube-apiserver.sh` in the source tree (this module runs from dist/test/harness/). */
export function buildScriptPath(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return path.resolve(here, '..', '..', '..', 'test', 'harness', 'build-kube-apiserver.sh');
}

/** Installs the Debian packages above when missing (root). Synchronous; prints apt's progress. */
export function installControlPlanePackages(): void {
  try {
    ensurePackages(CONTROL_PLANE_REQUIREMENTS);
  } catch (err) {
    if (!(err instanceof PrepareError)) throw err;
    const code = err.code === 'ERR_PREPARE_NOT_ROOT' ? 'ERR_HARNESS_NOT_ROOT' : 'ERR_HARNESS_INSTALL';
    throw new ControlPlaneInstallError(code, `kube-apiserver harness: ${err.message}`);
  }
}

/** Components `build-kube-apiserver.sh` builds (its first argument). */
export type KubeComponent = 'kube-apiserver' | 'kube-scheduler' | 'kube-controller-manager' | 'kubelet';

/**
 * Runs the build script for `component` (a no-op printing the cached path when the binary
 * exists) and returns the binary's path; `alsoBuild` are built in the same run when missing (one
 * source unpack and code generation for all). Its progress goes to our stderr; its stdout's last line
 * is the path.
 */
function runBuildScript(component: KubeComponent = 'kube-apiserver', alsoBuild: readonly KubeComponent[] = []): Promise<string> {
  const script = buildScriptPath();
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script, component, ...alsoBuild], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      out += d;
    });
    child.once('error', (err) => reject(new ControlPlaneInstallError('ERR_HARNESS_BUILD', `${script}: ${err.message}`)));
    child.once('close', (code, sig) => {
      const bin = out.trim().split('\n').pop() ?? '';
      if (code === 0 && path.isAbsolute(bin) && fs.existsSync(bin)) resolve(bin);
      else reject(new ControlPlaneInstallError('ERR_HARNESS_BUILD', `${script} failed (${code ?? sig}); stdout: ${out.trim() || '(empty)'}`));
    });
  });
}

/**
 * The cached kube-apiserver, building it first when absent. Without root only an existing binary
 * can be used (the script needs apt for a first build and fails clearly without it).
 */
async function ensureKubeApiserver(): Promise<string> {
  const override = process.env['SHARDLET_KUBE_APISERVER'];
  if (override !== undefined && override !== '') {
    if (!path.isAbsolute(override) || !fs.existsSync(override)) {
      throw new ControlPlaneInstallError('ERR_HARNESS_BUILD', `SHARDLET_KUBE_APISERVER=${override}: not an absolute path to an existing file`);
    }
    return override;
  }
  return runBuildScript();
}

const components = new Map<KubeComponent, Promise<string>>();

/**
 * The cached kube-scheduler, kube-controller-manager or kubelet (v1.20.2, same source as the apiserver),
 * built first when absent (as ensureKubeApiserver). Memoised per process; failures not cached.
 */
export function ensureKubeComponent(component: Exclude<KubeComponent, 'kube-apiserver'>): Promise<string> {
  let p = components.get(component);
  if (p === undefined) {
    p = runBuildScript(component);
    components.set(component, p);
    p.catch(() => components.delete(component));
  }
  return p;
}

let installing: Promise<ControlPlaneTools> | undefined;

/**
 * Everything the harness runs, installed and built when missing (see module comment). Memoised per
 * process; a failure is not cached, so a later call retries.
 */
export function ensureControlPlaneTools(): Promise<ControlPlaneTools> {
  installing ??= (async () => {
    installControlPlanePackages();
    const kubeApiserver = await ensureKubeApiserver();
    return Object.freeze({ etcd: '/usr/bin/etcd', etcdctl: '/usr/bin/etcdctl', openssl: '/usr/bin/openssl', kubectl: '/usr/bin/kubectl', kubeApiserver });
  })();
  installing.catch(() => {
    installing = undefined;
  });
  return installing;
}

/**
 * Every Kubernetes binary the tests use (kube-apiserver, kube-scheduler, kube-controller-manager,
 * kubelet), the missing ones built in one run of the build script: what prepare.ts does first so
 * that no test pays for a build. SHARDLET_KUBE_APISERVER keeps the apiserver out of it.
 */
export async function ensureAllKubeBinaries(): Promise<string[]> {
  const others = ['kube-scheduler', 'kube-controller-manager', 'kubelet'] as const;
  const apiserverOverride = process.env['SHARDLET_KUBE_APISERVER'];
  if (apiserverOverride === undefined || apiserverOverride === '') await runBuildScript('kube-apiserver', others);
  return Promise.all(others.map((c) => ensureKubeComponent(c)));
}
