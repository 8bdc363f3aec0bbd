/**
 * The node's capacity and allocatable (the kubelet's cm.GetNodeAllocatableReservation and
 * setters.MachineInfo), and the allocatable admission uses: the one computation both the Node
 * status and pod admission read, so what the scheduler sees is what the agent admits against.
 *
 *   capacity:    cpu = cores, memory = total memory, ephemeral-storage = size of the filesystem
 *                holding --root-dir, pods = --max-pods
 *   allocatable: capacity − --kube-reserved − --system-reserved (per resource, floored at 0);
 *                then --node-allocatable (shardlet's flag) replaces a resource outright.
 *                No hard-eviction threshold is subtracted: shardlet does no eviction.
 *
 * Quantities are formatted as the kubelet does: cpu in cores ("2") or millicores ("1500m"),
 * memory and storage in Ki when divisible, else bytes; pods as an integer.
 */
import { milliValue, parseQuantity, unitValue } from '../../shared/resources/quantity.js';
import type { NodeAllocatable } from '../admission/admit-pod.js';

export class NodeResourcesError extends Error {
  override readonly name = 'NodeResourcesError';
  readonly code = 'ERR_NODE_RESOURCES';
}

export interface MachineCapacity {
  cpus: number;
  memoryBytes: number;
  /** Size of the filesystem of --root-dir; undefined when it could not be read. */
  ephemeralStorageBytes: number | undefined;
}

export interface NodeResourceFlags {
  maxPods: number;
  systemReserved: Readonly<Record<string, string>>;
  kubeReserved: Readonly<Record<string, string>>;
  /** --node-allocatable overrides (cpu, memory, ephemeral-storage). */
  allocatableOverride: Readonly<Record<string, string>>;
}

export interface NodeResources {
  /** API form (v1.ResourceList). */
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  /** The same allocatable, for admission. */
  admission: NodeAllocatable;
}

const RESOURCES = ['cpu', 'memory', 'ephemeral-storage'] as const;
type Res = (typeof RESOURCES)[number];

/** A reservation/override value in the resource's base unit (millicores for cpu, bytes otherwise). */
function amountOf(where: string, res: string, raw: string): number {
  if (!(RESOURCES as readonly string[]).includes(res)) throw new NodeResourcesError(`${where}: unsupported resource ${JSON.stringify(res)} (cpu, memory, ephemeral-storage)`);
  const q = parseQuantity(raw);
  if (q === undefined || q.mantissa < 0n) throw new NodeResourcesError(`${where}: ${res}: invalid quantity ${JSON.stringify(raw)}`);
  return res === 'cpu' ? milliValue(q) : unitValue(q);
}

function formatCpu(millis: number): string {
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

function formatBytes(bytes: number): string {
  return bytes % 1024 === 0 && bytes > 0 ? `${bytes / 1024}Ki` : String(bytes);
}

/** Throws NodeResourcesError naming the flag for an unknown resource or a bad quantity. */
export function computeNodeResources(machine: MachineCapacity, flags: NodeResourceFlags): NodeResources {
  const cap: Record<Res, number | undefined> = {
    cpu: Math.max(0, Math.floor(machine.cpus)) * 1000,
    memory: Math.max(0, Math.floor(machine.memoryBytes)),
    'ephemeral-storage': machine.ephemeralStorageBytes === undefined ? undefined : Math.max(0, Math.floor(machine.ephemeralStorageBytes)),
  };
  const alloc: Record<Res, number | undefined> = { ...cap };
  for (const [flag, reserved] of [['--kube-reserved', flags.kubeReserved], ['--system-reserved', flags.systemReserved]] as const) {
    for (const [res, raw] of Object.entries(reserved)) {
      const amount = amountOf(flag, res, raw);
      const r = res as Res;
      const cur = alloc[r];
      if (cur !== undefined) alloc[r] = Math.max(0, cur - amount);
    }
  }
  for (const [res, raw] of Object.entries(flags.allocatableOverride)) {
    if (res === 'pods') continue; // pods is --max-pods
    alloc[res as Res] = amountOf('--node-allocatable', res, raw);
  }
  const fmt = (r: Res, v: number): string => (r === 'cpu' ? formatCpu(v) : formatBytes(v));
  const capacity: Record<string, string> = {};
  const allocatable: Record<string, string> = {};
  for (const r of RESOURCES) {
    const c = cap[r];
    const a = alloc[r];
    if (c !== undefined) capacity[r] = fmt(r, c);
    if (a !== undefined) allocatable[r] = fmt(r, a);
  }
  capacity['pods'] = String(flags.maxPods);
  allocatable['pods'] = String(flags.maxPods);
  const eph = alloc['ephemeral-storage'];
  return {
    capacity,
    allocatable,
    admission: { cpuMillis: alloc.cpu ?? 0, memoryBytes: alloc.memory ?? 0, ...(eph !== undefined && flags.allocatableOverride['ephemeral-storage'] !== undefined ? { ephemeralStorageBytes: eph } : {}) },
  };
}
