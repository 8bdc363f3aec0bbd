/**
 * How the bench sees pods through the agent's eyes:
 *   - `RunningLog` reads the agent's JSON stderr lines and records, per pod UID, the first
 *     `{"msg":"pod running", "podUID", "seenToRunningMs"}` line (the agent's own
 *     manifest-seen → Running latency) and the bench time the line arrived;
 *   - `fetchPods` reads /pods (a v1 PodList) into per-UID phase and container readiness, the
 *     fallback latency source and the agent half of the correctness check.
 * `parseRunningLine` and `summarizePodList` are pure.
 */

export interface RunningEvent {
  podUID: string;
  pod: string;
  /** The agent's manifest-seen → Running latency (ms), when the line carries it. */
  seenToRunningMs: number | null;
  /** Bench monotonic ms the line arrived. */
  atMs: number;
}

/** The `pod running` line's fields, or null for any other line (including non-JSON). */
export function parseRunningLine(line: string): Omit<RunningEvent, 'atMs'> | null {
  if (!line.includes('pod running')) return null;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (o['msg'] !== 'pod running' || typeof o['podUID'] !== 'string') return null;
  const ms = o['seenToRunningMs'];
  return { podUID: o['podUID'], pod: typeof o['pod'] === 'string' ? o['pod'] : '', seenToRunningMs: typeof ms === 'number' && Number.isFinite(ms) ? ms : null };
}

/** First `pod running` event per UID. A UID logged twice is counted in `repeats` (a restart or a bug). */
export class RunningLog {
  readonly #first = new Map<string, RunningEvent>();
  readonly #now: () => number;
  repeats = 0;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Feed one stderr line. */
  onLine = (line: string): void => {
    const ev = parseRunningLine(line);
    if (!ev) return;
    if (this.#first.has(ev.podUID)) this.repeats++;
    else this.#first.set(ev.podUID, { ...ev, atMs: this.#now() });
  };

  get(uid: string): RunningEvent | undefined {
    return this.#first.get(uid);
  }

  get size(): number {
    return this.#first.size;
  }
}

export interface AgentPodView {
  uid: string;
  name: string;
  namespace: string;
  phase: string;
  /** Every container status reports state.running. */
  allRunning: boolean;
  containers: number;
}

/** Per-UID view of a v1 PodList body; throws on a body that is not a PodList. */
export function summarizePodList(body: unknown): AgentPodView[] {
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { items?: unknown }).items)) {
    throw new TypeError('agent /pods did not return a PodList (no items array)');
  }
  const out: AgentPodView[] = [];
  for (const item of (body as { items: unknown[] }).items) {
    const p = item as { metadata?: { uid?: string; name?: string; namespace?: string }; status?: { phase?: string; containerStatuses?: Array<{ state?: { running?: unknown } }> } };
    const cs = p.status?.containerStatuses ?? [];
    out.push({
      uid: p.metadata?.uid ?? '',
      name: p.metadata?.name ?? '',
      namespace: p.metadata?.namespace ?? '',
      phase: p.status?.phase ?? '',
      allRunning: cs.length > 0 && cs.every((c) => c.state?.running !== undefined && c.state.running !== null),
      containers: cs.length,
    });
  }
  return out;
}

export async function fetchPods(port: number, timeoutMs = 10_000): Promise<AgentPodView[]> {
  const res = await fetch(`http://127.0.0.1:${port}/pods`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) throw new Error(`agent /pods answered HTTP ${res.status}`);
  return summarizePodList(await res.json());
}

export async function fetchMetricsText(port: number, timeoutMs = 10_000): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) throw new Error(`agent /metrics answered HTTP ${res.status}`);
  return res.text();
}
