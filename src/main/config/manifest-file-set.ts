/**
 * The file source's memory of its directory: per file, the last text read, the pods it yields
 * and the last *valid* pods, plus the rule for duplicate pod names across files. Pure (no I/O,
 * no timers), so the rules are tested without a file system.
 *
 * Rules (see also source-file.ts):
 * - A file is one unit: all its documents are valid and applied, or none is.
 * - A file that becomes invalid (parse, validation or read error) keeps contributing the pods
 *   of its last valid version until it is removed; a file that was never valid contributes
 *   nothing. The kubelet drops such a file's pod at the next full resync; we keep it on purpose:
 *   a typo in an edited manifest must not kill the pod it used to describe.
 * - Duplicate namespace/name across files: the first definition wins and the later file is
 *   rejected as a whole (ERR_MANIFEST_DUPLICATE naming both files). "First" means the file that
 *   already owns the name (was accepted in the previous build), then sorted file-name order, so
 *   adding a conflicting file never disturbs a running pod.
 * - Unchanged text (same digest) is not decoded again, and unchanged files hand out the very
 *   same pod objects, which the merger recognises as unchanged without diffing.
 * - A file that had pods and now reads as empty (no documents) is most likely being rewritten in
 *   place (truncate, then write): its pods stay until a read at least `emptyGraceMs` after the
 *   first empty one still finds it empty; only then does it contribute no pods. (The kubelet gets
 *   the same effect from treating an empty file as a parse error until its next full listing.)
 *   A file that never had pods and is empty simply has none.
 */
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { ConfigError } from '../../shared/manifest/config-errors.js';
import type { ManifestResult } from '../../shared/manifest/manifest-pods.js';

interface FileEntry {
  /** Digest of the last text decoded; undefined when the last read failed. */
  digest: string | undefined;
  /** Monotonic ms of the first of consecutive empty reads while the file still had pods. */
  emptySince?: number | undefined;
  /** Pods of the last valid version (undefined: never valid). */
  good: V1Pod[] | undefined;
  /** The current problem with the file, if any (parse/validation/read). */
  error: ConfigError | undefined;
}

export interface FileSetBuild {
  pods: V1Pod[];
  /** Errors that are new since the previous build (each reported once per distinct message). */
  newErrors: ConfigError[];
}

export interface ManifestFileSetOptions {
  dir: string;
  nodeName: string;
  /** How long an empty read keeps a file's pods (see the rules above). */
  emptyGraceMs: number;
}

/** What {@link ManifestFileSet.setResult} made of an empty read. */
export type EmptyRead =
  /** Not empty. */
  | { kind: 'none' }
  /** Empty, pods kept; read the file again in `recheckInMs`. */
  | { kind: 'held'; recheckInMs: number }
  /** Empty, and the file contributes no pods (never had any, or empty for the whole grace). */
  | { kind: 'empty' };

function podKey(p: V1Pod): string {
  return `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;
}

export class ManifestFileSet {
  readonly #dir: string;
  readonly #nodeName: string;
  readonly #emptyGraceMs: number;
  readonly #files = new Map<string, FileEntry>();
  /** Files accepted in the previous build: they own their names against newcomers. */
  #accepted = new Set<string>();
  /** file → message of the error last reported for it (report each distinct problem once). */
  readonly #reported = new Map<string, string>();

  constructor(opts: ManifestFileSetOptions) {
    this.#dir = opts.dir;
    this.#nodeName = opts.nodeName;
    this.#emptyGraceMs = opts.emptyGraceMs;
  }

  /** The decode context of a file (its origin names it in errors and enters its pods' uids). */
  context(name: string): { source: 'file'; origin: string; nodeName: string; allowLists: false } {
    return { source: 'file', origin: this.origin(name), nodeName: this.#nodeName, allowLists: false };
  }

  /** The origin string errors and uids use for a file name. */
  origin(name: string): string {
    return path.join(this.#dir, name);
  }

  names(): string[] {
    return [...this.#files.keys()];
  }

  /**
   * The digest of the text the file's pods were decoded from, when reading that text again would
   * change nothing: undefined after a read error and while an empty read awaits confirmation.
   */
  settledDigest(name: string): string | undefined {
    const e = this.#files.get(name);
    return e === undefined || e.emptySince !== undefined ? undefined : e.digest;
  }

  /** Records the decode result of freshly read text (digest `digest`) at monotonic `nowMs`. */
  setResult(name: string, digest: string, r: ManifestResult, nowMs: number): EmptyRead {
    const e = this.#files.get(name) ?? { digest: undefined, good: undefined, error: undefined };
    this.#files.set(name, e);
    e.digest = digest;
    if (!r.ok) {
      e.error = r.error;
      e.emptySince = undefined;
      return { kind: 'none' };
    }
    e.error = undefined;
    if (r.pods.length > 0) {
      e.good = r.pods;
      e.emptySince = undefined;
      return { kind: 'none' };
    }
    if (e.good !== undefined && e.good.length > 0) {
      e.emptySince ??= nowMs;
      const left = e.emptySince + this.#emptyGraceMs - nowMs;
      if (left > 0) return { kind: 'held', recheckInMs: left };
    }
    e.good = [];
    e.emptySince = undefined;
    return { kind: 'empty' };
  }

  /** Records that a file exists but could not be read; its last valid pods stay. */
  setReadError(name: string, err: ConfigError): void {
    const e = this.#files.get(name) ?? { digest: undefined, good: undefined, error: undefined };
    e.digest = undefined;
    e.error = err;
    this.#files.set(name, e);
  }

  /** The file is gone: its pods go with it. */
  remove(name: string): void {
    this.#files.delete(name);
    this.#reported.delete(name);
  }

  /** The complete pod set, duplicates resolved; also the errors not reported before. */
  build(): FileSetBuild {
    const sorted = [...this.#files.keys()].sort();
    const order = [...sorted.filter((n) => this.#accepted.has(n)), ...sorted.filter((n) => !this.#accepted.has(n))];
    const owner = new Map<string, string>();
    const accepted = new Set<string>();
    const pods: V1Pod[] = [];
    const current = new Map<string, ConfigError>();
    for (const name of order) {
      const e = this.#files.get(name);
      if (e === undefined) continue;
      if (e.error !== undefined) current.set(name, e.error);
      const filePods = e.good ?? [];
      const clash = filePods.map((p) => [p, owner.get(podKey(p))] as const).find(([, o]) => o !== undefined);
      if (clash !== undefined) {
        const [p, other] = clash;
        const msg = `metadata.name: Duplicate value: "${p.metadata?.name ?? ''}": pod ${podKey(p)} is already defined by ${this.origin(other ?? '')}, ignoring this file`;
        current.set(name, new ConfigError('ERR_MANIFEST_DUPLICATE', this.origin(name), msg));
        continue;
      }
      if (filePods.length === 0 && e.good === undefined) continue;
      accepted.add(name);
      for (const p of filePods) {
        owner.set(podKey(p), name);
        pods.push(p);
      }
    }
    this.#accepted = accepted;
    const newErrors: ConfigError[] = [];
    for (const [name, err] of current) {
      if (this.#reported.get(name) === err.message) continue;
      this.#reported.set(name, err.message);
      newErrors.push(err);
    }
    for (const name of [...this.#reported.keys()]) if (!current.has(name)) this.#reported.delete(name);
    return { pods, newErrors };
  }
}
