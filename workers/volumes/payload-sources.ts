/**
 * The files of configMap, secret, downwardAPI and projected volumes (the kubelet's MakePayload
 * of each plugin, and projected's collectData), from the API objects the main thread sent:
 *
 * - configMap / secret: every key (data and binaryData) as a file named by the key, or only the
 *   listed `items` at their `path`; a listed key that does not exist fails
 *   (`configmap references non-existent config key: K`) unless the source is optional; a missing
 *   object fails (`configmap "N" not found`, the kubelet's manager's NotFound) unless optional (then the volume is empty).
 * - downwardAPI: `items` with fieldRef (metadata.*) or resourceFieldRef.
 * - projected serviceAccountToken: the token at `path`.
 * - modes: the item's `mode`, else the volume's `defaultMode` (0644 by API default); a mode
 *   outside 0..0777 is refused.
 * An object not known yet (its watch has not delivered) fails set-up with a "waiting" message:
 * the pod waits, it does not start with an empty volume.
 */
import type { V1ConfigMapProjection, V1DownwardAPIVolumeFile, V1KeyToPath, V1Pod, V1SecretProjection, V1ServiceAccountTokenProjection } from '@kubernetes/client-node';
import { podFieldValue, resourceFieldValue, type FieldContext } from '../kuberuntime/downward-api.js';
import { containerSpec } from '../kuberuntime/pod-spec.js';
import { DEFAULT_TOKEN_EXPIRATION_SECONDS, tokenKey, type ConfigMapContents, type ObjectLookup, type PodApiObjects, type SecretContents } from '../../src/shared/protocol/api-object-snapshot.js';
import type { Payload } from './atomic-writer.js';
import { checkRelativePath } from './volume-paths.js';

export const DEFAULT_MODE = 0o644;
/** Bound on one volume's payload (etcd objects are at most 1.5 MiB; a projected volume adds a few). */
export const MAX_PAYLOAD_BYTES = 8 * 1024 * 1024;

export type PayloadResult = { ok: true; payload: Payload } | { ok: false; message: string };

function modeOf(mode: number | undefined, defaultMode: number): number | string {
  const m = mode ?? defaultMode;
  if (!Number.isInteger(m) || m < 0 || m > 0o777) return `invalid file mode ${String(m).slice(0, 16)}: must be between 0 and 0777`;
  return m;
}

function add(payload: Payload, relPath: string, data: Buffer, mode: number | string): string | undefined {
  if (typeof mode === 'string') return mode;
  const bad = checkRelativePath(relPath);
  if (bad !== undefined) return `invalid path ${bad}`;
  payload.set(relPath, { data, mode });
  return undefined;
}

function lookupFailure(kind: 'configmap' | 'secret', name: string, l: ObjectLookup<unknown> | undefined): string {
  if (l === undefined || l.state === 'pending') return `waiting for ${kind} ${JSON.stringify(name)} from the API server`;
  if (l.state === 'error') return `${kind} ${JSON.stringify(name)}: ${l.message}`;
  return `${kind} ${JSON.stringify(name)} not found`;
}

/** key → bytes of a configMap (data as UTF-8, binaryData base64-decoded). */
function configMapEntries(c: ConfigMapContents): Map<string, Buffer> {
  const m = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(c.data ?? {})) m.set(k, Buffer.from(String(v), 'utf8'));
  for (const [k, v] of Object.entries(c.binaryData ?? {})) m.set(k, Buffer.from(String(v), 'base64'));
  return m;
}

function secretEntries(s: SecretContents): Map<string, Buffer> {
  const m = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(s.data ?? {})) m.set(k, Buffer.from(String(v), 'base64'));
  return m;
}

/** Shared by configMap and secret sources (volumes and projections). */
function keysToPayload(
  payload: Payload,
  kind: 'configmap' | 'secret',
  name: string,
  lookup: ObjectLookup<ConfigMapContents> | ObjectLookup<SecretContents> | undefined,
  entriesOf: (o: never) => Map<string, Buffer>,
  items: readonly V1KeyToPath[] | undefined,
  optional: boolean,
  defaultMode: number,
): string | undefined {
  if (lookup?.state !== 'found') {
    if (lookup?.state === 'missing' && optional) return undefined;
    return lookupFailure(kind, name, lookup);
  }
  const entries = entriesOf(lookup.object as never);
  if (!items || items.length === 0) {
    for (const [k, v] of entries) {
      const bad = add(payload, k, v, modeOf(undefined, defaultMode));
      if (bad !== undefined) return bad;
    }
    return undefined;
  }
  for (const it of items) {
    const v = entries.get(it.key);
    if (v === undefined) {
      if (optional) continue;
      return `${kind} references non-existent ${kind === 'configmap' ? 'config' : 'secret'} key: ${it.key.slice(0, 253)}`;
    }
    const bad = add(payload, it.path, v, modeOf(it.mode, defaultMode));
    if (bad !== undefined) return bad;
  }
  return undefined;
}

