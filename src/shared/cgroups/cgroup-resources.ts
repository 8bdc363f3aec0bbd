/**
 * Cgroup resource settings and the kubelet's conversions (pkg/kubelet/cm/helpers_linux.go):
 * cpu shares from millicores, CFS quota over a period, the pod cgroup's config from its spec
 * (ResourceConfigForPod), and cgroup v2's cpu.weight from shares (runc's
 * ConvertCPUSharesToCgroupV2Value). Pure; no I/O.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { podQOSClass } from '../resources/pod-qos.js';
import { podLimits, podRequests } from '../resources/pod-requests.js';

export const MIN_CPU_SHARES = 2;
export const MAX_CPU_SHARES = 262144;
export const SHARES_PER_CPU = 1024;
export const CPU_QUOTA_PERIOD_US = 100_000;
export const MIN_CPU_QUOTA_US = 1000;

export function milliCPUToShares(milli: number): number {
  if (milli === 0) return MIN_CPU_SHARES;
  const shares = Math.floor((milli * SHARES_PER_CPU) / 1000);
  return Math.min(MAX_CPU_SHARES, Math.max(MIN_CPU_SHARES, shares));
}

export function milliCPUToQuota(milli: number, periodUs: number): number {
  if (milli === 0) return 0;
  return Math.max(MIN_CPU_QUOTA_US, Math.floor((milli * periodUs) / 1000));
}

/** cgroup v2 cpu.weight [1, 10000] for v1 shares [2, 262144] (runc's conversion; 0 stays unset). */
export function cpuSharesToWeight(shares: number): number {
  if (shares === 0) return 0;
  return 1 + Math.floor(((shares - 2) * 9999) / 262142);
}

/**
 * What one cgroup is given (the kubelet's ResourceConfig, cpu and memory only). An absent field
 * is left as the kernel has it (unlimited for a new cgroup).
 */
export interface ResourceConfig {
  cpuShares?: number;
  /** CFS quota in µs per `cpuPeriodUs`; -1 = unlimited. */
  cpuQuotaUs?: number;
  cpuPeriodUs?: number;
  memoryLimitBytes?: number;
}

/**
 * The kubelet's ResourceConfigForPod (enforceCPULimits on, the default 100 ms period, no memory
 * QoS): shares from the summed cpu requests; Guaranteed gets the summed cpu quota and memory limit;
 * Burstable gets each only when every container declares that limit; BestEffort gets the minimum
 * shares only. spec.overhead counts in (requests always, limits when non-zero).
 */
export function resourceConfigForPod(pod: V1Pod): ResourceConfig {
  const reqs = podRequests(pod);
  const { limits, cpuLimitsDeclared, memoryLimitsDeclared } = podLimits(pod);
  const cpuShares = milliCPUToShares(reqs.cpuMillis);
  const cpuQuotaUs = milliCPUToQuota(limits.cpuMillis, CPU_QUOTA_PERIOD_US);
  const qos = podQOSClass(pod);
  switch (qos) {
    case 'Guaranteed':
      return { cpuShares, cpuQuotaUs, cpuPeriodUs: CPU_QUOTA_PERIOD_US, memoryLimitBytes: limits.memoryBytes };
    case 'Burstable': {
      const r: ResourceConfig = { cpuShares };
      if (cpuLimitsDeclared) {
        r.cpuQuotaUs = cpuQuotaUs;
        r.cpuPeriodUs = CPU_QUOTA_PERIOD_US;
      }
      if (memoryLimitsDeclared) r.memoryLimitBytes = limits.memoryBytes;
      return r;
    }
    case 'BestEffort':
      return { cpuShares: MIN_CPU_SHARES };
    default: {
      const never: never = qos;
      return never;
    }
  }
}
