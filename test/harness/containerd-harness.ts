/**
 * A private, real containerd for tests and benchmarks: its own temp dir, config, socket, runc
 * state, CNI bridge + subnet, and the two local images imported. Root only.
 *
 * Lifecycle: startContainerd() → running → stop() → stopped. stop() is idempotent (a second call
 * returns the first call's promise) and leaves nothing behind: pods torn down through CRI (so CNI
 * releases addresses and netns mounts go), containerd killed by PID (SIGTERM, then SIGKILL),
 * leftover shims of THIS instance (their `-address` arg is our socket) and their children killed,
 * mounts under the temp dir unmounted, the bridge deleted, ip_forward restored by the last
 * instance (network-slots.ts), the QoS cgroup tree of its agents removed (test-cgroups.ts), and
 * the temp dir removed.
 *
 * A run killed before stop() (SIGKILL, test timeout) leaves all of that behind; the next
 * startContainerd() on this machine finds the dead owner's network slot and reclaims it
 * (reclaimStaleInstance below): same kills, unmounts and removals.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { containerdLayout, renderBridgeConflist, renderContainerdConfig, type ContainerdLayout } from './containerd-config.js';
import { childrenOf, findProcesses, isAlive, listProcesses, signal } from './host-processes.js';
import { ensureLocalImages, type LocalImages } from './local-images.js';
import { claimNetworkSlot, type NetworkSlot } from './network-slots.js';
import { pollUntil } from './poll.js';
import { ensurePackages, PrepareError } from './apt-packages.js';
import { CONTAINERD_REQUIREMENTS } from './prepare.js';
import { teardownAllPods } from './cri-teardown.js';
import { cgroupRootForSocket, removeTestCgroupRoot } from './test-cgroups.js';

export interface StartContainerdOptions {
  /** containerd log level (default `info`). */
  readonly logLevel?: 'info' | 'warn' | 'debug';
  /** How long to wait for the socket + CRI Version + readiness (default 30 s). */
  readonly startTimeoutMs?: number;
  /**
   * containerd's root (content store, snapshots, metadata: what CRI ImageFsInfo measures) on a
   * tmpfs of this many bytes, so a test can fill the image filesystem for real (image GC).
   * Unmounted with everything else by stop().
   */
  readonly rootTmpfsBytes?: number;
  /** More OCI image-layout tars imported after the two local images. */
  readonly extraImageTars?: readonly string[];
}

export interface ContainerdInstance {
  /** `unix:///…/containerd.sock`, for CriClient / the agent's --container-runtime-endpoint. */
  readonly endpoint: string;
  readonly socketPath: string;
  readonly tmpDir: string;
  readonly logPath: string;
  readonly pid: number;
  /** Pod network of this instance: bridge name, subnet, gateway. */
  readonly network: { readonly bridge: string; readonly subnet: string; readonly gateway: string };
  readonly images: LocalImages;
  /** The --cgroup-root the e2e agent harness gives agents on this instance (removed by stop()). */
  readonly agentCgroupRoot: string;
  /** Tears everything down (see module comment). Idempotent. */
  stop(): Promise<void>;
  /**
   * A containerd crash: SIGKILL the daemon (its shims and containers live on, its state stays
   * on disk), await `whileDown` if given, then start it again on the same config and socket
   * and resolve once it is ready. `pid` names the new process afterwards.
   */
  killAndRestart(whileDown?: () => Promise<void>): Promise<void>;
}