function downwardToPayload(payload: Payload, pod: V1Pod, items: readonly V1DownwardAPIVolumeFile[] | undefined, defaultMode: number, ctx: FieldContext): string | undefined {
  for (const it of items ?? []) {
    let value: string;
    if (it.fieldRef) {
      const v = podFieldValue(pod, it.fieldRef.fieldPath, ctx);
      if (v === undefined) return `unsupported fieldPath ${JSON.stringify(it.fieldRef.fieldPath.slice(0, 128))}`;
      value = v;
    } else if (it.resourceFieldRef) {
      const r = resourceFieldValue(containerSpec(pod, it.resourceFieldRef.containerName ?? ''), it.resourceFieldRef.resource, it.resourceFieldRef.divisor === undefined ? undefined : String(it.resourceFieldRef.divisor));
      if (!r.ok) return r.message;
      value = r.value;
    } else return `downwardAPI item ${JSON.stringify(it.path.slice(0, 128))}: fieldRef or resourceFieldRef is required`;
    const bad = add(payload, it.path, Buffer.from(value), modeOf(it.mode, defaultMode));
    if (bad !== undefined) return bad;
  }
  return undefined;
}

function tokenToPayload(payload: Payload, src: V1ServiceAccountTokenProjection, objects: PodApiObjects | undefined, defaultMode: number): string | undefined {
  const key = tokenKey(src.audience ?? '', src.expirationSeconds ?? DEFAULT_TOKEN_EXPIRATION_SECONDS);
  const l = objects?.tokens.get(key);
  if (l?.state !== 'found') return l?.state === 'error' ? `failed to fetch token: ${l.message}` : 'waiting for a service account token from the API server';
  return add(payload, src.path, Buffer.from(l.object.token), modeOf(undefined, defaultMode));
}

function checkSize(payload: Payload): PayloadResult {
  let n = 0;
  for (const f of payload.values()) n += f.data.length;
  if (n > MAX_PAYLOAD_BYTES) return { ok: false, message: `volume content of ${n} bytes exceeds the ${MAX_PAYLOAD_BYTES}-byte bound` };
  return { ok: true, payload };
}

/** The payload of a configMap, secret, downwardAPI or projected volume of `pod`. */
export function makePayload(pod: V1Pod, type: string, src: unknown, objects: PodApiObjects | undefined, ctx: FieldContext): PayloadResult {
  const payload: Payload = new Map();
  const fail = (message: string | undefined): PayloadResult => (message === undefined ? checkSize(payload) : { ok: false, message });
  const s = (src ?? {}) as Record<string, never>;
  const defaultMode = typeof s['defaultMode'] === 'number' ? (s['defaultMode'] as number) : DEFAULT_MODE;
  switch (type) {
    case 'configMap': {
      const name = String(s['name'] ?? '');
      return fail(keysToPayload(payload, 'configmap', name, objects?.configMaps.get(name), configMapEntries as never, s['items'], s['optional'] === true, defaultMode));
    }
    case 'secret': {
      const name = String(s['secretName'] ?? '');
      return fail(keysToPayload(payload, 'secret', name, objects?.secrets.get(name), secretEntries as never, s['items'], s['optional'] === true, defaultMode));
    }
    case 'downwardAPI':
      return fail(downwardToPayload(payload, pod, s['items'], defaultMode, ctx));
    case 'projected': {
      for (const p of (s['sources'] ?? []) as Record<string, unknown>[]) {
        let bad: string | undefined;
        if (p['configMap']) {
          const c = p['configMap'] as V1ConfigMapProjection;
          bad = keysToPayload(payload, 'configmap', c.name ?? '', objects?.configMaps.get(c.name ?? ''), configMapEntries as never, c.items, c.optional === true, defaultMode);
        } else if (p['secret']) {
          const c = p['secret'] as V1SecretProjection;
          bad = keysToPayload(payload, 'secret', c.name ?? '', objects?.secrets.get(c.name ?? ''), secretEntries as never, c.items, c.optional === true, defaultMode);
        } else if (p['downwardAPI']) {
          bad = downwardToPayload(payload, pod, (p['downwardAPI'] as { items?: V1DownwardAPIVolumeFile[] }).items, defaultMode, ctx);
        } else if (p['serviceAccountToken']) {
          bad = tokenToPayload(payload, p['serviceAccountToken'] as V1ServiceAccountTokenProjection, objects, defaultMode);
        } else {
          bad = `projected source ${JSON.stringify(Object.keys(p)[0] ?? '').slice(0, 64)} is not supported by shardlet`;
        }
        if (bad !== undefined) return { ok: false, message: bad };
      }
      return checkSize(payload);
    }
    default:
      return { ok: false, message: `volume type ${type.slice(0, 64)} has no payload` };
  }
}
