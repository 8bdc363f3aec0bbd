/**
 * The simulated runtime's object store: sandboxes and containers with the indexes that keep
 * every lookup and list O(result), not O(everything): by id (exact, then unique prefix like
 * containerd's truncindex), by sandbox, by label (key=value), and the two name registrars.
 *
 * Ownership: only the runtime core (`sim-runtime.ts`) mutates records, and it does so through
 * the methods here so the indexes stay true. Invariants:
 *  - a record is in `#sandboxes`/`#containers` iff its name is reserved in the matching name
 *    index (containerd releases a name only on Remove);
 *  - `#bySandbox.get(s)` holds exactly the ids of containers whose `sandboxId` is s;
 *  - label indexes hold exactly the records carrying that label (labels never change).
 * Of a record's list-visible fields only `state` ever changes after creation (the wire cache in
 * sim-wire-cache.ts relies on this).
 */
import type { ContainerConfig, ContainerState, PodSandboxConfig, PodSandboxState, StringMap } from '../shared/cri/cri-types.js';
import type { CriLogWriter } from './sim-logs.js';
import type { SimProcess } from './sim-process.js';
import type { SimSecurity } from './sim-security.js';

export interface SandboxRecord {
  id: string;
  /** name_namespace_uid_attempt (containerd's makeSandboxName). */
  name: string;
  config: PodSandboxConfig;
  runtimeHandler: string;
  state: PodSandboxState;
  createdAtNs: string;
  /** Pod IP; '' for host-network sandboxes. Kept after stop (containerd keeps it in metadata) but reported only while READY. */
  ip: string;
  hostNetwork: boolean;
}

export interface ContainerRecord {
  id: string;
  sandboxId: string;
  /** container_sandbox_namespace_uid_attempt (containerd's makeContainerName). */
  name: string;
  config: ContainerConfig;
  /** Annotation source for the sim.shardlet.io keys: the sandbox's annotations (pod annotations). */
  sandboxAnnotations: StringMap;
  /** logDirectory/logPath, or '' when the container has no log path. */
  logPath: string;
  imageId: string;
  /** The image's first repo tag (what containerd reports as the status image). */
  imageName: string;
  /** The argv the process runs (command/args merged with the image defaults). */
  argv: string[];
  /** The process environment (config envs over the image's PATH/HOSTNAME/HOME). */
  env: Record<string, string>;
  /** What the process runs as (sim-security.ts); absent in state saved before it existed (root). */
  security?: SimSecurity;
  state: ContainerState;
  createdAtNs: string;
  startedAtNs: string;
  finishedAtNs: string;
  /** Wall-clock ms the process started (0 when never started): resumes timelines after a restart. */
  startedAtMs: number;
  exitCode: number;
  reason: string;
  message: string;
  process: SimProcess | undefined;
  log: CriLogWriter | undefined;
  /** Usage a test or the bench set (SimulatedRuntime.setContainerUsage); over the sim.shardlet.io annotations. */
  usage?: SimContainerUsage;
}

/** Simulated resource usage of one container (bytes). */
export interface SimContainerUsage {
  /** Memory working set reported in ContainerStats / PodSandboxStats. */
  workingSetBytes?: number;
  /** Writable layer reported in ContainerStats.writableLayer and ImageFsInfo's containerFilesystems. */
  writableLayerBytes?: number;
}

export type LookupResult<T> = { ok: true; value: T } | { ok: false; why: 'empty' | 'not-found' | 'ambiguous' };

export function sandboxNameOf(m: { name: string; namespace: string; uid: string; attempt: number }): string {
  return [m.name, m.namespace, m.uid, String(m.attempt)].join('_');
}

export function containerNameOf(c: { name: string; attempt: number }, s: { name: string; namespace: string; uid: string } | null | undefined): string {
  return [c.name, s?.name ?? '', s?.namespace ?? '', s?.uid ?? '', String(c.attempt)].join('_');
}

class LabelIndex {
  readonly #sets = new Map<string, Set<string>>();

  add(id: string, labels: StringMap | undefined): void {
    for (const [k, v] of Object.entries(labels ?? {})) {
      const key = `${k}\u0000${v}`;
      let set = this.#sets.get(key);
      if (!set) this.#sets.set(key, (set = new Set()));
      set.add(id);
    }
  }

  remove(id: string, labels: StringMap | undefined): void {
    for (const [k, v] of Object.entries(labels ?? {})) {
      const key = `${k}\u0000${v}`;
      const set = this.#sets.get(key);
      set?.delete(id);
      if (set?.size === 0) this.#sets.delete(key);
    }
  }

  /** The smallest candidate set for a selector (AND of key=value), or undefined for no selector. */
  candidates(selector: StringMap | undefined): ReadonlySet<string> | undefined {
    let best: ReadonlySet<string> | undefined;
    for (const [k, v] of Object.entries(selector ?? {})) {
      const set = this.#sets.get(`${k}\u0000${v}`);
      if (!set) return new Set();
      if (!best || set.size < best.size) best = set;
    }
    return best;
  }
}

export function matchesLabels(labels: StringMap | undefined, selector: StringMap | undefined): boolean {
  for (const [k, v] of Object.entries(selector ?? {})) if (labels?.[k] !== v) return false;
  return true;
}

function lookup<T>(map: ReadonlyMap<string, T>, idOrPrefix: string): LookupResult<T> {
  if (idOrPrefix === '') return { ok: false, why: 'empty' };
  const exact = map.get(idOrPrefix);
  if (exact) return { ok: true, value: exact };
  // Prefix match (containerd truncindex). Linear, but only on the miss path.
  let found: T | undefined;
  for (const [id, v] of map) {
    if (!id.startsWith(idOrPrefix)) continue;
    if (found !== undefined) return { ok: false, why: 'ambiguous' };
    found = v;
  }
  return found === undefined ? { ok: false, why: 'not-found' } : { ok: true, value: found };
}

