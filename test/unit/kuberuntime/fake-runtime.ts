/**
 * An in-memory CRI runtime behind the RuntimeService/ImageService seams, for kuberuntime tests.
 * It records every call that reaches it as a readable line ("CreateContainer app",
 * "StopContainer app 30"), so tests assert the sequence of CRI calls; it builds the
 * RuntimePodStatus a PLEG would (independently of the code under test); and it lets tests make
 * containers exit, inject failures, block a call until released, and script ExecSync.
 *
 * Like containerd: ids are opaque; RemoveContainer force-removes; stopping an already stopped
 * container is fine; a call whose signal is aborted rejects with ERR_CRI_CANCELLED and a call
 * made with an already-aborted signal is not recorded (it never leaves the client).
 */
import { CriError, type CriErrorCode } from '../../../src/shared/cri/cri-errors.js';
import type {
  Container, ContainerConfig, ContainerFilter, ContainerState, ContainerStatusResponse, CreateContainerRequest,
  ExecSyncRequest, ExecSyncResponse, Image, ImageFsInfoResponse, ImageSpec, ImageStatusResponse, PodSandbox,
  PodSandboxConfig, PodSandboxFilter, PodSandboxState, PodSandboxStatusResponse, PullImageRequest, RunPodSandboxRequest,
  StatusResponse, VersionResponse, ContainerStats, PodSandboxStats,
} from '../../../src/shared/cri/cri-types.js';
import type { CallOptions, ImageService, RuntimeService } from '../../../src/shared/cri/runtime-service.js';
import type { Clock } from '../../../src/shared/clock/clock.js';
import type { RuntimePodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';

interface FakeSandbox { id: string; config: PodSandboxConfig; state: PodSandboxState; createdNs: bigint; seq: number; ip: string }
interface FakeContainer {
  id: string; sandboxId: string; config: ContainerConfig; state: ContainerState; seq: number;
  createdNs: bigint; startedNs: bigint; finishedNs: bigint; exitCode: number; reason: string; imageName: string; imageRef: string;
}

const NS_PER_MS = 1_000_000n;

export class FakeRuntime implements RuntimeService, ImageService {
  readonly calls: string[] = [];
  /** image name → id; images present on the node. */
  readonly images = new Map<string, string>();
  /** image name → the user its ImageStatus reports (absent: none, i.e. root). */
  readonly imageUsers = new Map<string, { uid?: number; username?: string }>();
  /** Images PullImage can fetch (others fail like a registry 404). */
  readonly registry = new Set<string>();
  /** Exit code a container gets from StopContainer (SIGTERM honoured). */
  stopExitCode = 143;
  /** ExecSync behaviour; default: exit 0. */
  exec: (req: ExecSyncRequest, signal?: AbortSignal) => Promise<ExecSyncResponse> = async () => ({ stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0 });
  readonly #waiters: { prefix: string; resolve: () => void }[] = [];
  readonly #failures = new Map<string, CriError[]>();
  readonly #gates = new Map<string, { promise: Promise<void>; release: () => void }>();
  readonly #sandboxes = new Map<string, FakeSandbox>();
  readonly #containers = new Map<string, FakeContainer>();
  #seq = 0;
  #ipSeq = 1;

  constructor(private readonly clock: Clock) {}

  // ---- test controls ----------------------------------------------------------------------

  /** The next call of `op` (CRI method name, e.g. "CreateContainer") fails with this code. */
  failNext(op: string, code: CriErrorCode = 'ERR_CRI_UNKNOWN', message = `${op} failed`): void {
    const q = this.#failures.get(op) ?? [];
    q.push(new CriError(code, op, message));
    this.#failures.set(op, q);
  }

  /** Calls of `op` wait (after being recorded) until the returned release() runs or they abort. */
  block(op: string): () => void {
    let release!: () => void;
    const promise = new Promise<void>((r) => (release = r));
    this.#gates.set(op, { promise, release });
    return () => {
      this.#gates.delete(op);
      release();
    };
  }

  /** Resolves when a call starting with `prefix` has been recorded (now or later). */
  waitForCall(prefix: string): Promise<void> {
    if (this.calls.some((c) => c.startsWith(prefix))) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ prefix, resolve }));
  }

  addImage(name: string): string {
    const id = `sha256:${Buffer.from(name).toString('hex').padEnd(16, '0').slice(0, 16)}`;
    this.images.set(name, id);
    return id;
  }

  /** The process of a running container exits. */
  exitContainer(name: string, exitCode: number, reason = ''): string {
    const c = [...this.#containers.values()].filter((x) => x.config.metadata.name === name && x.state === 'CONTAINER_RUNNING').pop();
    if (!c) throw new Error(`no running container ${name}`);
    this.#exit(c, exitCode, reason);
    return c.id;
  }

  /** The sandbox dies (e.g. its pause process was killed). */
  killSandbox(podName: string): void {
    for (const s of this.#sandboxes.values()) if (s.config.metadata.name === podName && s.state === 'SANDBOX_READY') s.state = 'SANDBOX_NOTREADY';
  }

  containerIdOf(name: string): string {
    const c = [...this.#containers.values()].filter((x) => x.config.metadata.name === name).pop();
    if (!c) throw new Error(`no container ${name}`);
    return c.id;
  }

  lastConfigOf(name: string): ContainerConfig {
    return this.#containers.get(this.containerIdOf(name))!.config;
  }

  /** The configs RunPodSandbox was given, oldest first. */
  sandboxConfigs(): PodSandboxConfig[] {
    return [...this.#sandboxes.values()].sort((a, b) => a.seq - b.seq).map((s) => s.config);
  }

  get sandboxCount(): number {
    return this.#sandboxes.size;
  }
  get containerCount(): number {
    return this.#containers.size;
  }

  /** What a PLEG relist would cache for the pod: newest sandbox and container instances first. */
  podStatus(uid: string): RuntimePodStatus {
    const sbs = [...this.#sandboxes.values()].filter((s) => s.config.metadata.uid === uid).sort((a, b) => b.seq - a.seq);
    const sbIds = new Set(sbs.map((s) => s.id));
    const cs = [...this.#containers.values()].filter((c) => sbIds.has(c.sandboxId)).sort((a, b) => b.seq - a.seq);
    const cur = sbs[0];
    const ips = cur && cur.state === 'SANDBOX_READY' && cur.ip !== '' ? [cur.ip] : [];
    return {
      uid, name: cur?.config.metadata.name ?? '', namespace: cur?.config.metadata.namespace ?? '', ips,
      sandboxes: sbs.map((s) => ({
        id: s.id, state: s.state, createdAtNs: String(s.createdNs), attempt: s.config.metadata.attempt,
        ip: s.state === 'SANDBOX_READY' ? s.ip : '', ips: s.ip ? [s.ip] : [], hostNetwork: s.config.linux?.securityContext?.namespaceOptions?.network === 'NODE',
      })),
      containers: cs.map((c) => ({
        id: c.id, podSandboxId: c.sandboxId, name: c.config.labels?.['io.kubernetes.container.name'] ?? c.config.metadata.name,
        state: c.state, createdAtNs: String(c.createdNs), startedAtNs: String(c.startedNs), finishedAtNs: String(c.finishedNs),
        exitCode: c.exitCode, reason: c.reason, message: '', image: c.imageName, imageRef: c.imageRef,
        hash: c.config.annotations?.['io.kubernetes.container.hash'] ?? '',
        restartCount: Number(c.config.annotations?.['io.kubernetes.container.restartCount'] ?? '0'), attempt: c.config.metadata.attempt,
      })),
    };
  }

  // ---- RuntimeService ---------------------------------------------------------------------

  async version(): Promise<VersionResponse> {
    return { version: '0.1.0', runtimeName: 'fake', runtimeVersion: '1', runtimeApiVersion: 'v1' };
  }
  async status(): Promise<StatusResponse> {
    return { status: { conditions: [] }, info: {} };
  }

  async runPodSandbox(req: RunPodSandboxRequest, opts?: CallOptions): Promise<string> {
    await this.#enter('RunPodSandbox', `${req.config.metadata.name} attempt=${req.config.metadata.attempt}`, opts);
    const id = `sb-${++this.#seq}`;
    const hostNet = req.config.linux?.securityContext?.namespaceOptions?.network === 'NODE';
    this.#sandboxes.set(id, { id, config: req.config, state: 'SANDBOX_READY', createdNs: this.#nowNs(), seq: this.#seq, ip: hostNet ? '' : `10.88.0.${++this.#ipSeq}` });
    return id;
  }
  async stopPodSandbox(id: string, opts?: CallOptions): Promise<void> {
    const sb = this.#sandbox(id);
    await this.#enter('StopPodSandbox', sb.config.metadata.name, opts);
    for (const c of this.#containers.values()) if (c.sandboxId === id && c.state === 'CONTAINER_RUNNING') this.#exit(c, 137, 'Error');
    sb.state = 'SANDBOX_NOTREADY';
  }
  async removePodSandbox(id: string, opts?: CallOptions): Promise<void> {
    const sb = this.#sandbox(id);
    await this.#enter('RemovePodSandbox', sb.config.metadata.name, opts);
    if (sb.state === 'SANDBOX_READY') throw new CriError('ERR_CRI_FAILED_PRECONDITION', 'RemovePodSandbox', 'sandbox is not stopped');
    for (const c of [...this.#containers.values()]) if (c.sandboxId === id) this.#containers.delete(c.id);
    this.#sandboxes.delete(id);
  }
  async podSandboxStatus(id: string, opts?: CallOptions): Promise<PodSandboxStatusResponse> {
    const sb = this.#sandbox(id);
    await this.#enter('PodSandboxStatus', sb.config.metadata.name, opts);
    return {
      status: { id, metadata: sb.config.metadata, state: sb.state, createdAt: String(sb.createdNs), network: { ip: sb.ip, additionalIps: [] }, labels: sb.config.labels ?? {}, annotations: sb.config.annotations ?? {}, runtimeHandler: '' },
      info: {}, containersStatuses: [], timestamp: String(this.#nowNs()),
    };
  }
  async listPodSandbox(filter?: PodSandboxFilter, opts?: CallOptions): Promise<PodSandbox[]> {
    await this.#enter('ListPodSandbox', '', opts);
    return [...this.#sandboxes.values()]
      .filter((s) => matches(s.config.labels ?? {}, filter?.labelSelector))
      .map((s) => ({ id: s.id, metadata: s.config.metadata, state: s.state, createdAt: String(s.createdNs), labels: s.config.labels ?? {}, annotations: s.config.annotations ?? {}, runtimeHandler: '' }));
  }
  async createContainer(req: CreateContainerRequest, opts?: CallOptions): Promise<string> {
    await this.#enter('CreateContainer', req.config.metadata.name, opts);
    const sb = this.#sandbox(req.podSandboxId);
    if (sb.state !== 'SANDBOX_READY') throw new CriError('ERR_CRI_UNKNOWN', 'CreateContainer', 'sandbox is not running');
    const imageName = [...this.images.entries()].find(([, id]) => id === req.config.image.image)?.[0] ?? req.config.image.image;
    const id = `c-${++this.#seq}`;
    this.#containers.set(id, {
      id, sandboxId: sb.id, config: req.config, state: 'CONTAINER_CREATED', seq: this.#seq, createdNs: this.#nowNs(),
      startedNs: 0n, finishedNs: 0n, exitCode: 0, reason: '', imageName, imageRef: req.config.image.image,
    });
    return id;
  }
  async startContainer(id: string, opts?: CallOptions): Promise<void> {
    const c = this.#container(id);
    await this.#enter('StartContainer', c.config.metadata.name, opts);
    c.state = 'CONTAINER_RUNNING';
    c.startedNs = this.#nowNs();
  }
  async stopContainer(id: string, timeoutSeconds: number, opts?: CallOptions): Promise<void> {
    const c = this.#container(id);
    await this.#enter('StopContainer', `${c.config.metadata.name} ${timeoutSeconds}`, opts);
    if (c.state === 'CONTAINER_RUNNING') this.#exit(c, this.stopExitCode, 'Error');
  }
  async removeContainer(id: string, opts?: CallOptions): Promise<void> {
    const c = this.#container(id);
    await this.#enter('RemoveContainer', c.config.metadata.name, opts);
    this.#containers.delete(id);
  }
  async listContainers(filter?: ContainerFilter, opts?: CallOptions): Promise<Container[]> {
    await this.#enter('ListContainers', '', opts);
    return [...this.#containers.values()]
      .filter((c) => matches(c.config.labels ?? {}, filter?.labelSelector))
      .map((c) => ({ id: c.id, podSandboxId: c.sandboxId, metadata: c.config.metadata, image: c.config.image, imageRef: c.imageRef, state: c.state, createdAt: String(c.createdNs), labels: c.config.labels ?? {}, annotations: c.config.annotations ?? {}, imageId: c.imageRef }));
  }
  async containerStatus(id: string, opts?: CallOptions): Promise<ContainerStatusResponse> {
    const c = this.#container(id);
    await this.#enter('ContainerStatus', c.config.metadata.name, opts);
    return {
      status: {
        id, metadata: c.config.metadata, state: c.state, createdAt: String(c.createdNs), startedAt: String(c.startedNs), finishedAt: String(c.finishedNs),
        exitCode: c.exitCode, image: { image: c.imageName }, imageRef: c.imageRef, reason: c.reason, message: '', labels: c.config.labels ?? {},
        annotations: c.config.annotations ?? {}, mounts: [], logPath: c.config.logPath ?? '', imageId: c.imageRef,
      },
      info: {},
    };
  }
  async execSync(req: ExecSyncRequest, opts?: CallOptions): Promise<ExecSyncResponse> {
    const c = this.#container(req.containerId);
    await this.#enter('ExecSync', `${c.config.metadata.name} ${req.cmd.join(' ')}`, opts);
    return this.exec(req, opts?.signal);
  }
  async listContainerStats(): Promise<ContainerStats[]> {
    return [];
  }
  async listPodSandboxStats(): Promise<PodSandboxStats[]> {
    return [];
  }


  // ---- ImageService -----------------------------------------------------------------------

  async listImages(): Promise<Image[]> {
    return [...this.images.entries()].map(([name, id]) => ({ id, repoTags: [name], repoDigests: [], size: '1', username: '', spec: null, pinned: false }));
  }
  async imageStatus(image: ImageSpec, opts?: CallOptions): Promise<ImageStatusResponse> {
    await this.#enter('ImageStatus', image.image, opts);
    const id = this.images.get(image.image);
    const user = this.imageUsers.get(image.image);
    const uid = user?.uid !== undefined ? { value: String(user.uid) } : null;
    return { image: id ? { id, repoTags: [image.image], repoDigests: [], size: '1', uid, username: user?.username ?? '', spec: null, pinned: false } : null, info: {} };
  }
  async pullImage(req: PullImageRequest, opts?: CallOptions): Promise<string> {
    await this.#enter('PullImage', req.image.image, opts);
    if (!this.registry.has(req.image.image)) {
      throw new CriError('ERR_CRI_UNKNOWN', 'PullImage', `PullImage: failed to pull and unpack image "${req.image.image}": not found`);
    }
    return this.addImage(req.image.image);
  }
  async removeImage(image: ImageSpec): Promise<void> {
    this.images.delete(image.image);
  }
  async imageFsInfo(): Promise<ImageFsInfoResponse> {
    return { imageFilesystems: [], containerFilesystems: [] };
  }

  // ---- internals --------------------------------------------------------------------------

  async #enter(op: string, detail: string, opts?: CallOptions): Promise<void> {
    const signal = opts?.signal;
    if (signal?.aborted) throw new CriError('ERR_CRI_CANCELLED', op, `${op}: cancelled`);
    const line = detail === '' ? op : `${op} ${detail}`;
    this.calls.push(line);
    for (const w of this.#waiters.splice(0)) {
      if (line.startsWith(w.prefix)) w.resolve();
      else this.#waiters.push(w);
    }
    const gate = this.#gates.get(op);
    if (gate) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = (): void => reject(new CriError('ERR_CRI_CANCELLED', op, `${op}: cancelled`));
        signal?.addEventListener('abort', onAbort, { once: true });
        void gate.promise.then(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    }
    const failure = this.#failures.get(op)?.shift();
    if (failure) throw failure;
  }
  #nowNs(): bigint {
    return BigInt(this.clock.now()) * NS_PER_MS;
  }
  #exit(c: FakeContainer, exitCode: number, reason: string): void {
    c.state = 'CONTAINER_EXITED';
    c.exitCode = exitCode;
    c.reason = reason || (exitCode === 0 ? 'Completed' : 'Error');
    c.finishedNs = this.#nowNs();
  }
  #sandbox(id: string): FakeSandbox {
    const s = this.#sandboxes.get(id);
    if (!s) throw new CriError('ERR_CRI_NOT_FOUND', 'PodSandbox', `sandbox ${id} not found`);
    return s;
  }
  #container(id: string): FakeContainer {
    const c = this.#containers.get(id);
    if (!c) throw new CriError('ERR_CRI_NOT_FOUND', 'Container', `container ${id} not found`);
    return c;
  }
}

function matches(labels: Record<string, string>, selector: Record<string, string> | undefined): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
}
