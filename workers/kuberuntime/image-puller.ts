/**
 * Makes sure a container's image is present (the kubelet's images.imageManager.EnsureImageExists):
 * pull policy, ImageStatus → PullImage, and a per-(pod, image) pull backoff.
 *
 * Policy: the container's imagePullPolicy, or when absent the API server's default (Always for
 * `:latest` or an untagged, undigested image, else IfNotPresent). The image name gets the
 * default `:latest` tag before it is looked up (applyDefaultImageTag).
 *
 * Failures are data ({@link SyncFailure}) with the kubelet's reasons and messages:
 *   ErrImagePull (the runtime's error message), ImagePullBackOff (`Back-off pulling image "X"`,
 *   while the backoff of the last failed pull runs), ErrImageNeverPull, ImageInspectError.
 */
import type { V1Container } from '@kubernetes/client-node';
import type { ImageStatusResponse, PodSandboxConfig } from '../../src/shared/cri/cri-types.js';
import type { ImageService } from '../../src/shared/cri/runtime-service.js';
import type { ImagePullWindow } from '../../src/shared/protocol/pod-worker-protocol.js';
import type { Backoff } from './backoff.js';
import { imageFactsOf, type ImageFacts, type ImageView } from './image-view.js';
import { imageUserOf, type ImageUser } from './image-user.js';
import { errorMessage, rethrowIfAborted, type SyncFailure } from './kuberuntime-errors.js';

export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';

/**
 * `pulledMs`: the image was pulled now, taking that long (absent: it was already present).
 * `facts`: what a container of this image reports, when known from an ImageStatus answer
 * (absent after a pull: PullImage answers only the id).
 */
export type EnsureImageResult = { ok: true; imageRef: string; pulledMs?: number; facts?: ImageFacts } | { ok: false; failure: SyncFailure };

/** Whether the image reference carries a digest or a tag in its last path component. */
function splitTag(image: string): { hasDigest: boolean; tag: string | undefined } {
  if (image.includes('@')) return { hasDigest: true, tag: undefined };
  const last = image.slice(image.lastIndexOf('/') + 1);
  const colon = last.lastIndexOf(':');
  return { hasDigest: false, tag: colon >= 0 ? last.slice(colon + 1) : undefined };
}

export function applyDefaultImageTag(image: string): string {
  const { hasDigest, tag } = splitTag(image);
  return hasDigest || tag !== undefined ? image : `${image}:latest`;
}

export function pullPolicyOf(container: V1Container): PullPolicy {
  const p = container.imagePullPolicy;
  if (p === 'Always' || p === 'IfNotPresent' || p === 'Never') return p;
  const { hasDigest, tag } = splitTag(container.image ?? '');
  return !hasDigest && (tag === undefined || tag === 'latest') ? 'Always' : 'IfNotPresent';
}

export interface ImagePullerDeps {
  images: ImageService;
  backoff: Backoff;
  /** Wall clock (ms) for the pull window; without it no window is recorded. */
  now?: () => number;
  /** Which images are present, without an ImageStatus per container (absent: always ask). */
  view?: ImageView;
}

export class ImagePuller {
  readonly #deps: ImagePullerDeps;
  /** Per pod UID; dropped by forgetPod (the syncer's cleanup). */
  readonly #windows = new Map<string, ImagePullWindow>();
  /** ImageStatus calls in flight by image name (see #imageStatus); each deletes itself when settled. */
  readonly #statusInFlight = new Map<string, Promise<ImageStatusResponse>>();

  constructor(deps: ImagePullerDeps) {
    this.#deps = deps;
  }

  /** Backoff key: the kubelet keys pull backoff by pod UID and image. */
  static key(podUID: string, image: string): string {
    return `${podUID}/${image}`;
  }

