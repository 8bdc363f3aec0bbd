/**
 * A real kubelet (v1.20, test/harness/kubelet-install.ts) as a bench process: standalone (no API
 * server), static pods from --pod-manifest-path, on a private CRI endpoint (the bench's own
 * containerd or simulated runtime), touching no host state beyond what it owns:
 *
 *   - its own --root-dir, --cert-dir, --volume-plugin-dir under the session's temp dir;
 *   - its pods' cgroups under a private --cgroup-root (created here in every hierarchy, as the
 *     kubelet requires it to exist; the caller removes it), --cgroups-per-qos with the cgroupfs
 *     driver, no node-allocatable enforcement;
 *   - no iptables chains, no swap check, image GC and eviction thresholds out of reach (it would
 *     only ever see its own runtime's images and pods, but a bench must not delete anything);
 *   - host sysctls untouched: the kubelet sets six kernel tunables (vm.overcommit_memory,
 *     kernel.panic, …) at start unless they already hold its values; it runs in a private mount
 *     namespace where those /proc/sys files are bind-mounted files that hold them, and with
 *     --protect-kernel-defaults, so a seventh would fail its start instead of writing the host's.
 *
 * Not private, by the kubelet's design: v1.20 writes container logs under the fixed
 * /var/log/pods/<ns>_<name>_<uid>/ and symlinks them in /var/log/containers; `removePodLogs`
 * removes exactly the given pods' entries afterwards.
 *
 * Its stderr is klog text; kubelet-observer.ts reads pod starts from it. It exits on SIGTERM at
 * once and leaves its containers running: the caller tears the runtime's pods down through CRI.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cgroupHierarchies } from '../test/harness/test-cgroups.js';
import { manage, waitReady, type ManagedProcess, type SpawnOptions } from './processes.js';

/** The kernel tunables the v1.20 kubelet sets at start (cm/container_manager_linux.go setupKernelTunables). */
export const KUBELET_KERNEL_TUNABLES: Readonly<Record<string, number>> = Object.freeze({
  'vm/overcommit_memory': 1,
  'vm/panic_on_oom': 0,
  'kernel/panic': 10,
  'kernel/panic_on_oops': 1,
  'kernel/keys/root_maxkeys': 1_000_000,
  'kernel/keys/root_maxbytes': 25_000_000,
});

export interface KubeletOptions extends SpawnOptions {
  kubelet: string;
  /** `unix:///…` CRI socket (runtime and image service). */
  endpoint: string;
  /** The session's temp dir: root dir, cert dir, plugin dir and the sysctl shadows go under it. */
  dir: string;
  manifestDir: string;
  nodeName: string;
  /** A cgroup path directly under the hierarchy roots, e.g. `/shardlet-e2e-abc`; created by start. */
  cgroupRoot: string;
  maxPods: number;
  /** 127.0.0.1 ports: the healthz port (readiness) and the API port (not used by the bench). */
  healthzPort: number;
  port: number;
  verbosity?: number;
  readyTimeoutMs?: number;
}

export function kubeletArgs(o: KubeletOptions): string[] {
  return [
    '--container-runtime=remote',
    `--container-runtime-endpoint=${o.endpoint}`,
    `--image-service-endpoint=${o.endpoint}`,
    `--pod-manifest-path=${o.manifestDir}`,
    '--file-check-frequency=1s',
    `--hostname-override=${o.nodeName}`,
    `--root-dir=${path.join(o.dir, 'root')}`,
    `--cert-dir=${path.join(o.dir, 'pki')}`,
    `--volume-plugin-dir=${path.join(o.dir, 'volume-plugins')}`,
    '--address=127.0.0.1',
    `--port=${o.port}`,
    '--read-only-port=0',
    '--healthz-bind-address=127.0.0.1',
    `--healthz-port=${o.healthzPort}`,
    '--cgroup-driver=cgroupfs',
    '--cgroups-per-qos=true',
    `--cgroup-root=${o.cgroupRoot}`,
    '--enforce-node-allocatable=',
    '--fail-swap-on=false',
    '--make-iptables-util-chains=false',
    '--protect-kernel-defaults=true',
    '--oom-score-adj=0',
    '--image-gc-high-threshold=100',
    '--image-gc-low-threshold=99',
    '--eviction-hard=memory.available<1Mi,nodefs.available<1%,imagefs.available<1%,nodefs.inodesFree<1%',
    `--max-pods=${o.maxPods}`,
    `--v=${o.verbosity ?? 2}`,
  ];
}

