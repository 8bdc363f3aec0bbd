/**
 * What the cluster-mode e2e tests share: an agent process in cluster mode (`--kubeconfig` with
 * the node identity from the control-plane harness), API pods bound to that node, creation
 * through @kubernetes/client-node with bounded concurrency, and a recorder that watches the
 * namespace from the test's side (admin identity) and keeps every status each pod UID was seen
 * with, so tests can assert on sequences (never backwards, never another pod's status) and wait
 * for states as the API shows them.
 *
 * All waits are bounded polling of external state (poll.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { CoreV1Api, KubeConfig, Watch, type V1Pod } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane, type StartControlPlaneOptions } from '../harness/apiserver-harness.js';
import { startContainerd, type ContainerdInstance } from '../harness/containerd-harness.js';
import { pollUntil } from '../harness/poll.js';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { startAgent, type AgentProcess } from './agent-harness.js';

export const TEST_IMAGE = 'docker.io/local/busybox:1';

export interface ClusterFixtureOptions {
  /** Created once the control plane runs. */
  namespace: string;
  controlPlane?: StartControlPlaneOptions;
  /** The runtime beside the control plane: the simulated one (zero profile, TEST_IMAGE; default) or a private containerd. */
  runtime?: 'sim' | 'containerd';
  /** After the control plane and the namespace, before the runtime (RBAC objects, ...). */
  setup?: (cp: ControlPlane) => Promise<void>;
  /** The after hook's last step, once everything is stopped (temp dirs, transcripts). */
  teardown?: () => void;
}

/**
 * One control plane, one runtime and the file's agent and watch recorder, set up by a `before`
 * hook and torn down by an `after` hook that `clusterSimFixture` registers (the same for every
 * cluster-* file): reading `cp`, `sim` or `ctrd` before the hook ran fails loudly. Tests store
 * the agent and recorder they start in `agent` / `rec`, so the after hook stops them.
 */
export interface ClusterFixture {
  readonly cp: ControlPlane;
  /** runtime 'sim' only. */
  readonly sim: SimRuntimeInstance;
  /** runtime 'containerd' only. */
  readonly ctrd: ContainerdInstance;
  /** The runtime's CRI endpoint. */
  readonly endpoint: string;
  agent: AgentProcess | undefined;
  rec: PodWatchRecorder | undefined;
}

export function clusterSimFixture(o: ClusterFixtureOptions): ClusterFixture {
  let cp: ControlPlane | undefined;
  let sim: SimRuntimeInstance | undefined;
  let ctrd: ContainerdInstance | undefined;
  const need = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`cluster fixture: ${what} is not set up (read before the before hook ran, or for the other runtime)`);
    return v;
  };
  const f: ClusterFixture = {
    get cp() {
      return need(cp, 'the control plane');
    },
    get sim() {
      return need(sim, 'the simulated runtime');
    },
    get ctrd() {
      return need(ctrd, 'containerd');
    },
    get endpoint() {
      return need(sim?.endpoint ?? ctrd?.endpoint, 'the runtime');
    },
    agent: undefined,
    rec: undefined,
  };
  before(async () => {
    cp = await startControlPlane(o.controlPlane ?? {});
    await cp.ensureNamespace(o.namespace);
    await o.setup?.(cp);
    if ((o.runtime ?? 'sim') === 'sim') sim = await startSimRuntime({ profile: 'zero', extraArgs: ['--image', TEST_IMAGE] });
    else ctrd = await startContainerd();
  }, { timeout: 30 * 60_000 });
  after(async () => {
    f.rec?.close();
    await f.agent?.kill();
    await sim?.stop();
    await ctrd?.stop();
    await cp?.stop();
    o.teardown?.();
  }, { timeout: 120_000 });
  return f;
}

export interface ClusterAgentOptions {
  cp: ControlPlane;
  nodeName: string;
  endpoint: string;
  /** Keep the same dir across restarts (the agent's state); default a fresh one. */
  rootDir?: string;
  workers?: number;
  extraArgs?: readonly string[];
  /** A manifest directory of the test's (static pods beside the API pods; the test removes it). Default: a fresh empty one. */
  manifestDir?: string;
}

