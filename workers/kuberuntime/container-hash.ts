/**
 * The container spec hash stored in the `io.kubernetes.container.hash` annotation. A running
 * container whose hash differs from its spec's current hash is killed and restarted (only that
 * container).
 *
 * The kubelet hashes the container spec (kubecontainer.HashContainer: FNV-32a over the JSON of
 * the spec; since 1.31 only name and image). shardlet hashes the whole spec minus `resources`
 * and `resizePolicy` (which change without a restart under in-place resize), as deterministic
 * JSON with sorted keys and without undefined/null members, so two specs that mean the same
 * thing hash the same whatever their key order. The value is FNV-1a 32-bit as lower-case hex
 * (the kubelet's format, strconv.FormatUint(hash, 16)).
 */
import type { V1Container } from '@kubernetes/client-node';
import { fnv1a32 } from '../../src/shared/hash/fnv1a.js';

const EXCLUDED_FIELDS: ReadonlySet<string> = new Set(['resources', 'resizePolicy']);

/**
 * Hashes already computed, per container spec object. A sync hashes each container up to three
 * times (actions, the start key, labels) and every sync of the pod sees the same objects (a
 * spec change arrives as a new pod object). Specs are never mutated in place (they come from
 * the thread protocol's structured clone or the main thread's decoded manifests), so an object
 * keeps its hash; the WeakMap lets it go with the pod.
 */
const hashes = new WeakMap<V1Container, string>();

export function hashContainer(container: V1Container): string {
  let h = hashes.get(container);
  if (h === undefined) {
    h = computeHash(container);
    hashes.set(container, h);
  }
  return h;
}

function computeHash(container: V1Container): string {
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(container)) if (!EXCLUDED_FIELDS.has(k)) fields[k] = v;
  return fnv1a32(stableJson(fields)).toString(16);
}

/** JSON with object keys sorted and undefined/null members dropped; arrays keep their order. */
export function stableJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map((v) => stableJson(v)).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && v !== null)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
