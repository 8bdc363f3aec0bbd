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
 * - Unchanged text is not parsed again, and unchanged files hand out the very same pod objects,
 *   which the merger recognises as unchanged without diffing.
 */
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { ConfigError } from './config-errors.js';
import { podsFromManifest } from './manifest-pods.js';

interface FileEntry {
  /** Last text read; undefined when the last read failed. */
  text: string | undefined;
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
}

function podKey(p: V1Pod): string {
  return `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;
}

export class ManifestFileSet {
  readonly #dir: string;
  readonly #nodeName: string;
  readonly #files = new Map<string, FileEntry>();
  /** Files accepted in the previous build: they own their names against newcomers. */
  #accepted = new Set<string>();
  /** file → message of the error last reported for it (report each distinct problem once). */
  readonly #reported = new Map<string, string>();

  constructor(opts: ManifestFileSetOptions) {
    this.#dir = opts.dir;
    this.#nodeName = opts.nodeName;
  }

  /** The origin string errors and uids use for a file name. */
  origin(name: string): string {
    return path.join(this.#dir, name);
  }

  names(): string[] {
    return [...this.#files.keys()];
  }

  /** Records freshly read text for a file; parses only if the text changed. */
  setText(name: string, text: string): void {
    const e = this.#files.get(name) ?? { text: undefined, good: undefined, error: undefined };
    this.#files.set(name, e);
    if (e.text === text && e.text !== undefined) return;
    e.text = text;
    const r = podsFromManifest(text, { source: 'file', origin: this.origin(name), nodeName: this.#nodeName, allowLists: false });
    if (r.ok) {
      e.good = r.pods;
      e.error = undefined;
    } else {
      e.error = r.error;
    }
  }

  /** Records that a file exists but could not be read; its last valid pods stay. */
  setReadError(name: string, err: ConfigError): void {
    const e = this.#files.get(name) ?? { text: undefined, good: undefined, error: undefined };
    e.text = undefined;
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