/** An agent in cluster mode: pods come from the API only (its manifest dir stays empty unless the test gives one). */
export async function startClusterAgent(o: ClusterAgentOptions): Promise<AgentProcess> {
  const manifestDir = o.manifestDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-cluster-empty-'));
  const removeDir = (): void => {
    if (o.manifestDir === undefined) fs.rmSync(manifestDir, { recursive: true, force: true });
  };
  let agent: AgentProcess;
  try {
    agent = await startAgent({
      endpoint: o.endpoint,
      manifestDir,
      nodeName: o.nodeName,
      workers: o.workers ?? 2,
      ...(o.rootDir !== undefined ? { rootDir: o.rootDir } : {}),
      extraArgs: ['--kubeconfig', o.cp.nodeKubeconfig(o.nodeName), ...(o.extraArgs ?? [])],
    });
  } catch (e) {
    removeDir();
    throw e;
  }
  // The empty manifest directory goes with the agent (stop or kill; the after hooks kill).
  const { stop, kill } = agent;
  agent.stop = async () => {
    try {
      return await stop.call(agent);
    } finally {
      removeDir();
    }
  };
  agent.kill = async () => {
    try {
      await kill.call(agent);
    } finally {
      removeDir();
    }
  };
  return agent;
}

export function coreApi(kubeconfig: string): { kc: KubeConfig; core: CoreV1Api } {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return { kc, core: kc.makeApiClient(CoreV1Api) };
}

export interface ApiPodOptions {
  command?: string[];
  containerName?: string;
  restartPolicy?: 'Always' | 'Never' | 'OnFailure';
  graceSeconds?: number;
  /** Pod network instead of host network (containerd with CNI). */
  podNetwork?: boolean;
  imagePullPolicy?: 'Never' | 'IfNotPresent';
}

/**
 * A pod bound to `nodeName`. `shareProcessNamespace` keeps `sleep` from being PID 1 (PID 1 has no
 * SIGTERM handler, so it would sit out its whole grace period): SIGTERM ends it at once, on the
 * sim-runtime as on containerd.
 */
export function apiPod(name: string, namespace: string, nodeName: string, o: ApiPodOptions = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: 'shardlet-e2e' } },
    spec: {
      nodeName,
      automountServiceAccountToken: false,
      hostNetwork: o.podNetwork !== true,
      shareProcessNamespace: true,
      restartPolicy: o.restartPolicy ?? 'Always',
      terminationGracePeriodSeconds: o.graceSeconds ?? 5,
      containers: [{ name: o.containerName ?? 'main', image: TEST_IMAGE, imagePullPolicy: o.imagePullPolicy ?? 'IfNotPresent', command: o.command ?? ['sleep', '100000'] }],
    },
  };
}

/** Creates the pods with at most `concurrency` requests in flight; returns them as created (with UIDs). */
export async function createPods(core: CoreV1Api, pods: readonly V1Pod[], concurrency = 16): Promise<V1Pod[]> {
  const out: V1Pod[] = new Array<V1Pod>(pods.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < pods.length; i = next++) {
      const p = pods[i]!;
      out[i] = await core.createNamespacedPod({ namespace: p.metadata!.namespace!, body: p });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, pods.length) }, worker));
  return out;
}

const PHASE_RANK: Record<string, number> = { Pending: 0, Running: 1, Succeeded: 2, Failed: 2 };

export interface SeenStatus {
  type: string;
  phase: string;
  containerNames: string[];
  restartCounts: number[];
}

/**
 * Watches one namespace (admin identity) and records, per UID, the sequence of statuses seen.
 * A watch that ends (apiserver restart, 410, timeout) is resumed after a fresh list, whose items
 * are recorded too, so the sequences have no holes that matter for "never backwards".
 */
