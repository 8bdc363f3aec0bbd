/**
 * Builds the cluster-mode node status manager from the agent's parts: the machine's capacity,
 * addresses, nodeInfo from CRI Version, readiness from RuntimeHealth (runtime, PLEG, network)
 * and images from CRI. Kept out of agent.ts so the agent only wires.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AgentConfig } from '../agent/agent-config.js';
import type { RuntimeHealth } from '../agent/runtime-health.js';
import type { NodeRegistry } from '../apiserver/object-roles.js';
import type { Clock } from '../../shared/clock/clock.js';
import type { ImageService } from '../../shared/cri/runtime-service.js';
import type { Logger } from '../../shared/logging/logger.js';
import { nodeSystemInfo, type RuntimeVersion } from './node-info.js';
import { nodeLabels } from './node-labels.js';
import type { MachineCapacity, NodeResources } from './node-resources.js';
import { nodeImages, type NodeAddress } from './node-status.js';
import { NodeStatusManager } from './node-status-manager.js';

/** Cores, memory and the size of the filesystem holding `rootDir` (or its nearest existing parent). */
export function detectMachine(rootDir: string): MachineCapacity {
  let eph: number | undefined;
  for (let dir = path.resolve(rootDir); ; dir = path.dirname(dir)) {
    try {
      const st = fs.statfsSync(dir);
      eph = st.blocks * st.bsize;
      break;
    } catch {
      if (dir === path.dirname(dir)) break;
    }
  }
  return { cpus: os.availableParallelism(), memoryBytes: os.totalmem(), ephemeralStorageBytes: eph };
}

export interface NodeStatusWiring {
  config: AgentConfig;
  clock: Clock;
  logger: Logger;
  registry: NodeRegistry;
  resources: NodeResources;
  runtime: Pick<ImageService, 'listImages'>;
  runtimeVersion: RuntimeVersion;
  runtimeHealth: Pick<RuntimeHealth, 'errors' | 'networkErrors'>;
  /** The graceful node shutdown manager's errors (Ready turns False while the node shuts down). */
  shutdownErrors?: () => readonly string[];
  /** The InternalIP: --node-ip, else the detected address (host-addresses.ts nodeInternalIP). */
  hostIP: string;
  kubeletPort: number;
  onStatusSync?: (result: 'patched' | 'unchanged' | 'failed') => void;
  onReadyChange?: (ready: boolean) => void;
  /** The eviction manager's pressure conditions. */
  pressure?: () => readonly string[];
}

export function startNodeStatus(w: NodeStatusWiring): NodeStatusManager {
  const c = w.config;
  const addresses: NodeAddress[] = [
    { type: 'InternalIP', address: w.hostIP },
    { type: 'Hostname', address: c.nodeName },
  ];
  return new NodeStatusManager({
    registry: w.registry,
    clock: w.clock,
    logger: w.logger,
    nodeName: c.nodeName,
    labels: nodeLabels(c.nodeName, c.nodeLabels),
    taints: c.registerWithTaints,
    static: { resources: w.resources, addresses, kubeletPort: w.kubeletPort, nodeInfo: nodeSystemInfo(w.runtimeVersion) },
    readiness: () => ({
      runtimeErrors: w.runtimeHealth.errors(),
      networkErrors: w.runtimeHealth.networkErrors(),
      ...(w.pressure ? { pressure: w.pressure() } : {}),
      ...(w.shutdownErrors ? { shutdownErrors: w.shutdownErrors() } : {}),
    }),
    images: async () => nodeImages((await w.runtime.listImages(undefined, { timeoutMs: 10_000 })).map((im) => ({ repoTags: im.repoTags, repoDigests: im.repoDigests, size: Number(im.size) }))),
    updateFrequencyMs: c.nodeStatusUpdateFrequencyMs,
    reportFrequencyMs: c.nodeStatusReportFrequencyMs,
    ...(w.onStatusSync ? { onStatusSync: w.onStatusSync } : {}),
    ...(w.onReadyChange ? { onReadyChange: (ready: boolean) => w.onReadyChange!(ready) } : {}),
  });
}
