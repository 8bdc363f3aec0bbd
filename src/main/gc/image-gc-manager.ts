/**
 * Image garbage collection, as the kubelet's realImageGCManager
 * (pkg/kubelet/images/image_gc_manager.go), started as StartGarbageCollection starts it: a pass
 * at start, then one every ImageGCPeriod (5 min) after the previous ended, on the injected
 * clock; not at all when the high threshold is 100.
 *
 * Records (detectImages, at the start of every pass): per image id, when it was first detected,
 * when it was last seen in use, its size and whether the runtime pins it. The first detection
 * after start records "first detected" as unknown-in-the-past (time 0), as the kubelet's
 * initial detection does, so images already present are not protected by the minimum age. An
 * image is in use while any container (running or not) references it (CRI Container.imageRef /
 * imageId), and the sandbox image is always in use: --pod-infra-container-image, and the
 * `sandboxImage` of the runtime's own config when its verbose Status reports one (containerd's
 * CRI config; 1.6 does not pin its sandbox image, so a node whose flag names another image
 * would otherwise lose the pause image and fail every RunPodSandbox), each resolved with
 * ImageStatus. Records of images no longer listed are dropped.
 *
 * A pass (GarbageCollect):
 *   1. the eviction order: images not in use and not pinned (Image.pinned: containerd pins its
 *      sandbox image), least recently used first, ties broken by first detection;
 *   2. the image filesystem's capacity and availability (image-fs-stats.ts); available is
 *      clamped to capacity; capacity 0 fails the pass with the kubelet's InvalidDiskCapacity
 *      event "invalid capacity 0 on image filesystem";
 *   3. usage = 100 − available × 100 / capacity (integer division); at or above the high
 *      threshold, amountToFree = capacity × (100 − low) / 100 − available, and images are removed
 *      (RemoveImage) in eviction order, skipping those first detected less than minAgeMs ago,
 *      until the sizes removed reach amountToFree. Falling short records FreeDiskSpaceFailed
 *      ("Failed to garbage collect required amount of images. Attempted to free N bytes, but
 *      only found M bytes eligible to free."); a removal error fails the pass ("wanted to free
 *      …") after trying the rest.
 * A failed pass is logged; the second failure in a row (and each after) records the kubelet's
 * ImageGCFailed event with the error. Each removal counts
 * kubelet_image_garbage_collected_total{reason="space"}.
 *
 * Age (freeOldImages, the kubelet's ImageMaximumGCAge, on by default since 1.30): with a
 * maximum age (policy.maxAgeMs > 0), once more than that has passed since GC began (start(), or
 * construction: the kubelet waits so an image it has not yet seen in use is not taken for
 * unused), every image of the eviction order whose last use is more than maxAgeMs ago (never
 * used: time 0) is removed before the space check, whatever the usage and regardless of the
 * minimum age, counting kubelet_image_garbage_collected_total{reason="age"}; a removal error
 * fails the pass ("wanted to free images older than 5m0s, encountered errors in image
 * deletion: …") after trying the rest. The images it removed are no longer candidates for
 * the space step.
 *
 * Bounded work: at most `maxRemovalsPerPass` RemoveImage calls per pass, age and space
 * together; a pass stopped by the cap records no FreeDiskSpaceFailed (the next pass goes on).
 * Not done (a kubelet feature gate): per-runtime-handler images.
 */
import type { Clock } from '../../shared/clock/clock.js';
import type { Container, Image } from '../../shared/cri/cri-types.js';
import type { ImageService, RuntimeService } from '../../shared/cri/runtime-service.js';
import type { Logger } from '../../shared/logging/logger.js';
import { formatGoDuration } from '../../shared/clock/go-duration.js';
import { aggregateMessage } from '../node-status/node-conditions.js';
import { imageFsStats, type FsCapacitySource } from './image-fs-stats.js';
import { PeriodicPass } from '../../shared/clock/periodic-pass.js';

