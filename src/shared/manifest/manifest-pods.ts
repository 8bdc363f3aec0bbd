/**
 * Manifest text → ready-to-run pods: decode, API defaults, validation, static-pod conventions.
 * Shared by the file and HTTP sources. All or nothing per manifest: if any pod in it is bad the
 * result is one ConfigError and no pods, so a manifest is always applied as a unit.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { ConfigError } from './config-errors.js';
import { decodeManifest } from './manifest-decode.js';
import { applyApiDefaults } from './pod-api-defaults.js';
import { validateNoEphemeralContainersOnCreate } from './ephemeral-container-validation.js';
import { validatePod } from './pod-validation.js';
import { applyStaticPodConventions } from './static-pod.js';
import type { SourceName } from './pod-update.js';
import { fieldErr } from './field-error.js';
import { truncateText } from '../logging/bounded-text.js';

export interface ManifestContext {
  source: SourceName;
  origin: string;
  nodeName: string;
  allowLists: boolean;
}

export type ManifestResult = { ok: true; pods: V1Pod[] } | { ok: false; error: ConfigError };

/** The detail of an error no check anticipated (a bug): the fuzz test asserts it never occurs. */
export const INTERNAL_DECODE_ERROR = 'internal error while decoding the manifest';

/** Never throws: an unexpected exception becomes an ERR_MANIFEST_PARSE naming the origin. */
export function podsFromManifest(text: string, ctx: ManifestContext): ManifestResult {
  try {
    return podsFromManifestUnguarded(text, ctx);
  } catch (e) {
    const why = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    return { ok: false, error: new ConfigError('ERR_MANIFEST_PARSE', ctx.origin, `${INTERNAL_DECODE_ERROR}: ${truncateText(why)}`) };
  }
}

function podsFromManifestUnguarded(text: string, ctx: ManifestContext): ManifestResult {
  const decoded = decodeManifest(text, { origin: ctx.origin, allowLists: ctx.allowLists });
  if (!decoded.ok) return decoded;
  const pods: V1Pod[] = [];
  const seen = new Map<string, number>();
  const multi = decoded.pods.length > 1;
  for (const [idx, d] of decoded.pods.entries()) {
    const prefix = d.item !== undefined ? `items[${d.item}].` : multi ? `document ${d.document}: ` : '';
    const pod = d.pod;
    applyApiDefaults(pod);
    const errs = [...validatePod(pod, { nameSuffix: `-${ctx.nodeName}` }), ...validateNoEphemeralContainersOnCreate(pod)];
    if (errs.length > 0) return { ok: false, error: ConfigError.invalid(ctx.origin, errs.map((e) => ({ ...e, field: prefix + e.field }))) };
    applyStaticPodConventions(pod, { source: ctx.source, origin: ctx.origin, nodeName: ctx.nodeName });
    const key = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
    const first = seen.get(key);
    if (first !== undefined) {
      const err = fieldErr.duplicate(`${prefix}metadata.name`, pod.metadata?.name ?? '');
      return { ok: false, error: new ConfigError('ERR_MANIFEST_DUPLICATE', ctx.origin, `${err.field}: Duplicate value: "${String(err.value)}": pod ${key} is already defined by pod #${first + 1} of this manifest`, [err]) };
    }
    seen.set(key, idx);
    pods.push(pod);
  }
  return { ok: true, pods };
}
