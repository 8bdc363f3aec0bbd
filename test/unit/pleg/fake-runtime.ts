/**
 * An in-memory RuntimeService for PLEG and runtime-status tests (the kubelet's FakeRuntime):
 * tests place sandboxes and containers in given states, remove them, make calls fail, and
 * read per-method call counts. Only the calls the PLEG and getPodStatus make are real; the
 * rest reject with ERR_CRI_UNIMPLEMENTED.
 */
import { CriError } from '../../../src/shared/cri/cri-errors.js';
import type {
  Container, ContainerFilter, ContainerState, ContainerStatus, ContainerStatusResponse, PodSandbox, PodSandboxFilter,
  PodSandboxState, PodSandboxStatus, PodSandboxStatusResponse, StringMap,
} from '../../../src/shared/cri/cri-types.js';
import type { RuntimeService } from '../../../src/shared/cri/runtime-service.js';
import {
  ContainerHashLabel, ContainerRestartCountLabel, KubernetesContainerNameLabel, KubernetesPodNameLabel,
  KubernetesPodNamespaceLabel, KubernetesPodUIDLabel,
} from '../../../src/shared/kubetypes/kubelet-labels.js';

export interface FakeSandbox {
  id: string;
  uid: string;
  name: string;
  namespace: string;
  state: PodSandboxState;
  createdAt: bigint;
  attempt: number;
  ip: string;
  hostNetwork: boolean;
}

export interface FakeContainer {
  id: string;
  sandboxId: string;
  uid: string;
  podName: string;
  namespace: string;
  name: string;
  state: ContainerState;
  createdAt: bigint;
  startedAt: bigint;
  finishedAt: bigint;
  exitCode: number;
  reason: string;
  restartCount: number;
  hash: string;
}

type Method = 'listPodSandbox' | 'listContainers' | 'podSandboxStatus' | 'containerStatus';

function matches(labels: StringMap, selector: StringMap | undefined): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector)) if (labels[k] !== v) return false;
  return true;
}

export class FakeRuntime implements RuntimeService {
  readonly sandboxes = new Map<string, FakeSandbox>();
  readonly containers = new Map<string, FakeContainer>();
  readonly calls: Record<Method, number> = { listPodSandbox: 0, listContainers: 0, podSandboxStatus: 0, containerStatus: 0 };
  /** Errors to throw from the next call of a method (one per call, in order). */
  readonly failNext: Partial<Record<Method, CriError[]>> = {};
  /** Object ids whose status calls fail with this error until cleared. */
  readonly failStatusOf = new Map<string, CriError>();
  #clockNs = 1_700_000_000_000_000_000n;