export class SimStore {
  readonly #sandboxes = new Map<string, SandboxRecord>();
  readonly #containers = new Map<string, ContainerRecord>();
  /** name → id, one registrar per kind (containerd: sandboxNameIndex, containerNameIndex). */
  readonly #sandboxNames = new Map<string, string>();
  readonly #containerNames = new Map<string, string>();
  readonly #bySandbox = new Map<string, Set<string>>();
  readonly #sandboxLabels = new LabelIndex();
  readonly #containerLabels = new LabelIndex();

  get sandboxCount(): number {
    return this.#sandboxes.size;
  }

  get containerCount(): number {
    return this.#containers.size;
  }

  /** The id holding `name`, if reserved. */
  sandboxNameOwner(name: string): string | undefined {
    return this.#sandboxNames.get(name);
  }

  containerNameOwner(name: string): string | undefined {
    return this.#containerNames.get(name);
  }

  addSandbox(rec: SandboxRecord): void {
    this.#sandboxes.set(rec.id, rec);
    this.#sandboxNames.set(rec.name, rec.id);
    this.#bySandbox.set(rec.id, this.#bySandbox.get(rec.id) ?? new Set());
    this.#sandboxLabels.add(rec.id, rec.config.labels);
  }

  removeSandbox(rec: SandboxRecord): void {
    this.#sandboxes.delete(rec.id);
    if (this.#sandboxNames.get(rec.name) === rec.id) this.#sandboxNames.delete(rec.name);
    if (this.#bySandbox.get(rec.id)?.size === 0) this.#bySandbox.delete(rec.id);
    this.#sandboxLabels.remove(rec.id, rec.config.labels);
  }

  addContainer(rec: ContainerRecord): void {
    this.#containers.set(rec.id, rec);
    this.#containerNames.set(rec.name, rec.id);
    let set = this.#bySandbox.get(rec.sandboxId);
    if (!set) this.#bySandbox.set(rec.sandboxId, (set = new Set()));
    set.add(rec.id);
    this.#containerLabels.add(rec.id, rec.config.labels);
  }

  removeContainer(rec: ContainerRecord): void {
    this.#containers.delete(rec.id);
    if (this.#containerNames.get(rec.name) === rec.id) this.#containerNames.delete(rec.name);
    const set = this.#bySandbox.get(rec.sandboxId);
    set?.delete(rec.id);
    if (set?.size === 0 && !this.#sandboxes.has(rec.sandboxId)) this.#bySandbox.delete(rec.sandboxId);
    this.#containerLabels.remove(rec.id, rec.config.labels);
  }

  findSandbox(idOrPrefix: string): LookupResult<SandboxRecord> {
    return lookup(this.#sandboxes, idOrPrefix);
  }

  findContainer(idOrPrefix: string): LookupResult<ContainerRecord> {
    return lookup(this.#containers, idOrPrefix);
  }

  /** Containers of a sandbox (by full id), in creation order. */
  containersOf(sandboxId: string): ContainerRecord[] {
    const out: ContainerRecord[] = [];
    for (const id of this.#bySandbox.get(sandboxId) ?? []) {
      const c = this.#containers.get(id);
      if (c) out.push(c);
    }
    return out;
  }

  allSandboxes(): IterableIterator<SandboxRecord> {
    return this.#sandboxes.values();
  }

  allContainers(): IterableIterator<ContainerRecord> {
    return this.#containers.values();
  }

  /** Sandboxes matching a filter; ids resolved by prefix first as containerd does. */
  listSandboxes(filter: { id?: string; state?: PodSandboxState; labelSelector?: StringMap }): SandboxRecord[] {
    let candidates: Iterable<SandboxRecord>;
    if (filter.id) {
      const r = this.findSandbox(filter.id);
      candidates = r.ok ? [r.value] : [];
    } else {
      const ids = this.#sandboxLabels.candidates(filter.labelSelector);
      candidates = ids ? [...ids].map((id) => this.#sandboxes.get(id)).filter((s) => s !== undefined) : this.#sandboxes.values();
    }
    const out: SandboxRecord[] = [];
    for (const s of candidates) {
      if (filter.state !== undefined && s.state !== filter.state) continue;
      if (!matchesLabels(s.config.labels, filter.labelSelector)) continue;
      out.push(s);
    }
    return out;
  }

  listContainers(filter: { id?: string; state?: ContainerState; podSandboxId?: string; labelSelector?: StringMap }): ContainerRecord[] {
    let candidates: Iterable<ContainerRecord>;
    let sandboxId: string | undefined;
    if (filter.podSandboxId) {
      const sb = this.findSandbox(filter.podSandboxId);
      sandboxId = sb.ok ? sb.value.id : filter.podSandboxId;
    }
    if (filter.id) {
      const r = this.findContainer(filter.id);
      candidates = r.ok ? [r.value] : [];
    } else if (sandboxId !== undefined) {
      candidates = this.containersOf(sandboxId);
    } else {
      const ids = this.#containerLabels.candidates(filter.labelSelector);
      candidates = ids ? [...ids].map((id) => this.#containers.get(id)).filter((c) => c !== undefined) : this.#containers.values();
    }
    const out: ContainerRecord[] = [];
    for (const c of candidates) {
      if (sandboxId !== undefined && c.sandboxId !== sandboxId) continue;
      if (filter.state !== undefined && c.state !== filter.state) continue;
      if (!matchesLabels(c.config.labels, filter.labelSelector)) continue;
      out.push(c);
    }
    return out;
  }
}