/** Creates `root` in every cgroup hierarchy (cpuset: with its parent's cpus and mems, which a new v1 cpuset lacks). */
export function createCgroupRoot(root: string): void {
  if (!/^\/[A-Za-z0-9_.-]+$/.test(root)) throw new Error(`cgroup root must be one path element under /: ${root}`);
  for (const h of cgroupHierarchies()) {
    const dir = path.join(h, root);
    fs.mkdirSync(dir, { recursive: true });
    for (const f of ['cpuset.cpus', 'cpuset.mems']) {
      const parent = path.join(h, f);
      const own = path.join(dir, f);
      if (fs.existsSync(parent) && fs.existsSync(own) && fs.readFileSync(own, 'utf8').trim() === '') fs.writeFileSync(own, fs.readFileSync(parent, 'utf8'));
    }
  }
}

/** The shell run under `unshare`: bind the shadows over /proc/sys, then exec the kubelet ("$0" "$@"). */
function wrapperScript(shadowDir: string): string {
  const binds = Object.keys(KUBELET_KERNEL_TUNABLES).map((k) => `mount --bind '${path.join(shadowDir, k.replace(/\//g, '.'))}' '/proc/sys/${k}'`);
  return ['set -e', ...binds, 'exec "$0" "$@"'].join('\n');
}

export async function startKubelet(o: KubeletOptions): Promise<ManagedProcess> {
  for (const d of ['root', 'pki', 'volume-plugins', 'sysctl']) fs.mkdirSync(path.join(o.dir, d), { recursive: true });
  const shadowDir = path.join(o.dir, 'sysctl');
  for (const [k, v] of Object.entries(KUBELET_KERNEL_TUNABLES)) fs.writeFileSync(path.join(shadowDir, k.replace(/\//g, '.')), `${v}\n`);
  createCgroupRoot(o.cgroupRoot);
  const child = spawn('unshare', ['--mount', '--propagation', 'private', '--', 'sh', '-c', wrapperScript(shadowDir), o.kubelet, ...kubeletArgs(o)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const proc = manage('kubelet', child, o);
  await waitReady(proc, o.clock, o.readyTimeoutMs ?? 60_000, 200, '/healthz 200', async () => {
    const res = await fetch(`http://127.0.0.1:${o.healthzPort}/healthz`, { signal: AbortSignal.timeout(2000) });
    await res.text();
    return res.ok;
  });
  return proc;
}

/**
 * Removes the kubelet's entries for pods `uids` of `namespace` under /var/log/pods and the
 * /var/log/containers symlinks into them (see module comment). Anything else there is left alone.
 */
export function removePodLogs(namespace: string, uids: ReadonlySet<string>, podsDir = '/var/log/pods', containersDir = '/var/log/containers'): number {
  let removed = 0;
  const ours = (name: string): boolean => name.startsWith(`${namespace}_`) && uids.has(name.slice(name.lastIndexOf('_') + 1));
  let links: string[] = [];
  try {
    links = fs.readdirSync(containersDir);
  } catch {
    /* no such dir: nothing linked */
  }
  for (const l of links) {
    const p = path.join(containersDir, l);
    let target: string;
    try {
      target = fs.readlinkSync(p);
    } catch {
      continue;
    }
    const rel = path.relative(podsDir, target).split(path.sep)[0] ?? '';
    if (!rel.startsWith('..') && ours(rel)) {
      fs.rmSync(p, { force: true });
      removed++;
    }
  }
  let dirs: string[] = [];
  try {
    dirs = fs.readdirSync(podsDir);
  } catch {
    return removed;
  }
  for (const d of dirs.filter(ours)) {
    fs.rmSync(path.join(podsDir, d), { recursive: true, force: true });
    removed++;
  }
  return removed;
}
