/**
 * What the container GC removes, decided from one listing: the kubelet's evictContainers and
 * evictSandboxes (pkg/kubelet/kuberuntime/kuberuntime_gc.go), as pure functions so the
 * decision is tested apart from the CRI calls that carry it out (container-gc.ts).
 *
 * Containers (planContainerRemovals), in the kubelet's order:
 *   1. evictable = not RUNNING and created at least `minAgeMs` ago; grouped into evict units
 *      (pod UID, container name);
 *   2. once every source has delivered, every evictable container of a pod whose content may be
 *      removed (the pod is gone) is removed, and its unit dropped;
 *   3. `maxPerPodContainer` ≥ 0: each unit keeps its newest `maxPerPodContainer` (what
 *      `kubectl logs --previous` reads), the older ones are removed;
 *   4. `maxContainers` ≥ 0 and more evictable containers remain than that: every unit is cut to
 *      max(1, maxContainers / units); if still too many, the oldest across all units go until
 *      `maxContainers` remain.
 * Within each step removals come oldest first ("newest" = latest CreatedAt, as the kubelet's
 * byCreated). The result is the removal order; the runner may stop part-way (its per-pass cap)
 * and the next pass plans again from a fresh listing, so nothing here needs to be remembered.
 *
 * Sandboxes (planSandboxRemovals): a sandbox is active when READY or while any container still
 * names it (those not removed by this pass). Per pod: a pod that is gone loses every inactive
 * sandbox; a pod that exists keeps its newest sandbox (active or not) and loses the older
 * inactive ones. The kubelet's evictSandboxes ignores the sources: its podWorkers answer
 * "removable" for an unknown pod only once the pods are synced; here `removable` is undefined
 * until every source has delivered, which means the same.
 *
 * Beyond the kubelet: objects without the kubelet's pod UID (a container without the
 * io.kubernetes.pod.uid label, a sandbox without metadata.uid) are someone else's and are never
 * planned (the kubelet would file them under pod UID "" and remove them as a gone pod's).
 */
import type { Container, PodSandbox } from '../../shared/cri/cri-types.js';
import { KubernetesPodUIDLabel } from '../../shared/kubetypes/kubelet-labels.js';

export interface ContainerGcPolicy {
  /** kubecontainer.GCPolicy.MinAge (ms). */
  minAgeMs: number;
  /** GCPolicy.MaxPerPodContainer; < 0 = no limit. */
  maxPerPodContainer: number;
  /** GCPolicy.MaxContainers; < 0 = no limit. */
  maxContainers: number;
}

export interface GcContainerInfo {
  id: string;
  name: string;
  podUID: string;
  /** CreatedAt in ns since the epoch (exact; ns do not fit a double). */
  createdNs: bigint;
  /** CONTAINER_UNKNOWN: stopped before it is removed (it may still run). */
  unknown: boolean;
  /** The listed container, for its labels and annotations (log path). */
  container: Container;
}

export interface GcSandboxInfo {
  id: string;
  podUID: string;
  createdNs: bigint;
  active: boolean;
}

/** Answers whether the pod's runtime objects may all go (gone pod); undefined until the sources are ready. */
export type PodRemovable = ((podUID: string) => boolean) | undefined;

function ns(v: string): bigint {
  try {
    return BigInt(v);
  } catch {
    return 0n;
  }
}

/** Newest first (the kubelet's byCreated / sandboxByCreated). */
function newestFirst(a: { createdNs: bigint }, b: { createdNs: bigint }): number {
  return a.createdNs > b.createdNs ? -1 : a.createdNs < b.createdNs ? 1 : 0;
}

/** The kubelet's removeOldestN: appends the oldest `n` of `list` to `out` (oldest first) and returns the rest. */
function removeOldestN(list: GcContainerInfo[], n: number, out: GcContainerInfo[]): GcContainerInfo[] {
  const keep = list.length - n;
  if (keep > 0) list.sort(newestFirst);
  for (let i = list.length - 1; i >= Math.max(keep, 0); i--) out.push(list[i]!);
  return list.slice(0, Math.max(keep, 0));
}

/** The dead containers to remove, in removal order (see the module comment). */
export function planContainerRemovals(containers: readonly Container[], policy: ContainerGcPolicy, nowMs: number, removable: PodRemovable): GcContainerInfo[] {
  const newestGcNs = BigInt(Math.floor(nowMs)) * 1_000_000n - BigInt(Math.floor(policy.minAgeMs)) * 1_000_000n;
  const units = new Map<string, GcContainerInfo[]>();
  for (const c of containers) {
    if (c.state === 'CONTAINER_RUNNING') continue;
    const podUID = c.labels?.[KubernetesPodUIDLabel];
    if (!podUID) continue;
    const createdNs = ns(c.createdAt);
    if (createdNs > newestGcNs) continue;
    const name = c.metadata?.name ?? '';
    const info: GcContainerInfo = { id: c.id, name, podUID, createdNs, unknown: c.state === 'CONTAINER_UNKNOWN', container: c };
    // JSON keeps the pair unambiguous whatever the strings hold.
    const key = JSON.stringify([podUID, name]);
    const unit = units.get(key);
    if (unit) unit.push(info);
    else units.set(key, [info]);
  }
  const out: GcContainerInfo[] = [];
  if (removable) {
    for (const [key, unit] of units) {
      if (!removable(unit[0]!.podUID)) continue;
      removeOldestN(unit, unit.length, out);
      units.delete(key);
    }
  }
  const enforcePerUnit = (max: number): void => {
    for (const [key, unit] of units) if (unit.length > max) units.set(key, removeOldestN(unit, unit.length - max, out));
  };
  if (policy.maxPerPodContainer >= 0) enforcePerUnit(policy.maxPerPodContainer);
  const count = (): number => {
    let n = 0;
    for (const u of units.values()) n += u.length;
    return n;
  };
  if (policy.maxContainers >= 0 && count() > policy.maxContainers) {
    // Leave an equal number of containers per evict unit (min: 1).
    enforcePerUnit(Math.max(1, Math.floor(policy.maxContainers / units.size)));
    const n = count();
    if (n > policy.maxContainers) {
      const flat = [...units.values()].flat().sort(newestFirst);
      removeOldestN(flat, n - policy.maxContainers, out);
    }
  }
  return out;
}

/**
 * The sandboxes to remove, oldest first within each pod, given the containers that remain
 * (listed, minus those this pass removed).
 */
export function planSandboxRemovals(sandboxes: readonly PodSandbox[], remaining: Iterable<Pick<Container, 'podSandboxId'>>, removable: PodRemovable): GcSandboxInfo[] {
  const withContainers = new Set<string>();
  for (const c of remaining) withContainers.add(c.podSandboxId);
  const byPod = new Map<string, GcSandboxInfo[]>();
  for (const s of sandboxes) {
    const podUID = s.metadata?.uid ?? '';
    if (podUID === '') continue;
    const info: GcSandboxInfo = { id: s.id, podUID, createdNs: ns(s.createdAt), active: s.state === 'SANDBOX_READY' || withContainers.has(s.id) };
    const list = byPod.get(podUID);
    if (list) list.push(info);
    else byPod.set(podUID, [info]);
  }
  const out: GcSandboxInfo[] = [];
  for (const [podUID, list] of byPod) {
    // Gone: every inactive one (the newest dead one too when an active one exists). Else keep the newest.
    const keep = removable?.(podUID) ? 0 : 1;
    list.sort(newestFirst);
    for (let i = list.length - 1; i >= keep; i--) if (!list[i]!.active) out.push(list[i]!);
  }
  return out;
}
