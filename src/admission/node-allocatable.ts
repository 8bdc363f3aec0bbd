/**
 * What this node offers to pods, for admission. Detected from the machine, overridable with
 * `--node-allocatable cpu=2,memory=4Gi[,ephemeral-storage=20Gi]`.
 *
 * Detection is deliberately simple and differs from the kubelet, which subtracts
 * --kube-reserved, --system-reserved and the hard eviction threshold from capacity:
 *   cpu    = os.availableParallelism() cores (respects the process's CPU affinity)
 *   memory = os.totalmem(), nothing subtracted
 *   ephemeral-storage: not checked unless given
 * Use the flag to reserve room for the system.
 */
import os from 'node:os';
import { parseQuantity, milliValue, unitValue } from './quantity.js';
import type { NodeAllocatable } from './admit-pod.js';

/** The kubelet's default --max-pods. */
export const DEFAULT_MAX_PODS = 110;

export class AdmissionConfigError extends Error {
  override readonly name = 'AdmissionConfigError';
  readonly code = 'ERR_NODE_ALLOCATABLE_INVALID';
}

export interface MachineInfo {
  availableParallelism(): number;
  totalmem(): number;
}

export function detectNodeAllocatable(machine: MachineInfo = os): NodeAllocatable {
  return { cpuMillis: machine.availableParallelism() * 1000, memoryBytes: machine.totalmem() };
}

/** Parses `cpu=2,memory=4Gi,ephemeral-storage=20Gi` (any subset). Throws AdmissionConfigError. */
export function parseNodeAllocatableFlag(flag: string): Partial<NodeAllocatable> {
  const out: Partial<NodeAllocatable> = {};
  for (const part of flag.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq).trim();
    const raw = eq < 0 ? '' : part.slice(eq + 1).trim();
    const q = parseQuantity(raw);
    if (q === undefined || q.mantissa < 0n) {
      throw new AdmissionConfigError(`--node-allocatable: ${key}: invalid quantity ${JSON.stringify(raw)}`);
    }
    switch (key) {
      case 'cpu':
        out.cpuMillis = milliValue(q);
        break;
      case 'memory':
        out.memoryBytes = unitValue(q);
        break;
      case 'ephemeral-storage':
        out.ephemeralStorageBytes = unitValue(q);
        break;
      default:
        throw new AdmissionConfigError(`--node-allocatable: unsupported resource ${JSON.stringify(key)} (cpu, memory, ephemeral-storage)`);
    }
  }
  return out;
}

/** Detected allocatable with the flag's values (if any) on top. */
export function resolveNodeAllocatable(flag: string | undefined, machine: MachineInfo = os): NodeAllocatable {
  const detected = detectNodeAllocatable(machine);
  return flag === undefined || flag === '' ? detected : { ...detected, ...parseNodeAllocatableFlag(flag) };
}
