/**
 * The pod's own cgroup, on the pod worker's thread (the kubelet's podContainerManagerImpl,
 * pod_container_manager_linux.go):
 *   - `parentOf`: the driver's spelling of `<qos parent>/pod<uid>`, given to RunPodSandbox as
 *     linux.cgroupParent (the kubelet's GetPodCgroupParent);
 *   - `ensure`: before RunPodSandbox, creates the cgroup with ResourceConfigForPod's limits
 *     when it does not exist yet (EnsureExists; an existing one is left as it is);
 *   - `remove`: after the pod's containers and sandboxes are gone, removes it, retrying a busy
 *     cgroup a bounded number of times (the runtime may still be tearing down its children).
 *
 * The UID becomes a path component only after checkPodUID (cgroup-name.ts); a pod whose UID
 * does not pass gets an error naming metadata.uid and nothing on the host.
 * All I/O is async (the CgroupManager); failures are returned as data, never thrown.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../src/shared/clock/clock.js';
import { CgroupNameError, podCgroupName, qosCgroupNames, type CgroupName, type QOSCgroupNames } from '../../src/shared/cgroups/cgroup-name.js';
import { isCgroupError } from '../../src/shared/cgroups/cgroup-errors.js';
import type { CgroupManager } from '../../src/shared/cgroups/cgroup-manager.js';
import { resourceConfigForPod } from '../../src/shared/cgroups/cgroup-resources.js';
import { podQOSClass, type QOSClass } from '../../src/shared/resources/pod-qos.js';

const QOS_CLASSES: readonly QOSClass[] = ['Guaranteed', 'Burstable', 'BestEffort'];

export interface PodCgroupsOptions {
  manager: CgroupManager;
  /** --cgroup-root as a name. */
  root: CgroupName;
  clock: Clock;
  /** Tries of a busy removal (default 5) and the wait between them (default 200 ms). */
  removeAttempts?: number;
  removeRetryMs?: number;
}

export const POD_CGROUPS_DEFAULTS = Object.freeze({ removeAttempts: 5, removeRetryMs: 200 });

/** `undefined`: done; a string: what failed (the caller turns it into its failure and event). */
export type PodCgroupResult = string | undefined;

export class PodCgroups {
  readonly #manager: CgroupManager;
  readonly #names: QOSCgroupNames;
  readonly #clock: Clock;
  readonly #removeAttempts: number;
  readonly #removeRetryMs: number;

  constructor(opts: PodCgroupsOptions) {
    if (typeof opts?.manager?.create !== 'function') throw new TypeError('PodCgroups: opts.manager must be a CgroupManager');
    if (typeof opts.clock?.sleep !== 'function') throw new TypeError('PodCgroups: opts.clock must be a Clock');
    this.#manager = opts.manager;
    this.#names = qosCgroupNames(opts.root);
    this.#clock = opts.clock;
    this.#removeAttempts = opts.removeAttempts ?? POD_CGROUPS_DEFAULTS.removeAttempts;
    this.#removeRetryMs = opts.removeRetryMs ?? POD_CGROUPS_DEFAULTS.removeRetryMs;
    if (!Number.isInteger(this.#removeAttempts) || this.#removeAttempts < 1) throw new TypeError('PodCgroups: opts.removeAttempts must be an integer >= 1');
    if (!(this.#removeRetryMs >= 0)) throw new TypeError('PodCgroups: opts.removeRetryMs must be >= 0');
  }

  /** The pod cgroup's name, or an error message naming metadata.uid. */
  nameOf(pod: V1Pod): CgroupName | string {
    try {
      return podCgroupName(this.#names, podQOSClass(pod), pod.metadata?.uid ?? '');
    } catch (err) {
      if (err instanceof CgroupNameError) return err.message;
      throw err;
    }
  }

  /** linux.cgroupParent for the pod's sandbox; undefined when the UID cannot name a cgroup. */
  parentOf(pod: V1Pod): string | undefined {
    const name = this.nameOf(pod);
    return typeof name === 'string' ? undefined : this.#manager.name(name);
  }

  async ensure(pod: V1Pod): Promise<PodCgroupResult> {
    const name = this.nameOf(pod);
    if (typeof name === 'string') return name;
    try {
      if (await this.#manager.exists(name)) return undefined;
      await this.#manager.create(name, resourceConfigForPod(pod));
      return undefined;
    } catch (err) {
      return isCgroupError(err) ? err.message : String(err);
    }
  }

  /**
   * Removes the pod cgroup under every QoS parent (an orphan's pod object may carry no spec, so
   * its QoS class is not known); gone already is success. A busy one is retried
   * `removeAttempts` times, `removeRetryMs` apart.
   */
  async remove(pod: V1Pod, signal?: AbortSignal): Promise<PodCgroupResult> {
    const uid = pod.metadata?.uid ?? '';
    // A UID that cannot name a cgroup never had one.
    if (typeof this.nameOf(pod) === 'string') return undefined;
    for (const qos of QOS_CLASSES) {
      const err = await this.#destroy(podCgroupName(this.#names, qos, uid), signal);
      if (err !== undefined) return err;
    }
    return undefined;
  }

  async #destroy(name: CgroupName, signal: AbortSignal | undefined): Promise<PodCgroupResult> {
    let last = '';
    for (let attempt = 1; attempt <= this.#removeAttempts; attempt++) {
      try {
        await this.#manager.destroy(name);
        return undefined;
      } catch (err) {
        if (!isCgroupError(err, 'ERR_CGROUP_BUSY')) return isCgroupError(err) ? err.message : String(err);
        last = err.message;
      }
      if (attempt < this.#removeAttempts) await this.#clock.sleep(this.#removeRetryMs, signal);
    }
    return `${last} (after ${this.#removeAttempts} attempts)`;
  }
}