  async ensureImageExists(
    podUID: string,
    container: V1Container,
    sandboxConfig: PodSandboxConfig,
    signal: AbortSignal,
  ): Promise<EnsureImageResult> {
    const name = container.name;
    const userImage = container.image ?? '';
    if (userImage === '') {
      return fail(name, 'InvalidImageName', `Failed to apply default image tag "": couldn't parse image name ""`);
    }
    const image = applyDefaultImageTag(userImage);
    const policy = pullPolicyOf(container);
    const view = this.#deps.view;
    // Always pulls whatever the view says; the view only spares the ImageStatus of the others.
    let facts = policy === 'Always' ? undefined : view?.lookup(image);
    if (!facts) {
      try {
        const st = await this.#imageStatus(image, signal);
        facts = view ? view.record(image, st.image, image) : imageFactsOf(st.image, image);
      } catch (err) {
        rethrowIfAborted(signal);
        return fail(name, 'ImageInspectError', `Failed to inspect image "${userImage}": ${errorMessage(err)}`);
      }
    }
    if (policy === 'Never' || (policy === 'IfNotPresent' && facts)) {
      if (facts) return { ok: true, imageRef: facts.id, facts };
      return fail(name, 'ErrImageNeverPull', `Container image "${userImage}" is not present with pull policy of Never`);
    }
    const key = ImagePuller.key(podUID, image);
    if (this.#deps.backoff.isInBackOffSinceUpdate(key)) {
      return fail(name, 'ImagePullBackOff', `Back-off pulling image "${userImage}"`);
    }
    const now = this.#deps.now;
    let window = this.#windows.get(podUID);
    if (now && !window) this.#windows.set(podUID, (window = { firstStartedMs: now() }));
    const pullStart = now?.();
    try {
      const ref = await this.#deps.images.pullImage({ image: { image, userSpecifiedImage: userImage }, sandboxConfig }, { signal });
      view?.forget(image); // its tags and digests may have moved with the pull: ask next time
      const end = now?.();
      if (end !== undefined && window) window.lastFinishedMs = end;
      return { ok: true, imageRef: ref, pulledMs: end !== undefined && pullStart !== undefined ? Math.max(0, end - pullStart) : 0 };
    } catch (err) {
      rethrowIfAborted(signal);
      this.#deps.backoff.nextNow(key);
      return fail(name, 'ErrImagePull', errorMessage(err));
    }
  }

  /**
   * One ImageStatus per image in flight, shared by every pod asking meanwhile (a burst asks for
   * the same image hundreds of times before the first answer fills the view). With a view the
   * shared call carries no pod's signal (one pod's abort must not fail the others); each caller
   * still stops waiting when its own signal aborts.
   */
  #imageStatus(image: string, signal: AbortSignal): Promise<ImageStatusResponse> {
    if (!this.#deps.view) return this.#deps.images.imageStatus({ image }, { signal });
    let call = this.#statusInFlight.get(image);
    if (!call) {
      call = this.#deps.images.imageStatus({ image }).finally(() => this.#statusInFlight.delete(image));
      this.#statusInFlight.set(image, call);
    }
    return raceAbort(call, signal);
  }

  /**
   * The user the image runs as, for a container whose image was just pulled (PullImage answers
   * only the id): one ImageStatus, recorded in the view, as the kubelet's getImageUser asks.
   */
  async imageUser(container: V1Container, signal: AbortSignal): Promise<{ ok: true; user: ImageUser } | { ok: false; message: string }> {
    const image = applyDefaultImageTag(container.image ?? '');
    const cached = this.#deps.view?.lookup(image);
    if (cached) return { ok: true, user: cached.user };
    try {
      const st = await this.#imageStatus(image, signal);
      const facts = this.#deps.view ? this.#deps.view.record(image, st.image, image) : imageFactsOf(st.image, image);
      return { ok: true, user: facts?.user ?? imageUserOf(null) };
    } catch (err) {
      rethrowIfAborted(signal);
      return { ok: false, message: errorMessage(err) };
    }
  }

  /** The runtime reported the image gone (CreateContainer NotFound): ask ImageStatus next time. */
  imageMissing(imageRef: string): void {
    this.#deps.view?.forgetId(imageRef);
  }

  /** The pod's pull window so far (undefined when no pull was started for it). */
  pullWindow(podUID: string): ImagePullWindow | undefined {
    const w = this.#windows.get(podUID);
    return w ? { ...w } : undefined;
  }

  forgetPod(podUID: string): void {
    this.#windows.delete(podUID);
  }

  /** Ms until the pull backoff for this pod's image expires (0 when none). */
  remainingBackoff(podUID: string, container: V1Container): number {
    return this.#deps.backoff.remainingSinceUpdate(ImagePuller.key(podUID, applyDefaultImageTag(container.image ?? '')));
  }
}

/** `p`, or a rejection with the signal's reason as soon as it aborts. */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (e: unknown) => { signal.removeEventListener('abort', onAbort); reject(e); },
    );
  });
}

function fail(containerName: string, reason: SyncFailure['reason'], message: string): EnsureImageResult {
  return { ok: false, failure: { reason, message, containerName } };
}
