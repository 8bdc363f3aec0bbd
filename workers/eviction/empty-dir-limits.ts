/**
 * What the kubelet's eviction manager decides from a pod spec alone for the local-storage check
 * (pkg/kubelet/eviction: emptyDirLimitEviction, evictPod, kubelettypes.IsCriticalPod), and the
 * words it uses. Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { parseQuantity, unitValue } from '../../src/shared/resources/quantity.js';
import { checkPathSegment } from '../../src/shared/paths/path-segment.js';

/** The kubelet's eviction.Reason: the pod's status reason and the event's reason. */
export const EVICTED_REASON = 'Evicted';

/** The kubelet's eviction signal label for an emptyDir past its sizeLimit (signalEmptyDirFsLimit). */
export const EMPTY_DIR_FS_LIMIT_SIGNAL = 'emptydirfs.limit';

export { isCriticalPod, SYSTEM_CRITICAL_PRIORITY } from '../../src/shared/kubetypes/critical-pod.js';

/** One disk-backed emptyDir with a positive sizeLimit. */
export interface LimitedEmptyDir {
  /** The volume's name (already a safe path component: checked here). */
  name: string;
  /** The limit in bytes (Quantity.Value(), rounded up). */
  limitBytes: number;
  /** The limit as the spec spells it (for the message; the API server sends canonical forms). */
  limitText: string;
}

/**
 * The emptyDir volumes whose usage the eviction check measures: `sizeLimit` > 0 and the disk
 * medium. `medium: Memory` ones are left out: shardlet mounts them as a tmpfs of exactly
 * `sizeLimit` (plugin-empty-dir.ts), so the kernel already stops a write past the limit and
 * usage never exceeds it (the kubelet's check is `used > limit`). Volume names that are not one
 * path component are left out too (the volume manager never created a directory for them).
 */
export function limitedEmptyDirs(pod: V1Pod): LimitedEmptyDir[] {
  const out: LimitedEmptyDir[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    const src = v.emptyDir;
    if (src === undefined || src === null) continue;
    if ((src.medium ?? '') === 'Memory') continue;
    if (src.sizeLimit === undefined || src.sizeLimit === null) continue;
    const q = parseQuantity(src.sizeLimit);
    if (q === undefined) continue;
    const limitBytes = unitValue(q);
    if (!(limitBytes > 0)) continue;
    if (checkPathSegment(v.name) !== undefined) continue;
    out.push({ name: v.name, limitBytes, limitText: String(src.sizeLimit).trim().slice(0, 64) });
  }
  return out;
}

/**
 * The kubelet's emptyDirMessageFmt, `Usage of EmptyDir volume %q exceeds the limit %q. `
 * (trailing space included). Go's %q and JSON quoting agree on what reaches here: a volume name
 * is a DNS label and a limit is a quantity, both plain ASCII.
 */
export function emptyDirEvictionMessage(volumeName: string, limitText: string): string {
  return `Usage of EmptyDir volume ${JSON.stringify(volumeName)} exceeds the limit ${JSON.stringify(limitText)}. `;
}
