/**
 * The bench's pod source: static-pod manifest files in the agent's --pod-manifest-path, the
 * way a node operator feeds a kubelet. Each file is written under a dot-name and renamed into
 * place, so the agent (which, like the kubelet's file source, ignores hidden files) never reads
 * a half-written manifest.
 *
 * Every manifest carries an explicit metadata.uid: the kubelet keeps a static pod's UID when
 * the manifest sets one, which lets the bench match runtime sandboxes (label
 * io.kubernetes.pod.uid) to the pods it asked for. The agent names the pod `<name>-<nodeName>`.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

export const BENCH_NAMESPACE = 'bench';
export const BENCH_IMAGE = 'docker.io/local/busybox:1';

export interface BenchPod {
  /** Manifest name (metadata.name); the agent reports `<name>-<nodeName>`. */
  name: string;
  uid: string;
  /** Bench monotonic ms at which the manifest file appeared in the directory. */
  writtenAtMs: number;
  /** Containers in the pod (absent: 1). */
  containers?: number;
}

/**
 * `containers` > 1: a sidecar-heavy pod — `sleep` and `side-1`…`side-N-1`, each its own
 * busybox `sleep` (regular containers: what the runtime and the agent handle per container is
 * the same for a restartable init container once it runs).
 */
export function podManifest(name: string, uid: string, containers = 1): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: BENCH_NAMESPACE, uid, labels: { app: 'shardlet-bench' } },
    spec: {
      // Host network: the sandbox needs no CNI, on containerd as in the raw-CRI ceiling.
      hostNetwork: true,
      restartPolicy: 'Always',
      // A shared PID namespace keeps `sleep` from being PID 1: as PID 1 (the default, pid
      // CONTAINER) it has no SIGTERM handler, the kernel drops SIGTERM, and every pod would sit
      // out its whole grace period — the mass-delete rate would be this constant, not the agent's.
      // With it, SIGTERM ends `sleep` at once (on containerd as on the sim-runtime).
      shareProcessNamespace: true,
      // 2 s (the kubelet's minimum) bounds a container that does not exit on SIGTERM.
      terminationGracePeriodSeconds: 2,
      containers: Array.from({ length: containers }, (_, i) => ({ name: i === 0 ? 'sleep' : `side-${i}`, image: BENCH_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '100000'] })),
    },
  };
}

export class ManifestDir {
  readonly dir: string;
  readonly #now: () => number;
  readonly #build: (name: string, uid: string) => object;
  readonly #live = new Map<string, BenchPod>();
  #seq = 0;

  readonly #containers: number;

  /**
   * `now` is the bench's monotonic clock (ms); `build` makes each manifest (default: podManifest
   * with `containers` per pod); `containers` is what the audit expects running per pod.
   */
  constructor(dir: string, now: () => number, build?: (name: string, uid: string) => object, containers = 1) {
    this.dir = dir;
    this.#now = now;
    this.#containers = containers;
    this.#build = build ?? ((name, uid) => podManifest(name, uid, containers));
  }

  /** Pods whose manifest is currently in the directory, oldest first. */
  live(): BenchPod[] {
    return [...this.#live.values()];
  }

  /** Writes `count` new manifests, in parallel, and returns them. */
  async create(count: number): Promise<BenchPod[]> {
    const pods: BenchPod[] = [];
    const writes: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const name = `bench-${String(++this.#seq).padStart(5, '0')}`;
      const uid = randomUUID();
      const file = path.join(this.dir, `${name}.json`);
      const tmp = path.join(this.dir, `.${name}.json.tmp`);
      const pod: BenchPod = { name, uid, writtenAtMs: Number.NaN, ...(this.#containers > 1 ? { containers: this.#containers } : {}) };
      pods.push(pod);
      this.#live.set(name, pod);
      writes.push(
        fs.writeFile(tmp, JSON.stringify(this.#build(name, uid))).then(async () => {
          await fs.rename(tmp, file);
          pod.writtenAtMs = this.#now();
        }),
      );
    }
    await Promise.all(writes);
    return pods;
  }

  /** Removes the given pods' manifests; returns them (with no change to their fields). */
  async delete(pods: readonly BenchPod[]): Promise<BenchPod[]> {
    await Promise.all(pods.map((p) => fs.rm(path.join(this.dir, `${p.name}.json`), { force: true })));
    for (const p of pods) this.#live.delete(p.name);
    return [...pods];
  }

  async deleteAll(): Promise<BenchPod[]> {
    return this.delete(this.live());
  }
}
