/**
 * A raw pod object from the API server (a list item or a watch event's object, already
 * JSON-parsed) → a typed V1Pod the merger can take, through the same defaults and validation
 * as manifest pods (pod-api-defaults.ts, pod-validation.ts), with errors naming the field.
 * Unlike manifests, API pods keep their own UID, name and annotations (no static-pod
 * conventions), and must carry a UID and be bound to this node.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { ObjectSerializer } from '@kubernetes/client-node/dist/serializer.js';
import { ConfigError } from '../../shared/manifest/config-errors.js';
import { fieldErr } from '../../shared/manifest/field-error.js';
import { applyApiDefaults } from '../../shared/manifest/pod-api-defaults.js';
import { validatePod } from '../../shared/manifest/pod-validation.js';

export type ApiPodResult = { ok: true; pod: V1Pod } | { ok: false; error: ConfigError };

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Decodes `raw` (which it may modify: defaults are applied in place). `origin` names the pod in
 * errors (e.g. "api pod ns/name").
 */
export function decodeApiPod(raw: unknown, nodeName: string): ApiPodResult {
  if (!isObj(raw)) return { ok: false, error: ConfigError.invalid('api', [fieldErr.invalid('object', '<non-object>', 'must be a Pod object')]) };
  const meta = raw['metadata'];
  const ns = isObj(meta) && typeof meta['namespace'] === 'string' ? meta['namespace'] : '';
  const name = isObj(meta) && typeof meta['name'] === 'string' ? meta['name'] : '';
  const origin = `api pod ${ns}/${name}`;
  const uid = isObj(meta) ? meta['uid'] : undefined;
  if (typeof uid !== 'string' || uid === '' || uid.length > 128) return { ok: false, error: ConfigError.invalid(origin, [fieldErr.required('metadata.uid')]) };
  if (ns === '') return { ok: false, error: ConfigError.invalid(origin, [fieldErr.required('metadata.namespace')]) };
  const spec = raw['spec'];
  const boundTo = isObj(spec) ? spec['nodeName'] : undefined;
  if (boundTo !== nodeName) return { ok: false, error: ConfigError.invalid(origin, [fieldErr.invalid('spec.nodeName', boundTo, `must be this node (${nodeName})`)]) };
  applyApiDefaults(raw as V1Pod);
  const errs = validatePod(raw as V1Pod);
  if (errs.length > 0) return { ok: false, error: ConfigError.invalid(origin, errs) };
  let pod: V1Pod;
  try {
    pod = ObjectSerializer.deserialize(raw, 'V1Pod') as V1Pod;
  } catch (e) {
    return { ok: false, error: new ConfigError('ERR_MANIFEST_PARSE', origin, `cannot decode as v1 Pod: ${e instanceof Error ? e.message : String(e)}`) };
  }
  return { ok: true, pod };
}
