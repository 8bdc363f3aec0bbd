/**
 * One measurement window around a workload: CPU of the agent (and of the sim-runtime when the
 * bench owns it), an agent /metrics scrape at each end, the agent's memory at the end.
 *
 * Ordering matters: `begin()` scrapes /metrics first (which resets the agent's event-loop
 * delay gauges, "since the previous scrape") and reads CPU after, so the scrape's own cost is
 * outside the window; `end()` reads CPU first, then scrapes.
 */
import type { Clock } from '../src/shared/clock/clock.js';
import { fetchMetricsText } from './agent-observer.js';
import { agentWindow, readCpuSeconds, readMemory, type AgentWindow } from './measure.js';
import { parsePromText, type ParsedMetrics } from './prom-text.js';
import type { RuntimeService } from '../src/shared/cri/runtime-service.js';
import { opCountsBetween, readOpCounts, type OpCounts } from './runtime-op-counts.js';
import { threadMemory, type ThreadMemoryRow } from './thread-memory.js';

export interface WindowTarget {
  clock: Clock;
  agentPid: number;
  agentPort: number;
  /** The sim-runtime's pid; null for a runtime the bench does not own (real containerd). */
  runtimePid: number | null;
  /** The runtime's CRI endpoint, for its own call counts (the sim runtime reports them). */
  cri?: Pick<RuntimeService, 'status'>;
}

export interface WindowResult extends AgentWindow {
  durationMs: number;
  agentCpuSeconds: number;
  runtimeCpuSeconds: number | null;
  rssMiB: number | null;
  peakRssMiB: number | null;
  /** Each agent thread's V8 isolate at the end (from the end scrape). */
  threads: ThreadMemoryRow[];
  /** The sim-runtime's VmRSS at the end (null when the bench does not own the runtime). */
  runtimeRssMiB: number | null;
  /** CRI calls the runtime received in the window, per method (null: the runtime does not count). */
  criCalls: OpCounts | null;
  /** Problems reading the agent's metrics (the window is still reported). */
  notes: string[];
}

export interface OpenWindow {
  end(): Promise<WindowResult>;
}

async function scrape(port: number, notes: string[]): Promise<ParsedMetrics | null> {
  try {
    return parsePromText(await fetchMetricsText(port));
  } catch (err) {
    notes.push(`metrics scrape failed: ${err instanceof Error ? err.message : String(err)}`);
    return null;
  }
}

export async function beginWindow(t: WindowTarget): Promise<OpenWindow> {
  const notes: string[] = [];
  const before = await scrape(t.agentPort, notes);
  const ops0 = t.cri ? await readOpCounts(t.cri) : null;
  const cpu0 = readCpuSeconds(t.agentPid);
  const rt0 = t.runtimePid === null ? null : readCpuSeconds(t.runtimePid);
  const t0 = t.clock.monotonic();
  return {
    async end(): Promise<WindowResult> {
      const durationMs = t.clock.monotonic() - t0;
      const agentCpuSeconds = readCpuSeconds(t.agentPid) - cpu0;
      const runtimeCpuSeconds = rt0 === null || t.runtimePid === null ? null : readCpuSeconds(t.runtimePid) - rt0;
      const mem = readMemory(t.agentPid);
      const runtimeRssMiB = t.runtimePid === null ? null : readMemory(t.runtimePid).rssMiB;
      const ops1 = ops0 && t.cri ? await readOpCounts(t.cri) : null;
      const after = await scrape(t.agentPort, notes);
      const w: AgentWindow = before && after ? agentWindow(before, after) : { eventLoopDelayMs: null, relist: null };
      if (before && after && w.eventLoopDelayMs === null) notes.push('agent /metrics has no shardlet_main_event_loop_delay_seconds');
      return { ...w, durationMs, agentCpuSeconds, runtimeCpuSeconds, rssMiB: mem.rssMiB, peakRssMiB: mem.hwmMiB, threads: after ? threadMemory(after) : [], runtimeRssMiB, criCalls: ops0 && ops1 ? opCountsBetween(ops0, ops1) : null, notes };
    },
  };
}
