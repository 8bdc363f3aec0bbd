/**
 * What a pod status PATCH (strategic merge, pods/NAME/status) carries, from a status in API form
 * (status-normalize.ts). The kubelet sends a two-way merge patch computed against the pod it just
 * read; shardlet writes without reading first, so the patch itself must say everything a merge
 * would otherwise keep:
 *  - conditions merge by type: only the kubelet's own are sent (pod-conditions.ts). Readiness
 *    gates and other clients' conditions are left exactly as the API holds them (a pod worker's
 *    copy may be older than what another client just wrote). An owned condition's `reason` and
 *    `message`, when the new status has none, are sent as null: a merge keeps the fields a patch
 *    does not name, so a Ready that turned True would otherwise keep its old
 *    ContainersNotReady reason and message.
 *  - podIPs and hostIPs merge by ip: they are replaced whole (`{"$patch": "replace"}`), else a
 *    new sandbox's IP would be added beside the old one (and two IPs of one family are invalid).
 *  - a top-level field written before and no longer reported is sent as null (removed).
 * Pure.
 */
import { podConditionByKubelet } from '../../shared/kubetypes/pod-conditions.js';
import type { ApiPodStatus } from './status-normalize.js';

/** Condition fields a merge would keep when the new condition lacks them. */
const CLEARABLE_CONDITION_FIELDS = ['reason', 'message'] as const;

/** Lists whose strategic-merge strategy is "merge by key" but that the kubelet reports whole. */
const REPLACED_LISTS = ['podIPs', 'hostIPs'] as const;

function conditionType(c: unknown): string | undefined {
  const t = (c as { type?: unknown } | null)?.type;
  return typeof t === 'string' ? t : undefined;
}

/** `status` with only the conditions the kubelet owns (what it writes and compares). */
export function withOwnedConditions(status: ApiPodStatus): ApiPodStatus {
  const conditions = status['conditions'];
  if (!Array.isArray(conditions)) return status;
  const owned = conditions.filter((c) => {
    const t = conditionType(c);
    return t !== undefined && podConditionByKubelet(t);
  });
  if (owned.length === conditions.length) return status;
  const out: Record<string, unknown> = { ...status };
  if (owned.length > 0) out['conditions'] = owned;
  else delete out['conditions'];
  return out;
}

/** The PATCH body's status for `status` (owned conditions only), given what was written last. */
export function statusPatchBody(status: ApiPodStatus, sent: ApiPodStatus | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = { ...withOwnedConditions(status) };
  const conditions = body['conditions'];
  if (Array.isArray(conditions)) {
    body['conditions'] = conditions.map((c: Record<string, unknown>) => {
      const out: Record<string, unknown> = { ...c };
      for (const f of CLEARABLE_CONDITION_FIELDS) if (!(f in out)) out[f] = null;
      return out;
    });
  }
  for (const k of REPLACED_LISTS) {
    const list = body[k];
    if (Array.isArray(list)) body[k] = [...list, { $patch: 'replace' }];
  }
  for (const k of Object.keys(sent ?? {})) if (!(k in body)) body[k] = null;
  return body;
}
