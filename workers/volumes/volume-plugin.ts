/**
 * The seam between the volume manager and one volume type (the kubelet's VolumePlugin /
 * Mounter, reduced to what a node agent without attach/detach needs): set a volume up for a pod,
 * idempotently, and say where its content is on the host.
 *
 * Contract:
 * - `setUp` is called before any container of the pod is created, on every sync of the pod
 *   (inside its serialized loop), so it must be cheap when nothing changed (plugins keep what
 *   they need in the `state` the manager hands back to them).
 * - Expected failures (a missing configMap, a hostPath of the wrong type, a mount that fails)
 *   are returned as `{ ok: false, message }`, never thrown: the pod waits with a FailedMount
 *   message naming the volume, and no container is started.
 * - Every path a plugin creates lies under the volume directory the manager gives it, except
 *   hostPath's (the user's path on the host, by definition).
 */
import type { V1Pod, V1Volume } from '@kubernetes/client-node';
import type { PodApiObjects } from '../../src/shared/protocol/api-object-snapshot.js';
import type { VolumePluginDir } from './volume-paths.js';

export interface VolumeSetUpInput {
  pod: V1Pod;
  volume: V1Volume;
  /** `<rootDir>/pods/<uid>/volumes/<plugin>/<name>` for plugins with a directory. */
  dir: string;
  objects: PodApiObjects | undefined;
  /** What this plugin returned for this volume at the previous set-up, if any. */
  previous: VolumeState | undefined;
}

/** What a plugin remembers between set-ups of one volume (opaque to the manager). */
export interface VolumeState {
  hostPath: string;
  /** A digest of the content written (payload volumes), to skip unchanged rewrites. */
  digest?: string;
  /** A tmpfs was mounted on `hostPath` (so teardown unmounts it). */
  tmpfs?: boolean;
}

export type VolumeSetUpResult = { ok: true; state: VolumeState } | { ok: false; message: string };

export interface VolumePlugin {
  /** The kubelet's plugin name, for messages (e.g. kubernetes.io/empty-dir). */
  readonly name: string;
  /** Its directory under the pod's volumes dir, or null (hostPath). */
  readonly dir: VolumePluginDir | null;
  setUp(input: VolumeSetUpInput): Promise<VolumeSetUpResult>;
}
