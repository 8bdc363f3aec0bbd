/**
 * A per-thread view of which images the runtime holds, so starting a container does not cost an
 * ImageStatus call each time (issue 15: ~1,000 ImageStatus calls for a burst of 1,000 pods of
 * one image). One instance per ImagePuller (one per worker thread); no I/O, no timers.
 *
 * Freshness (what keeps the view from lying for long):
 *   - an entry is recorded from an ImageStatus answer and trusted for `ttlMs` (monotonic) after
 *     it; then the next lookup misses and the caller asks ImageStatus again;
 *   - a successful PullImage forgets the entry (the caller's next lookup re-reads the image,
 *     whose tags and digests may have changed with the pull);
 *   - a CreateContainer that fails because the image is gone (NotFound) forgets it.
 * So an image removed behind the agent's back (another client, image GC) costs at most one
 * failed CreateContainer per thread, or nothing once the entry ages out.
 *
 * Entries also carry what the runtime reports for a container created from the image
 * (`image` and `imageRef` in ContainerStatus, containerd 1.6's rule: the first repo tag, else
 * the spec; the first repo digest, else the image id), so the status after a start can be
 * derived without re-reading it (sync-pod.ts).
 */
import type { Image } from '../../src/shared/cri/cri-types.js';
import { imageUserOf, type ImageUser } from './image-user.js';

/** What a container created from this image reports (ContainerStatus.image.image / imageRef). */
export interface ImageFacts {
  /** The image id (ImageStatus image.id): what the agent puts in the container config. */
  id: string;
  /** ContainerStatus.image.image for a container of this image. */
  statusImage: string;
  /** ContainerStatus.imageRef for a container of this image. */
  statusImageRef: string;
  /** The user the image runs as (runAsNonRoot, the default runAsUser). */
  user: ImageUser;
}

/** An ImageStatus answer's facts (undefined: the image is not present). */
export function imageFactsOf(found: Image | null, specImage: string): ImageFacts | undefined {
  if (!found || found.id === '') return undefined;
  return { id: found.id, statusImage: found.repoTags[0] ?? specImage, statusImageRef: found.repoDigests[0] ?? found.id, user: imageUserOf(found) };
}

export const IMAGE_VIEW_DEFAULTS = Object.freeze({ ttlMs: 30_000, maxEntries: 4096 });

export interface ImageViewOptions {
  /** Monotonic ms (the thread's Clock). */
  monotonic: () => number;
  /** How long an ImageStatus answer is trusted. 0 disables the view (every lookup misses). */
  ttlMs?: number;
  /** Bound on distinct image names kept (hostile manifests can name any number of images). */
  maxEntries?: number;
}

interface Entry {
  facts: ImageFacts;
  recordedAtMs: number;
}

export class ImageView {
  readonly #now: () => number;
  readonly #ttlMs: number;
  readonly #max: number;
  /** Keyed by the image name with its default tag applied (as the puller looks it up). */
  readonly #entries = new Map<string, Entry>();

  constructor(opts: ImageViewOptions) {
    if (typeof opts.monotonic !== 'function') throw new TypeError('ImageView: monotonic is required');
    const ttl = opts.ttlMs ?? IMAGE_VIEW_DEFAULTS.ttlMs;
    if (!Number.isFinite(ttl) || ttl < 0) throw new RangeError(`ImageView: ttlMs must be a non-negative number, got ${ttl}`);
    const max = opts.maxEntries ?? IMAGE_VIEW_DEFAULTS.maxEntries;
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`ImageView: maxEntries must be a positive integer, got ${max}`);
    this.#now = opts.monotonic;
    this.#ttlMs = ttl;
    this.#max = max;
  }

  /** The image's facts if an ImageStatus answer younger than ttlMs said it is present. */
  lookup(image: string): ImageFacts | undefined {
    const e = this.#entries.get(image);
    if (!e) return undefined;
    if (this.#now() - e.recordedAtMs >= this.#ttlMs) {
      this.#entries.delete(image);
      return undefined;
    }
    return e.facts;
  }

  /** Record an ImageStatus answer: present (`found`) or absent (null: forgets the name). */
  record(image: string, found: Image | null, specImage: string): ImageFacts | undefined {
    const facts = imageFactsOf(found, specImage);
    if (!facts) {
      this.#entries.delete(image);
      return undefined;
    }
    if (this.#ttlMs === 0) return facts;
    this.#entries.delete(image); // re-insert: the oldest entry is evicted first
    if (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(image, { facts, recordedAtMs: this.#now() });
    return facts;
  }

  /** Forget an image (pulled again, or reported missing by the runtime). */
  forget(image: string): void {
    this.#entries.delete(image);
  }

  /** Forget every image whose id is `id` (CreateContainer names the id, not the name). */
  forgetId(id: string): void {
    for (const [name, e] of this.#entries) if (e.facts.id === id) this.#entries.delete(name);
  }

  get size(): number {
    return this.#entries.size;
  }
}
