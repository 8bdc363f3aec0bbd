/**
 * Node memory when the runtime is the simulated one: its containers use no real memory, so the
 * node's working set is what the runtime reports for them (Σ ContainerStats working sets of
 * the running containers) and available = the machine's memory − that. Everything else (CPU)
 * is the host's. This is what lets tests and the bench create memory pressure
 * deterministically (sim.shardlet.io/memory-working-set-bytes, SimulatedRuntime
 * .setContainerUsage); on a real runtime the root cgroup is read (stats-node.ts).
 */
import type { RuntimeService } from '../../shared/cri/runtime-service.js';
import type { NodeStats, NodeStatsReader } from '../server/stats-node.js';

export function simulatedNodeMemory(host: NodeStatsReader, runtime: Pick<RuntimeService, 'listContainerStats'>, capacityBytes: number): NodeStatsReader {
  return {
    async read(): Promise<NodeStats> {
      const [h, stats] = await Promise.all([host.read(), runtime.listContainerStats()]);
      let ws = 0;
      for (const c of stats) {
        const n = Number(c.memory?.workingSetBytes?.value ?? 0);
        if (Number.isFinite(n) && n > 0) ws += n;
      }
      ws = Math.min(ws, capacityBytes);
      return { cpuUsageCoreSeconds: h.cpuUsageCoreSeconds, memoryUsageBytes: ws, memoryWorkingSetBytes: ws, memoryAvailableBytes: capacityBytes - ws };
    },
  };
}
