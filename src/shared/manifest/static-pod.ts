/**
 * The kubelet's conventions for pods that come from a file or URL rather than the API server
 * (pkg/kubelet/config/common.go `applyDefaults`), applied after API defaults and validation:
 *
 * - uid: unless the manifest sets metadata.uid, an md5 over the node name (file sources only),
 *   the origin (file path / URL) and the canonical JSON of the defaulted pod. Any edit to the
 *   manifest therefore yields a new uid, and the merger sees REMOVE old + ADD new, as the
 *   kubelet does for static pods. (The kubelet hashes Go's deep-printed object, so uids differ
 *   from a real kubelet's for the same file; only determinism and content-sensitivity matter.)
 * - metadata.name gets `-<lowercased node name>`; namespace defaults to "default";
 *   spec.nodeName is set to this node.
 * - annotations: kubernetes.io/config.hash = uid, kubernetes.io/config.source = "file"/"http"
 *   (config.seen is stamped by the merger when it first sees the uid).
 * - file pods tolerate every NoExecute taint (so node problems never evict static pods).
 * - status.phase = Pending.
 */
import { createHash } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { ConfigHashAnnotationKey, ConfigSourceAnnotationKey } from '../kubetypes/kubelet-labels.js';
import type { SourceName } from './pod-update.js';

export interface StaticPodContext {
  source: SourceName;
  /** File path or URL the pod came from. */
  origin: string;
  nodeName: string;
}

/** JSON with object keys sorted at every level, so equal objects always hash equally. */
export function canonicalJson(v: unknown): string {
  if (v instanceof Date) return JSON.stringify(Number.isNaN(v.getTime()) ? null : v.toISOString());
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonicalJson(x))).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const parts: string[] = [];
    for (const k of Object.keys(v).sort()) {
      const x: unknown = Reflect.get(v, k);
      if (x !== undefined) parts.push(`${JSON.stringify(k)}:${canonicalJson(x)}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** The generated uid of a manifest pod (hex md5, 32 chars), as common.go computes it. */
export function staticPodUid(pod: V1Pod, ctx: StaticPodContext): string {
  const h = createHash('md5');
  if (ctx.source === 'file') {
    h.update(`host:${ctx.nodeName}`);
    h.update(`file:${ctx.origin}`);
  } else {
    h.update(`url:${ctx.origin}`);
  }
  h.update(canonicalJson(pod));
  return h.digest('hex');
}

/** `name-<node>`: unique among nodes (generatePodName). */
export function staticPodName(name: string, nodeName: string): string {
  return `${name}-${nodeName.toLowerCase()}`;
}

/** Applies the conventions in place to a defaulted, validated pod. */
export function applyStaticPodConventions(pod: V1Pod, ctx: StaticPodContext): void {
  const meta = (pod.metadata ??= {});
  if (meta.uid === undefined || meta.uid === '') meta.uid = staticPodUid(pod, ctx);
  meta.name = staticPodName(meta.name ?? '', ctx.nodeName);
  if (meta.namespace === undefined || meta.namespace === '') meta.namespace = 'default';
  const spec = (pod.spec ??= { containers: [] });
  spec.nodeName = ctx.nodeName;
  const annotations = (meta.annotations ??= {});
  annotations[ConfigHashAnnotationKey] = meta.uid;
  annotations[ConfigSourceAnnotationKey] = ctx.source;
  if (ctx.source === 'file') {
    const tolerations = (spec.tolerations ??= []);
    const has = tolerations.some((t) => t.operator === 'Exists' && t.effect === 'NoExecute' && (t.key ?? '') === '');
    if (!has) tolerations.push({ operator: 'Exists', effect: 'NoExecute' });
  }
  pod.status = { ...(pod.status ?? {}), phase: 'Pending' };
}
