/**
 * The query of /containerLogs/{ns}/{pod}/{container} decoded and validated as the kubelet does
 * (v1.PodLogOptions through the parameter codec, then ValidatePodLogOptions): `follow`,
 * `previous`, `timestamps` (booleans), `tailLines` (≥ 0; the legacy `tail`, "all" = no limit),
 * `limitBytes` (≥ 1), `sinceSeconds` (≥ 1) or `sinceTime` (RFC 3339), not both. A query that does
 * not decode is 400 "Unable to decode query."; one that decodes but is invalid is 422.
 */

export interface LogOptions {
  readonly follow: boolean;
  readonly previous: boolean;
  readonly timestamps: boolean;
  /** Lines from the end of the current file; undefined = all. */
  readonly tailLines: number | undefined;
  readonly limitBytes: number | undefined;
  /** Wall-clock ms: lines stamped before this are skipped. Resolved from sinceSeconds at request time. */
  readonly sinceMs: number | undefined;
}

export type LogOptionsResult = { readonly ok: true; readonly options: LogOptions } | { readonly ok: false; readonly status: 400 | 422; readonly message: string };

/** Above this the numbers stop meaning anything (and would lose precision): a decode error. */
const MAX_INT = Number.MAX_SAFE_INTEGER;

function bool(v: string | null): boolean | undefined | 'bad' {
  if (v === null) return undefined;
  if (v === '' || v === 'true' || v === '1' || v === 'True' || v === 'TRUE' || v === 't' || v === 'T') return true;
  if (v === 'false' || v === '0' || v === 'False' || v === 'FALSE' || v === 'f' || v === 'F') return false;
  return 'bad';
}

function int(v: string | null): number | undefined | 'bad' {
  if (v === null) return undefined;
  if (!/^-?\d{1,16}$/.test(v)) return 'bad';
  const n = Number(v);
  return Number.isSafeInteger(n) && Math.abs(n) <= MAX_INT ? n : 'bad';
}

/** RFC 3339 (what metav1.Time decodes): date, time, optional fraction, Z or ±hh:mm. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export function parseLogOptions(q: URLSearchParams, nowMs: number): LogOptionsResult {
  const bad: LogOptionsResult = { ok: false, status: 400, message: '{"message": "Unable to decode query."}' };
  const invalid: LogOptionsResult = { ok: false, status: 422, message: '{"message": "Invalid request."}' };
  const follow = bool(q.get('follow'));
  const previous = bool(q.get('previous'));
  const timestamps = bool(q.get('timestamps'));
  // Backwards compatibility: `tail` stands for tailLines ("all" = no limit).
  const tailRaw = q.get('tail') ?? q.get('tailLines');
  const tailLines = tailRaw === 'all' ? undefined : int(tailRaw);
  const limitBytes = int(q.get('limitBytes'));
  const sinceSeconds = int(q.get('sinceSeconds'));
  const sinceTimeRaw = q.get('sinceTime');
  if (follow === 'bad' || previous === 'bad' || timestamps === 'bad' || tailLines === 'bad' || limitBytes === 'bad' || sinceSeconds === 'bad') return bad;
  let sinceTimeMs: number | undefined;
  if (sinceTimeRaw !== null) {
    if (!RFC3339.test(sinceTimeRaw)) return bad;
    sinceTimeMs = Date.parse(sinceTimeRaw);
    if (!Number.isFinite(sinceTimeMs)) return bad;
  }
  if (tailLines !== undefined && tailLines < 0) return invalid;
  if (limitBytes !== undefined && limitBytes < 1) return invalid;
  if (sinceSeconds !== undefined && sinceSeconds < 1) return invalid;
  if (sinceSeconds !== undefined && sinceTimeMs !== undefined) return invalid;
  const sinceMs = sinceSeconds !== undefined ? nowMs - sinceSeconds * 1000 : sinceTimeMs;
  return {
    ok: true,
    options: { follow: follow ?? false, previous: previous ?? false, timestamps: timestamps ?? false, tailLines, limitBytes, sinceMs },
  };
}