export type ImageGcRuntime = Pick<ImageService, 'listImages' | 'removeImage' | 'imageFsInfo' | 'imageStatus'> & Pick<RuntimeService, 'listContainers' | 'status'>;

export interface ImageGcPolicy {
  highThresholdPercent: number;
  lowThresholdPercent: number;
  minAgeMs: number;
  /** imageMaximumGCAge: unused images not used for longer are removed at any usage (0 or absent: off). */
  maxAgeMs?: number;
}

export interface ImageGcObserver {
  /** One image removed (kubelet_image_garbage_collected_total's reason). */
  removed(reason: 'space' | 'age'): void;
  pass(seconds: number, ok: boolean): void;
}

/** The kubelet's node events of image GC. */
export type ImageGcEventReason = 'InvalidDiskCapacity' | 'FreeDiskSpaceFailed' | 'ImageGCFailed';

export interface ImageGcDeps {
  runtime: ImageGcRuntime;
  capacity: FsCapacitySource;
  clock: Clock;
  logger: Logger;
  policy: ImageGcPolicy;
  /** --pod-infra-container-image: always in use. */
  sandboxImage: string;
  /** A Warning event on the Node (cluster mode). */
  event?: (reason: ImageGcEventReason, message: string) => void;
  observer?: ImageGcObserver;
  periodMs?: number;
  maxRemovalsPerPass?: number;
  onPass?: (r: ImageGcPass) => void;
}

export interface ImageGcPass {
  ok: boolean;
  /** The error of a failed pass. */
  error?: string;
  usagePercent?: number;
  amountToFree?: number;
  /** Bytes freed by the space step (what is compared with amountToFree). */
  freed: number;
  /** Bytes freed by the age step. */
  freedByAge: number;
  removed: string[];
  /** Removed by age (also in `removed`). */
  removedByAge: string[];
}

export const IMAGE_GC_DEFAULTS = Object.freeze({
  /** The kubelet's ImageGCPeriod. */
  periodMs: 5 * 60_000,
  maxRemovalsPerPass: 200,
});

interface ImageRecord {
  firstDetectedMs: number;
  /** 0 = never seen in use (Go's zero time). */
  lastUsedMs: number;
  size: number;
  pinned: boolean;
}

interface EvictionInfo extends ImageRecord {
  id: string;
}

export class ImageGcError extends Error {
  override readonly name = 'ImageGcError';
  constructor(readonly code: 'ERR_IMAGE_GC_CAPACITY' | 'ERR_IMAGE_GC_FREE' | 'ERR_IMAGE_GC_DELETE', message: string) {
    super(message);
  }
}

export class ImageGcManager {
  readonly #d: ImageGcDeps;
  readonly #periodMs: number;
  readonly #maxRemovals: number;
  readonly #records = new Map<string, ImageRecord>();
  #initialized = false;
  #prevFailed = false;
  readonly #pass: PeriodicPass<ImageGcPass>;
  /** The kubelet's beganGC: age GC waits until maxAgeMs has passed since then. */
  #beganMs: number;
  /** RemoveImage calls of the pass in progress (the per-pass cap covers age and space). */
  #calls = 0;