  #tick(): bigint {
    this.#clockNs += 1_000_000n;
    return this.#clockNs;
  }

  addSandbox(id: string, uid: string, opts: Partial<Omit<FakeSandbox, 'id' | 'uid'>> = {}): FakeSandbox {
    const s: FakeSandbox = {
      id, uid, name: `pod-${uid}`, namespace: 'default', state: 'SANDBOX_READY', createdAt: this.#tick(), attempt: 0,
      ip: '10.1.0.' + (this.sandboxes.size + 2), hostNetwork: false, ...opts,
    };
    this.sandboxes.set(id, s);
    return s;
  }

  addContainer(id: string, sandboxId: string, name: string, opts: Partial<Omit<FakeContainer, 'id' | 'sandboxId' | 'name'>> = {}): FakeContainer {
    const sb = this.sandboxes.get(sandboxId);
    if (!sb) throw new Error(`no sandbox ${sandboxId}`);
    const c: FakeContainer = {
      id, sandboxId, name, uid: sb.uid, podName: sb.name, namespace: sb.namespace, state: 'CONTAINER_CREATED',
      createdAt: this.#tick(), startedAt: 0n, finishedAt: 0n, exitCode: 0, reason: '', restartCount: 0, hash: 'abc123', ...opts,
    };
    this.containers.set(id, c);
    return c;
  }

  start(id: string): void {
    const c = this.#container(id);
    c.state = 'CONTAINER_RUNNING';
    c.startedAt = this.#tick();
  }

  exit(id: string, exitCode: number, reason = exitCode === 0 ? 'Completed' : 'Error'): void {
    const c = this.#container(id);
    c.state = 'CONTAINER_EXITED';
    c.finishedAt = this.#tick();
    c.exitCode = exitCode;
    c.reason = reason;
  }

  stopSandbox(id: string): void {
    const s = this.sandboxes.get(id);
    if (!s) throw new Error(`no sandbox ${id}`);
    s.state = 'SANDBOX_NOTREADY';
  }

  remove(id: string): void {
    if (!this.containers.delete(id) && !this.sandboxes.delete(id)) throw new Error(`no object ${id}`);
  }

  #container(id: string): FakeContainer {
    const c = this.containers.get(id);
    if (!c) throw new Error(`no container ${id}`);
    return c;
  }

  #enter(m: Method, id?: string): void {
    this.calls[m]++;
    const queued = this.failNext[m]?.shift();
    if (queued) throw queued;
    const byId = id === undefined ? undefined : this.failStatusOf.get(id);
    if (byId) throw byId;
  }

  #sandboxLabels(s: FakeSandbox): StringMap {
    return { [KubernetesPodUIDLabel]: s.uid, [KubernetesPodNameLabel]: s.name, [KubernetesPodNamespaceLabel]: s.namespace };
  }

  #containerLabels(c: FakeContainer): StringMap {
    return { [KubernetesPodUIDLabel]: c.uid, [KubernetesPodNameLabel]: c.podName, [KubernetesPodNamespaceLabel]: c.namespace, [KubernetesContainerNameLabel]: c.name };
  }

  #listSandbox(s: FakeSandbox): PodSandbox {
    return {
      id: s.id, metadata: { name: s.name, uid: s.uid, namespace: s.namespace, attempt: s.attempt }, state: s.state,
      createdAt: String(s.createdAt), labels: this.#sandboxLabels(s), annotations: {}, runtimeHandler: '',
    };
  }

  #listContainer(c: FakeContainer): Container {
    return {
      id: c.id, podSandboxId: c.sandboxId, metadata: { name: c.name, attempt: c.restartCount }, image: { image: 'busybox:1' },
      imageRef: 'sha256:img', state: c.state, createdAt: String(c.createdAt), labels: this.#containerLabels(c),
      annotations: { [ContainerHashLabel]: c.hash, [ContainerRestartCountLabel]: String(c.restartCount) }, imageId: 'sha256:img',
    };
  }

  async listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]> {
    this.#enter('listPodSandbox');
    return [...this.sandboxes.values()].map((s) => this.#listSandbox(s)).filter((s) => matches(s.labels, filter?.labelSelector));
  }

  async listContainers(filter?: ContainerFilter): Promise<Container[]> {
    this.#enter('listContainers');
    return [...this.containers.values()].map((c) => this.#listContainer(c)).filter((c) => matches(c.labels, filter?.labelSelector));
  }

  async podSandboxStatus(id: string): Promise<PodSandboxStatusResponse> {
    this.#enter('podSandboxStatus', id);
    const s = this.sandboxes.get(id);
    if (!s) throw new CriError('ERR_CRI_NOT_FOUND', 'PodSandboxStatus', `sandbox ${id} not found`);
    const l = this.#listSandbox(s);
    const status: PodSandboxStatus = {
      ...l, network: { ip: s.hostNetwork ? '' : s.ip, additionalIps: [] },
      linux: { namespaces: { options: { network: s.hostNetwork ? 'NODE' : 'POD' } } },
    };
    return { status, info: {}, containersStatuses: [], timestamp: '0' };
  }

  async containerStatus(id: string): Promise<ContainerStatusResponse> {
    this.#enter('containerStatus', id);
    const c = this.containers.get(id);
    if (!c) throw new CriError('ERR_CRI_NOT_FOUND', 'ContainerStatus', `container ${id} not found`);
    const l = this.#listContainer(c);
    const status: ContainerStatus = {
      id: c.id, metadata: l.metadata, state: c.state, createdAt: l.createdAt, startedAt: String(c.startedAt), finishedAt: String(c.finishedAt),
      exitCode: c.exitCode, image: l.image, imageRef: 'docker.io/library/busybox@sha256:abc', reason: c.reason, message: '',
      labels: l.labels, annotations: l.annotations, mounts: [], logPath: '', imageId: 'sha256:img',
    };
    return { status, info: {} };
  }

  #unimplemented(op: string): Promise<never> {
    return Promise.reject(new CriError('ERR_CRI_UNIMPLEMENTED', op, `${op} is not faked`));
  }

  version() { return this.#unimplemented('Version'); }
  status() { return this.#unimplemented('Status'); }
  runPodSandbox() { return this.#unimplemented('RunPodSandbox'); }
  stopPodSandbox() { return this.#unimplemented('StopPodSandbox'); }
  removePodSandbox() { return this.#unimplemented('RemovePodSandbox'); }
  createContainer() { return this.#unimplemented('CreateContainer'); }
  startContainer() { return this.#unimplemented('StartContainer'); }
  stopContainer() { return this.#unimplemented('StopContainer'); }
  removeContainer() { return this.#unimplemented('RemoveContainer'); }
  execSync() { return this.#unimplemented('ExecSync'); }
  listContainerStats() { return this.#unimplemented('ListContainerStats'); }
  listPodSandboxStats() { return this.#unimplemented('ListPodSandboxStats'); }
}