export class PodWatchRecorder {
  readonly #kc: KubeConfig;
  readonly #core: CoreV1Api;
  readonly #ns: string;
  /** Current objects by UID (deleted ones removed). */
  readonly pods = new Map<string, V1Pod>();
  readonly history = new Map<string, SeenStatus[]>();
  /** Backwards phase transitions seen: "<name> <uid>: Running → Pending". */
  readonly violations: string[] = [];
  #ctl: AbortController | undefined;
  #closed = false;
  #restarts = 0;

  constructor(kubeconfig: string, namespace: string) {
    const { kc, core } = coreApi(kubeconfig);
    this.#kc = kc;
    this.#core = core;
    this.#ns = namespace;
  }

  get restarts(): number {
    return this.#restarts;
  }

  async start(): Promise<void> {
    const list = await this.#core.listNamespacedPod({ namespace: this.#ns });
    const live = new Set<string>();
    for (const p of list.items) {
      live.add(p.metadata?.uid ?? '');
      this.#record('LIST', p);
    }
    for (const uid of [...this.pods.keys()]) if (!live.has(uid)) this.pods.delete(uid);
    const rv = list.metadata?.resourceVersion ?? '';
    this.#ctl = await new Watch(this.#kc).watch(
      `/api/v1/namespaces/${this.#ns}/pods`,
      { resourceVersion: rv, allowWatchBookmarks: false },
      (type, obj) => {
        const pod = obj as V1Pod;
        if (type === 'DELETED') {
          this.pods.delete(pod.metadata?.uid ?? '');
          return;
        }
        if (type === 'ADDED' || type === 'MODIFIED') this.#record(type, pod);
      },
      () => {
        if (this.#closed) return;
        this.#restarts++;
        void this.#resume();
      },
    );
  }

  async #resume(): Promise<void> {
    // The apiserver may be down: retry the list, bounded by the recorder's life (close()).
    while (!this.#closed) {
      try {
        await this.start();
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  #record(type: string, pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? '';
    this.pods.set(uid, pod);
    const phase = pod.status?.phase ?? 'Pending';
    const seen: SeenStatus = {
      type,
      phase,
      containerNames: (pod.status?.containerStatuses ?? []).map((c) => c.name),
      restartCounts: (pod.status?.containerStatuses ?? []).map((c) => c.restartCount),
    };
    let h = this.history.get(uid);
    if (!h) this.history.set(uid, (h = []));
    const prev = h[h.length - 1];
    if (prev && (PHASE_RANK[phase] ?? 0) < (PHASE_RANK[prev.phase] ?? 0)) this.violations.push(`${pod.metadata?.name} ${uid}: ${prev.phase} → ${phase}`);
    h.push(seen);
  }

  /** Pods of this namespace the API currently shows Running with every container running. */
  running(filter: (p: V1Pod) => boolean = () => true): V1Pod[] {
    return [...this.pods.values()].filter((p) => filter(p) && isApiRunning(p));
  }

  async waitFor<T>(probe: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
    return pollUntil(probe, { what, timeoutMs, intervalMs: 100 });
  }

  close(): void {
    this.#closed = true;
    this.#ctl?.abort();
  }
}

export function isApiRunning(p: V1Pod): boolean {
  const cs = p.status?.containerStatuses ?? [];
  return p.status?.phase === 'Running' && cs.length > 0 && cs.every((c) => c.state?.running !== undefined && c.state.running !== null);
}

/** Sums `apiserver_request_total` samples matching every given label (e.g. verb, resource, subresource). */
export function sumApiserverRequests(metricsText: string, labels: Readonly<Record<string, string>>): number {
  let total = 0;
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const close = line.lastIndexOf('}');
    const body = line.slice('apiserver_request_total{'.length, close);
    const got: Record<string, string> = {};
    for (const m of body.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) got[m[1]!] = m[2]!;
    if (Object.entries(labels).every(([k, v]) => (got[k] ?? '') === v)) total += Number(line.slice(close + 1).trim());
  }
  return total;
}
