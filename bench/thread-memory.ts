/**
 * Per-thread memory from one agent /metrics scrape: `shardlet_thread_heap_bytes{thread, role,
 * kind}` (src/shared/metrics/thread-heap.ts) turned into one row per thread, in MiB. Pure.
 */
import type { ParsedMetrics } from './prom-text.js';

export const THREAD_HEAP_METRIC = 'shardlet_thread_heap_bytes';

export interface ThreadMemoryRow {
  /** worker_threads threadId ("0" = main), or "pleg". */
  thread: string;
  role: string;
  committedMiB: number | null;
  usedMiB: number | null;
  externalMiB: number | null;
}

const MIB = 1024 * 1024;

/** Rows ordered main, pleg, then pod workers by thread id. */
export function threadMemory(m: ParsedMetrics): ThreadMemoryRow[] {
  const rows = new Map<string, ThreadMemoryRow>();
  for (const s of m.samples) {
    if (s.name !== THREAD_HEAP_METRIC) continue;
    const thread = s.labels['thread'] ?? '';
    const role = s.labels['role'] ?? '';
    const key = `${role}|${thread}`;
    let row = rows.get(key);
    if (row === undefined) rows.set(key, (row = { thread, role, committedMiB: null, usedMiB: null, externalMiB: null }));
    const v = s.value / MIB;
    switch (s.labels['kind']) {
      case 'committed':
        row.committedMiB = v;
        break;
      case 'used':
        row.usedMiB = v;
        break;
      case 'external':
        row.externalMiB = v;
        break;
      default:
        break;
    }
  }
  const order = (r: ThreadMemoryRow): number => (r.role === 'main' ? 0 : r.role === 'pleg' ? 1 : 2);
  return [...rows.values()].sort((a, b) => order(a) - order(b) || Number(a.thread) - Number(b.thread));
}

/** Sum of one field over the rows (null when no row has it). */
export function totalMiB(rows: readonly ThreadMemoryRow[], field: 'committedMiB' | 'usedMiB' | 'externalMiB'): number | null {
  const vals = rows.map((r) => r[field]).filter((v): v is number => v !== null);
  return vals.length === 0 ? null : vals.reduce((a, b) => a + b, 0);
}
