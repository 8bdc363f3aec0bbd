/**
 * The simulated image store: which images are present, by normalized reference and by id.
 *
 * References are normalized the way containerd's CRI plugin does (docker reference rules):
 * `busybox` → `docker.io/library/busybox:latest`, `foo/bar` → `docker.io/foo/bar:latest`,
 * `registry.local:5000/x` keeps its domain; a reference without tag or digest gets `:latest`.
 * An image id is `sha256:` + the SHA-256 hex of the normalized reference (stable across
 * restarts, 64 hex digits like a real config digest). Lookups accept a reference, the full id,
 * or the id's hex.
 *
 * Which images behave like busybox (their default command is `sh`) is decided here too:
 * repositories named `busybox*` or `alpine*`; every other image's default process is opaque.
 */
import { createHash } from 'node:crypto';

export interface SimImage {
  id: string;
  /** Normalized `domain/path:tag` references (containerd's repoTags). */
  repoTags: string[];
  /** `domain/path@sha256:...` for images that came from a pull; empty for preloaded ones. */
  repoDigests: string[];
  size: number;
}

export interface ImageRecordJson {
  ref: string;
  pulled: boolean;
}

export function normalizeImageRef(ref: string): string {
  let name = ref.trim();
  let domain = 'docker.io';
  const slash = name.indexOf('/');
  if (slash !== -1) {
    const first = name.slice(0, slash);
    if (first.includes('.') || first.includes(':') || first === 'localhost') {
      domain = first;
      name = name.slice(slash + 1);
    }
  }
  if (domain === 'docker.io' && !name.includes('/')) name = `library/${name}`;
  const lastComponent = name.slice(name.lastIndexOf('/') + 1);
  if (!name.includes('@') && !lastComponent.includes(':')) name += ':latest';
  return `${domain}/${name}`;
}

export function imageIdOf(normalizedRef: string): string {
  return 'sha256:' + createHash('sha256').update(normalizedRef).digest('hex');
}

/** Busybox-like images run `sh` when the container has no command (their image Cmd). */
export function isBusyboxLike(imageRef: string): boolean {
  const n = normalizeImageRef(imageRef);
  const repo = n.slice(n.lastIndexOf('/') + 1);
  return repo.startsWith('busybox') || repo.startsWith('alpine');
}

export class SimImageStore {
  /** normalized ref → image; an image appears once per ref (one tag per image here). */
  readonly #byRef = new Map<string, SimImage>();
  readonly #byId = new Map<string, SimImage>();
  readonly #pulled = new Set<string>();

  /** Makes `ref` present. Returns the image. Idempotent. */
  add(ref: string, pulled: boolean): SimImage {
    const norm = normalizeImageRef(ref);
    const existing = this.#byRef.get(norm);
    if (existing) return existing;
    const id = imageIdOf(norm);
    const hex = id.slice('sha256:'.length);
    const repo = norm.replace(/:[^:/]+$/, '');
    const image: SimImage = {
      id,
      repoTags: [norm],
      repoDigests: pulled ? [`${repo}@sha256:${createHash('sha256').update(id).digest('hex')}`] : [],
      // Plausible and stable: 1–50 MB derived from the id.
      size: 1_000_000 + (Number.parseInt(hex.slice(0, 8), 16) % 49_000_000),
    };
    this.#byRef.set(norm, image);
    this.#byId.set(id, image);
    if (pulled) this.#pulled.add(norm);
    return image;
  }

  /** Finds an image by reference, full id or id hex; undefined when absent. */
  resolve(refOrId: string): SimImage | undefined {
    if (refOrId === '') return undefined;
    const byId = this.#byId.get(refOrId) ?? this.#byId.get(`sha256:${refOrId}`);
    if (byId) return byId;
    return this.#byRef.get(normalizeImageRef(refOrId));
  }

  /** Removes the image (all its tags). Returns whether it was present. */
  remove(refOrId: string): boolean {
    const image = this.resolve(refOrId);
    if (!image) return false;
    this.#byId.delete(image.id);
    for (const tag of image.repoTags) {
      this.#byRef.delete(tag);
      this.#pulled.delete(tag);
    }
    return true;
  }

  list(): SimImage[] {
    return [...this.#byId.values()];
  }

  toJson(): ImageRecordJson[] {
    return [...this.#byRef.keys()].map((ref) => ({ ref, pulled: this.#pulled.has(ref) }));
  }
}