  constructor(deps: ImageGcDeps) {
    if (!deps?.runtime || !deps.capacity || !deps.clock || !deps.logger) throw new TypeError('ImageGcManager: runtime, capacity, clock and logger are required');
    const { highThresholdPercent: high, lowThresholdPercent: low } = deps.policy;
    if (!(high >= 0 && high <= 100)) throw new RangeError(`invalid HighThresholdPercent ${high}, must be in range [0-100]`);
    if (!(low >= 0 && low <= 100)) throw new RangeError(`invalid LowThresholdPercent ${low}, must be in range [0-100]`);
    if (low > high) throw new RangeError(`LowThresholdPercent ${low} can not be higher than HighThresholdPercent ${high}`);
    this.#periodMs = deps.periodMs ?? IMAGE_GC_DEFAULTS.periodMs;
    this.#maxRemovals = deps.maxRemovalsPerPass ?? IMAGE_GC_DEFAULTS.maxRemovalsPerPass;
    if (!(this.#periodMs > 0)) throw new RangeError(`ImageGcManager: periodMs must be positive, got ${this.#periodMs}`);
    if (!Number.isInteger(this.#maxRemovals) || this.#maxRemovals < 1) throw new RangeError(`ImageGcManager: maxRemovalsPerPass must be a positive integer, got ${this.#maxRemovals}`);
    const maxAge = deps.policy.maxAgeMs ?? 0;
    if (!(Number.isFinite(maxAge) && maxAge >= 0)) throw new RangeError(`ImageGcManager: policy.maxAgeMs must be a non-negative number, got ${maxAge}`);
    this.#d = deps;
    this.#pass = new PeriodicPass(deps.clock, this.#periodMs, () => this.runOnce());
    this.#beganMs = deps.clock.now();
  }

  /** Whether the kubelet would run image GC at all (a high threshold of 100 disables it). */
  get enabled(): boolean {
    return this.#d.policy.highThresholdPercent < 100;
  }

  /** A pass now, then one every period after the previous ended; nothing when disabled. Idempotent. */
  start(): void {
    if (!this.enabled) {
      this.#d.logger.v(2).info('ImageGCHighThresholdPercent is set 100, Disable image GC');
      return;
    }
    if (!this.#pass.idle) return;
    this.#beganMs = this.#d.clock.now();
    this.#pass.start();
  }


  /** The pass in flight, if any. */
  get running(): Promise<ImageGcPass> | undefined {
    return this.#pass.running;
  }

  /** Records of the images known (tests, diagnostics). */
  records(): ReadonlyMap<string, Readonly<ImageRecord>> {
    return this.#records;
  }

  /** One pass (the timer calls it; tests too). Never rejects; failures are in the result and events. */
  async runOnce(): Promise<ImageGcPass> {
    const began = this.#d.clock.monotonic();
    const r: ImageGcPass = { ok: true, freed: 0, freedByAge: 0, removed: [], removedByAge: [] };
    this.#calls = 0;
    try {
      await this.#garbageCollect(r);
      this.#prevFailed = false;
    } catch (err) {
      r.ok = false;
      r.error = err instanceof Error ? err.message : String(err);
      if (this.#prevFailed) {
        this.#d.logger.error('Image garbage collection failed multiple times in a row', { err: r.error });
        this.#d.event?.('ImageGCFailed', r.error);
      } else {
        this.#d.logger.error('Image garbage collection failed once. Stats initialization may not have completed yet', { err: r.error });
      }
      this.#prevFailed = true;
    }
    this.#d.observer?.pass((this.#d.clock.monotonic() - began) / 1000, r.ok);
    this.#d.onPass?.(r);
    return r;
  }

  async #garbageCollect(r: ImageGcPass): Promise<void> {
    const { clock, policy, logger } = this.#d;
    const freeTime = clock.now();
    const images = await this.#freeOldImages(r, await this.#imagesInEvictionOrder(freeTime), freeTime);
    const { imageFs } = await imageFsStats(this.#d.runtime, this.#d.capacity, clock);
    const capacity = imageFs.capacityBytes ?? 0;
    let available = imageFs.availableBytes ?? 0;
    if (available > capacity) {
      logger.info('Availability is larger than capacity', { available, capacity });
      available = capacity;
    }
    if (capacity === 0) {
      const message = 'invalid capacity 0 on image filesystem';
      this.#d.event?.('InvalidDiskCapacity', message);
      throw new ImageGcError('ERR_IMAGE_GC_CAPACITY', message);
    }
    const usagePercent = 100 - Math.trunc((available * 100) / capacity);
    r.usagePercent = usagePercent;
    if (usagePercent < policy.highThresholdPercent) return;
    const amountToFree = Math.trunc((capacity * (100 - policy.lowThresholdPercent)) / 100) - available;
    r.amountToFree = amountToFree;
    logger.info('Disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold', {
      usage: usagePercent, highThreshold: policy.highThresholdPercent, amountToFree, lowThreshold: policy.lowThresholdPercent,
    });
    const capped = await this.#freeSpace(r, amountToFree, freeTime, images);
    if (r.freed < amountToFree && !capped) {
      const message = `Failed to garbage collect required amount of images. Attempted to free ${amountToFree} bytes, but only found ${r.freed} bytes eligible to free.`;
      this.#d.event?.('FreeDiskSpaceFailed', message);
      throw new ImageGcError('ERR_IMAGE_GC_FREE', message);
    }
  }

  /** Removes images in order until `bytesToFree` are freed; returns whether the per-pass cap stopped it. */
  async #freeSpace(r: ImageGcPass, bytesToFree: number, freeTime: number, images: readonly EvictionInfo[]): Promise<boolean> {
    const { logger, policy } = this.#d;
    const errors: string[] = [];
    let capped = false;
    for (const image of images) {
      if (this.#pass.closed) break;
      // Images in use were given a newer lastUsed.
      if (image.lastUsedMs >= freeTime) continue;
      // Not old enough: it may have just been pulled, for a container about to start.
      if (freeTime - image.firstDetectedMs < policy.minAgeMs) continue;
      if (this.#capReached(r)) {
        capped = true;
        break;
      }
      logger.info('Removing image to free bytes', { imageID: image.id, size: image.size });
      const err = await this.#freeImage(r, image, 'space');
      if (err !== undefined) {
        errors.push(err);
        continue;
      }
      if (r.freed >= bytesToFree) break;
    }
    if (errors.length > 0) {
      throw new ImageGcError('ERR_IMAGE_GC_DELETE', `wanted to free ${bytesToFree} bytes, but freed ${r.freed} bytes space with errors in image deletion: [${errors.join(', ')}]`);
    }
    return capped;
  }

  /**
   * The kubelet's freeOldImages: removes the images (already in eviction order: unused, not
   * pinned) last used more than maxAgeMs ago; returns the rest.
   */
  async #freeOldImages(r: ImageGcPass, images: readonly EvictionInfo[], freeTime: number): Promise<readonly EvictionInfo[]> {
    const maxAge = this.#d.policy.maxAgeMs ?? 0;
    if (maxAge === 0) return images;
    // Wait until maxAge has passed since GC began, or else images would be removed before
    // their first use was seen.
    if (freeTime - this.#beganMs <= maxAge) return images;
    const errors: string[] = [];
    const remaining: EvictionInfo[] = [];
    for (const image of images) {
      if (this.#pass.closed || freeTime - image.lastUsedMs <= maxAge || this.#capReached(r)) {
        remaining.push(image);
        continue;
      }
      this.#d.logger.v(5).info('Evaluating image ID for possible garbage collection based on image age', { imageID: image.id });
      const err = await this.#freeImage(r, image, 'age');
      if (err !== undefined) {
        errors.push(err);
        remaining.push(image);
        continue;
      }
      r.removedByAge.push(image.id);
    }
    if (errors.length > 0) {
      throw new ImageGcError('ERR_IMAGE_GC_DELETE', `wanted to free images older than ${formatGoDuration(maxAge)}, encountered errors in image deletion: ${aggregateMessage(errors)}`);
    }
    return remaining;
  }

  /** Whether this pass made its last allowed RemoveImage call (logged once per pass). */
  #capReached(r: ImageGcPass): boolean {
    if (this.#calls < this.#maxRemovals) return false;
    if (this.#calls === this.#maxRemovals) {
      this.#calls++; // log once
      this.#d.logger.info('Image garbage collection reached its per-pass cap; the rest waits for the next pass', { removed: r.removed.length });
    }
    return true;
  }

  /** The kubelet's freeImage: RemoveImage, then the record, the metric and the pass's tally. Returns the error, if any. */
  async #freeImage(r: ImageGcPass, image: EvictionInfo, reason: 'space' | 'age'): Promise<string | undefined> {
    this.#calls++;
    try {
      await this.#d.runtime.removeImage({ image: image.id, annotations: {} });
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
    this.#records.delete(image.id);
    this.#d.observer?.removed(reason);
    r.removed.push(image.id);
    if (reason === 'age') r.freedByAge += image.size;
    else r.freed += image.size;
    return undefined;
  }

  async #imagesInEvictionOrder(freeTime: number): Promise<EvictionInfo[]> {
    const inUse = await this.#detectImages(freeTime);
    const out: EvictionInfo[] = [];
    for (const [id, rec] of this.#records) {
      if (inUse.has(id) || rec.pinned) continue;
      out.push({ id, ...rec });
    }
    // Least recently used first; ties: first detected first.
    out.sort((a, b) => (a.lastUsedMs !== b.lastUsedMs ? a.lastUsedMs - b.lastUsedMs : a.firstDetectedMs - b.firstDetectedMs));
    return out;
  }

  /** The kubelet's detectImages; returns the ids in use. */
  async #detectImages(detectTime: number): Promise<Set<string>> {
    const { runtime } = this.#d;
    const images: Image[] = await runtime.listImages();
    const containers: Container[] = await runtime.listContainers({});
    const inUse = new Set<string>();
    for (const c of containers) {
      if (c.imageRef) inUse.add(c.imageRef);
      if (c.imageId) inUse.add(c.imageId);
    }
    // The sandbox image is always in use (the kubelet's "pod sandbox image in use").
    for (const ref of new Set([this.#d.sandboxImage, await this.#runtimeSandboxImage()])) {
      if (ref === '') continue;
      try {
        const st = await runtime.imageStatus({ image: ref, annotations: {} });
        if (st.image?.id) inUse.add(st.image.id);
      } catch (err) {
        this.#d.logger.v(2).info('cannot resolve the sandbox image; it is kept only if in use or pinned', { image: ref, err: err instanceof Error ? err.message : String(err) });
      }
    }
    const firstDetected = this.#initialized ? detectTime : 0;
    const now = this.#d.clock.now();
    const current = new Set<string>();
    for (const img of images) {
      current.add(img.id);
      let rec = this.#records.get(img.id);
      if (rec === undefined) {
        rec = { firstDetectedMs: firstDetected, lastUsedMs: 0, size: 0, pinned: false };
        this.#records.set(img.id, rec);
      }
      if (inUse.has(img.id)) rec.lastUsedMs = now;
      const size = Number(img.size);
      rec.size = Number.isFinite(size) && size >= 0 ? size : 0;
      rec.pinned = img.pinned === true;
    }
    for (const id of this.#records.keys()) if (!current.has(id)) this.#records.delete(id);
    this.#initialized = true;
    return inUse;
  }

  /** The sandbox image the runtime's verbose Status names in its config (containerd: info.config.sandboxImage); '' when none. */
  async #runtimeSandboxImage(): Promise<string> {
    try {
      const st = await this.#d.runtime.status({ verbose: true });
      const raw = st.info['config'];
      if (raw === undefined || raw.length > 1_000_000) return '';
      const cfg = JSON.parse(raw) as { sandboxImage?: unknown };
      return typeof cfg.sandboxImage === 'string' && cfg.sandboxImage.length <= 4096 ? cfg.sandboxImage : '';
    } catch {
      return '';
    }
  }

  /** Stops the timer and waits for a pass in flight. Idempotent. */
  async close(): Promise<void> {
    await this.#pass.close();
  }
}

