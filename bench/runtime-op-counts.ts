/**
 * The simulated runtime's own per-method call counts (Status verbose info, see
 * src/simruntime/sim-server.ts SIM_OP_COUNTS_INFO_KEY), read at both ends of a workload window:
 * how many CRI calls the agent made per started pod, counted where they land rather than by the
 * agent's own instrumentation. Real containerd has no such counts (null).
 */
import type { RuntimeService } from '../src/shared/cri/runtime-service.js';
import { SIM_OP_COUNTS_INFO_KEY } from '../src/simruntime/sim-server.js';

export type OpCounts = Record<string, number>;

/** The runtime's counts, or null when it does not report them (or the call failed). */
export async function readOpCounts(cri: Pick<RuntimeService, 'status'>): Promise<OpCounts | null> {
  try {
    const res = await cri.status({ verbose: true, timeoutMs: 10_000 });
    const raw = res.info[SIM_OP_COUNTS_INFO_KEY];
    if (raw === undefined) return null;
    const parsed: unknown = JSON.parse(raw);
    if (parsed === null || typeof parsed !== 'object') return null;
    const out: OpCounts = {};
    for (const [k, v] of Object.entries(parsed)) if (typeof v === 'number' && Number.isFinite(v)) out[k] = v;
    return out;
  } catch {
    return null;
  }
}

/**
 * Calls made between two readings, per method, without the one Status call that took the
 * `after` reading (the bench's own; the `before` reading's call is counted in `before`).
 */
export function opCountsBetween(before: OpCounts, after: OpCounts): OpCounts {
  const out: OpCounts = {};
  for (const [m, n] of Object.entries(after)) {
    const d = n - (before[m] ?? 0) - (m === 'Status' ? 1 : 0);
    if (d > 0) out[m] = d;
  }
  return out;
}

export function totalCalls(c: OpCounts): number {
  let t = 0;
  for (const n of Object.values(c)) t += n;
  return t;
}