export class ContainerdHarnessError extends Error {
  override readonly name = 'ContainerdHarnessError';
  readonly code: 'ERR_HARNESS_NOT_ROOT' | 'ERR_HARNESS_MISSING' | 'ERR_HARNESS_START' | 'ERR_HARNESS_IMPORT';
  constructor(code: ContainerdHarnessError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

function logTail(logPath: string, lines = 20): string {
  try {
    return fs.readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function checkHost(): void {
  if (process.getuid?.() !== 0) {
    throw new ContainerdHarnessError('ERR_HARNESS_NOT_ROOT', 'the containerd harness needs root (private containerd, runc, CNI bridge); run the tests as root like CI does');
  }
  // Installs containerd, runc, the CNI plugins, gcc and busybox-static when missing (apt), as
  // `npm test`'s preparation does: the benchmark may be the first thing a new user runs.
  try {
    ensurePackages(CONTAINERD_REQUIREMENTS);
  } catch (err) {
    if (err instanceof PrepareError) throw new ContainerdHarnessError('ERR_HARNESS_MISSING', `containerd harness: ${err.message}`);
    throw err;
  }
}

function importImage(socketPath: string, tarPath: string, logPath: string): void {
  const r = spawnSync('ctr', ['-a', socketPath, '-n', 'k8s.io', 'images', 'import', tarPath], { encoding: 'utf8' });
  if (r.status !== 0) {
    throw new ContainerdHarnessError('ERR_HARNESS_IMPORT', `ctr images import ${tarPath} failed: ${r.error?.message ?? r.stderr}\n--- containerd log ---\n${logTail(logPath)}`);
  }
}

/** Mount points at or below `dir`, deepest first (from /proc/self/mountinfo, field 5). */
function mountsUnder(dir: string): string[] {
  const text = fs.readFileSync('/proc/self/mountinfo', 'utf8');
  const points = text
    .split('\n')
    .map((line) => (line.split(' ')[4] ?? '').replace(/\\040/g, ' '))
    .filter((m) => m === dir || m.startsWith(dir + '/'));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

async function waitExit(child: ChildProcess, exited: Promise<void>, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const done = await Promise.race([exited.then(() => true as const), timeout]);
  clearTimeout(timer);
  return done;
}

/**
 * SIGKILLs this instance's leftover shims (their `-address` arg is our socket) and their children
 * (container init processes), plus a containerd still running with our config. Returns the PIDs.
 */
function killInstanceProcessesNow(layout: ContainerdLayout): number[] {
  const all = listProcesses();
  const ours = [...findProcesses('containerd-shim-runc-v2', layout.socketPath), ...findProcesses('containerd', layout.configPath)];
  const pids: number[] = [];
  for (const p of ours) {
    for (const child of childrenOf(p.pid, all)) signal(child.pid, 'SIGKILL');
    signal(p.pid, 'SIGKILL');
    pids.push(p.pid);
  }
  return pids;
}

function unmountUnder(dir: string): void {
  for (const m of mountsUnder(dir)) spawnSync('umount', ['-l', m], { stdio: 'ignore' });
}

/** Reclaims what a killed earlier run left behind (see network-slots.ts). Synchronous. */
function reclaimStaleInstance(staleTmpDir: string): void {
  if (!path.basename(staleTmpDir).startsWith('shardlet-ctrd-')) return; // only ever our own dirs
  killInstanceProcessesNow(containerdLayout(staleTmpDir));
  removeTestCgroupRoot(cgroupRootForSocket(containerdLayout(staleTmpDir).socketPath));
  unmountUnder(staleTmpDir);
  fs.rmSync(staleTmpDir, { recursive: true, force: true, maxRetries: 3 });
}

class Instance implements ContainerdInstance {
  readonly endpoint: string;
  readonly socketPath: string;
  readonly tmpDir: string;
  readonly logPath: string;
  pid: number;
  readonly network: ContainerdInstance['network'];
  readonly images: LocalImages;
  readonly agentCgroupRoot: string;
  #child: ChildProcess;
  #exited: Promise<void>;
  readonly #slot: NetworkSlot;
  readonly #layout: ContainerdLayout;
  #stopping: Promise<void> | undefined;

  constructor(layout: ContainerdLayout, child: ChildProcess, exited: Promise<void>, slot: NetworkSlot, images: LocalImages) {
    this.socketPath = layout.socketPath;
    this.endpoint = `unix://${layout.socketPath}`;
    this.tmpDir = layout.tmpDir;
    this.logPath = layout.logPath;
    this.pid = child.pid ?? -1;
    this.network = { bridge: slot.bridge, subnet: slot.subnet, gateway: slot.gateway };
    this.images = images;
    this.agentCgroupRoot = cgroupRootForSocket(layout.socketPath);
    this.#child = child;
    this.#exited = exited;
    this.#slot = slot;
    this.#layout = layout;
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async killAndRestart(whileDown?: () => Promise<void>): Promise<void> {
    if (this.#stopping) throw new ContainerdHarnessError('ERR_HARNESS_START', 'containerd instance already stopped');
    this.#child.kill('SIGKILL');
    await waitExit(this.#child, this.#exited, 10_000);
    await whileDown?.();
    const { child, exited } = spawnContainerd(this.#layout);
    this.#child = child;
    this.#exited = exited;
    this.pid = child.pid ?? -1;
    await waitReady(this.#layout, child, 30_000);
  }

  async #stop(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      await teardownAllPods(this.endpoint).catch(() => undefined); // best effort: the kills below are the backstop
      this.#child.kill('SIGTERM');
      if (!(await waitExit(this.#child, this.#exited, 10_000))) {
        this.#child.kill('SIGKILL');
        await waitExit(this.#child, this.#exited, 10_000);
      }
    }
    const killed = killInstanceProcessesNow(this.#layout);
    await pollUntil(() => (killed.some(isAlive) ? undefined : true), { what: 'leftover shims to exit', timeoutMs: 10_000 });
    // The QoS/pod cgroups agents on this instance made (their containers are gone now).
    // Best effort, like the kills: what still holds a process is reported, the teardown goes on.
    await pollUntil(() => (removeTestCgroupRoot(this.agentCgroupRoot).length === 0 ? true : undefined), { what: `cgroups under ${this.agentCgroupRoot} to be removable`, timeoutMs: 10_000 })
      .catch((err: unknown) => process.stderr.write(`containerd harness: ${err instanceof Error ? err.message : String(err)}: ${removeTestCgroupRoot(this.agentCgroupRoot).join(' ')}\n`));
    unmountUnder(this.tmpDir);
    this.#slot.release();
    fs.rmSync(this.tmpDir, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** Starts a private containerd and resolves once CRI answers and both images are imported. */
export async function startContainerd(opts: StartContainerdOptions = {}): Promise<ContainerdInstance> {
  checkHost();
  const images = ensureLocalImages();
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-ctrd-'));
  const layout = containerdLayout(tmpDir);
  const slot = claimNetworkSlot({ tmpDir, reclaim: reclaimStaleInstance });
  let child: ChildProcess | undefined;
  let instance: Instance | undefined;
  try {
    for (const d of [layout.rootDir, layout.stateDir, layout.runcRoot, layout.cniConfDir, layout.cniDataDir]) fs.mkdirSync(d, { recursive: true });
    if (opts.rootTmpfsBytes !== undefined) {
      const m = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${Math.floor(opts.rootTmpfsBytes)},mode=0711`, 'tmpfs', layout.rootDir], { encoding: 'utf8' });
      if (m.status !== 0) throw new ContainerdHarnessError('ERR_HARNESS_START', `mount tmpfs on ${layout.rootDir} failed: ${m.error?.message ?? m.stderr}`);
    }
    fs.writeFileSync(layout.configPath, renderContainerdConfig({ layout, sandboxImage: images.pause.name, logLevel: opts.logLevel ?? 'info' }));
    fs.writeFileSync(path.join(layout.cniConfDir, '10-shardlet-bridge.conflist'), renderBridgeConflist(slot, layout));
    const spawned = spawnContainerd(layout);
    child = spawned.child;
    const c = child;
    instance = new Instance(layout, c, spawned.exited, slot, images);
    await waitReady(layout, c, opts.startTimeoutMs ?? 30_000);
    importImage(layout.socketPath, images.pause.tarPath, layout.logPath);
    importImage(layout.socketPath, images.busybox.tarPath, layout.logPath);
    for (const tar of opts.extraImageTars ?? []) importImage(layout.socketPath, tar, layout.logPath);
    return instance;
  } catch (err) {
    if (instance) await instance.stop();
    else {
      unmountUnder(tmpDir);
      slot.release();
      fs.rmSync(tmpDir, { recursive: true, force: true });
    }
    throw err;
  }
}

function spawnContainerd(layout: ContainerdLayout): { child: ChildProcess; exited: Promise<void> } {
  const logFd = fs.openSync(layout.logPath, 'a');
  const child = spawn('/usr/bin/containerd', ['--config', layout.configPath], { stdio: ['ignore', logFd, logFd] });
  fs.closeSync(logFd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', () => undefined); // surfaced by waitReady as "exited before ready"
  return { child, exited };
}

/** Socket present, CRI Version answering, RuntimeReady and NetworkReady (CNI conf loaded). */
async function waitReady(layout: ContainerdLayout, child: ChildProcess, timeoutMs: number): Promise<void> {
  const client = new CriClient({ endpoint: layout.socketPath, timeoutMs: 2_000 });
  try {
    await pollUntil(
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new ContainerdHarnessError('ERR_HARNESS_START', `containerd exited (${child.exitCode ?? child.signalCode}) before ready:\n${logTail(layout.logPath)}`);
        }
        if (!fs.existsSync(layout.socketPath)) return undefined;
        await client.version();
        const st = await client.status();
        const ready = (type: string): boolean => st.status?.conditions.some((c) => c.type === type && c.status) ?? false;
        return ready('RuntimeReady') && ready('NetworkReady') ? true : undefined;
      },
      { what: `containerd CRI on ${layout.socketPath}`, timeoutMs, intervalMs: 100 },
    ).catch((err: unknown) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new ContainerdHarnessError('ERR_HARNESS_START', `containerd exited (${child.exitCode ?? child.signalCode}) before ready:\n${logTail(layout.logPath)}`);
      }
      throw new ContainerdHarnessError('ERR_HARNESS_START', `${err instanceof Error ? err.message : String(err)}\n--- containerd log ---\n${logTail(layout.logPath)}`);
    });
  } finally {
    client.close();
  }
}
