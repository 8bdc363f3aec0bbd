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
 *  - podIPs and hostIPs merge by ip: an IP the API holds (as far as this agent knows: what it
 *    wrote last, else what the API pod showed) and the new status lacks is deleted with a
 *    `{"ip": IP, "$patch": "delete"}` element, as the kubelet's two-way merge patch does; else a
 *    new sandbox's IP would be added beside the old one (two IPs of one family: 422). Never
 *    `{"$patch": "replace"}`: the API server copies a list it does not hold yet verbatim,
 *    directive element included (seen on 1.20: "status.podIPs[1]: must be a valid IP").
 *  - a top-level field written before and no longer reported is sent as null (removed).
 * Pure.
 */
import { podConditionByKubelet } from '../../shared/kubetypes/pod-conditions.js';
import type { ApiPodStatus } from './status-normalize.js';

/** Condition fields a merge would keep when the new condition lacks them. */
const CLEARABLE_CONDITION_FIELDS = ['reason', 'message'] as const;

/** Lists whose strategic-merge strategy is "merge by key" (ip) but that the kubelet reports whole. */
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

function ipsOf(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((x) => (x as { ip?: unknown } | null)?.ip).filter((ip): ip is string => typeof ip === 'string' && ip !== '');
}

/**
 * The PATCH body's status for `status` (owned conditions only), given what was written last
 * (`sent`) and what the API is believed to hold (`base`: `sent`, else the API pod's status).
 */
export function statusPatchBody(status: ApiPodStatus, sent: ApiPodStatus | undefined, base: ApiPodStatus | undefined = sent): Record<string, unknown> {
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
    if (!Array.isArray(list)) continue;
    const now = new Set(ipsOf(list));
    const gone = ipsOf(base?.[k]).filter((ip) => !now.has(ip));
    if (gone.length > 0) body[k] = [...list, ...gone.map((ip) => ({ ip, $patch: 'delete' }))];
  }
  for (const k of Object.keys(sent ?? {})) if (!(k in body)) body[k] = null;
  return body;
}
