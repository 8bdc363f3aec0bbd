/**
 * Pod statuses as the API server stores them, so that "did it change?" compares what the API
 * would hold: plain JSON, timestamps at second precision (metav1.Time is RFC 3339 with whole
 * seconds on the wire), no undefined/null/empty-string fields and no empty objects (the API's
 * omitempty drops them, so keeping them would make every comparison with a read-back status
 * differ). The status manager keeps and sends statuses
 * in this form.
 */
import type { V1PodStatus } from '@kubernetes/client-node';
import { deepEqual } from '../../shared/immutable/deep-equal.js';

/** A status in API form (see the module comment). */
export type ApiPodStatus = Readonly<Record<string, unknown>>;

const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** A Date or RFC 3339 string → `YYYY-MM-DDTHH:MM:SSZ` (UTC, fraction dropped). */
export function secondPrecision(t: Date | string): string {
  const ms = t instanceof Date ? t.getTime() : Date.parse(t);
  if (!Number.isFinite(ms)) return String(t);
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function normalizeValue(v: unknown): unknown {
  if (v instanceof Date) return secondPrecision(v);
  if (typeof v === 'string') return RFC3339.test(v) ? secondPrecision(v) : v;
  if (Array.isArray(v)) return v.map(normalizeValue);
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined || x === null || x === '') continue; // omitempty: the API drops them too
      const n = normalizeValue(x);
      if (typeof n === 'object' && n !== null && !Array.isArray(n) && Object.keys(n).length === 0 && k !== 'state') continue;
      out[k] = n;
    }
    return out;
  }
  return v;
}

export function normalizeStatus(status: V1PodStatus | undefined | null): ApiPodStatus {
  return (normalizeValue(status ?? {}) as ApiPodStatus) ?? {};
}

/**
 * True when writing `next` over `base` would change nothing: every field of `next` equals
 * `base`'s. Fields only `base` has (set by others, e.g. the API's qosClass) do not count; with
 * `ignoreFieldsBaseLacks`, neither do fields only `next` has (see ApiStatusSync on version skew).
 */
export function statusUnchanged(base: ApiPodStatus | undefined, next: ApiPodStatus, ignoreFieldsBaseLacks = false): boolean {
  if (base === undefined) return false;
  for (const [k, v] of Object.entries(next)) {
    if (ignoreFieldsBaseLacks && !(k in base)) continue;
    if (!deepEqual(v, base[k])) return false;
  }
  return true;
}

/** The fields of `next` that differ from `base` (for logs). */
export function changedFields(base: ApiPodStatus | undefined, next: ApiPodStatus): string[] {
  return Object.keys(next).filter((k) => !deepEqual(next[k], base?.[k]));
}

export function phaseOf(s: ApiPodStatus | undefined): string | undefined {
  const p = s?.['phase'];
  return typeof p === 'string' ? p : undefined;
}

export function isTerminalPhaseName(p: string | undefined): boolean {
  return p === 'Succeeded' || p === 'Failed';
}
