/**
 * The shape of `results.json`: what one `npm run bench` run measured. Plain data shared by the
 * runner (writer), the Markdown report and the charts (readers). Units are in the field names.
 */
import type { SideBySideResult } from './side-by-side.js';
import type { ProbeDensityRound } from './probe-density.js';
import type { Summary } from './stats.js';
import type { ClusterSessionResult } from './cluster-session.js';
import type { ThreadMemoryRow } from './thread-memory.js';

export type WorkloadKind = 'burst' | 'steady' | 'churn' | 'mass-delete';

/** Which runtime served CRI: the embedded simulator (with a latency profile) or real containerd. */
export type RuntimeKind = 'sim' | 'containerd';

/** One agent configuration on one runtime. `workers` 0 means the pod loops run inline. */
export interface ConfigurationId {
  runtime: RuntimeKind;
  /** Simulator latency profile (`zero`, `containerd`), or `real` for containerd itself. */
  profile: string;
  workers: number;
  /** Containers in each pod when more than one (a sidecar-heavy shape); absent: 1. */
  containersPerPod?: number;
}

/** Where the per-pod startup latencies came from (see workloads.ts). */
export type StartupSource = 'agent-log' | 'pods-poll';

export interface WorkloadResult extends ConfigurationId {
  workload: WorkloadKind;
  /** Pods the workload acted on (burst/mass-delete: all; churn: created during the window). */
  pods: number;
  /** Pods held running at the time (the "pod count" axis). */
  podCount: number;
  /** burst/churn: pods/s to running; mass-delete: pods/s torn down; steady: null. */
  podsPerSec: number | null;
  /** podsPerSec divided by the raw-CRI ceiling's matching rate on the same runtime+profile. */
  ceilingFraction: number | null;
  startupMs: Summary | null;
  startupSource: StartupSource | null;
  /** Startup samples (ms), kept for the CDF chart; capped in size by the runner. */
  startupSamplesMs: number[];
  /** Main-thread event-loop delay over the workload window, from the agent's /metrics. */
  eventLoopDelayMs: { p50: number | null; p99: number | null; max: number | null; metric: string } | null;
  relist: RelistStats | null;
  /** Agent process CPU (all threads) over the window. */
  agentCpuSeconds: number;
  /** agentCpuSeconds / pods, in ms (null for steady). */
  cpuMsPerPod: number | null;
  /** Average agent CPU in cores over the window. */
  cpuCores: number;
  runtimeCpuSeconds: number | null;
  /** Agent VmRSS (MiB) at the end of the window, and VmHWM (peak). */
  rssMiB: number | null;
  peakRssMiB: number | null;
  /** Each thread's V8 isolate at the end of the window (shardlet_thread_heap_bytes); [] when the agent does not expose it. */
  threads?: ThreadMemoryRow[];
  /** The sim-runtime's VmRSS (MiB) at the end of the window (null: not the bench's process). */
  runtimeRssMiB?: number | null;
  /** CRI calls the runtime received in the window, per method (sim runtime only; null otherwise). */
  criCalls: Record<string, number> | null;
  /** All of criCalls over the workload's pods (null for steady or without counts). */
  criCallsPerPod: number | null;
  durationS: number;
  notes: string[];
}

export interface RelistStats {
  count: number;
  meanMs: number | null;
  /** From the histogram's buckets (linear interpolation inside a bucket). */
  p50Ms?: number | null;
  p99Ms: number | null;
  /** Main-thread ms spent handling PLEG event batches, per relist (the relist runs on the PLEG thread). */
  mainThreadMsPerRelist: number | null;
  /** That main-thread time over the PLEG thread's relist time, when the agent exposes it. */
  mainThreadShare: number | null;
  mainThreadMetric: string | null;
}

export interface CeilingResult {
  runtime: RuntimeKind;
  profile: string;
  pods: number;
  concurrency: number;
  podsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  teardownPodsPerSec: number;
  clientCpuMsPerPod: number;
  /** Containers per pod when more than one; absent: 1. */
  containersPerPod?: number;
  /**
   * The session (configLabel) that ran right after this ceiling, at the same pod count: its
   * rates are read against this ceiling. Each sim session gets one measured just before it,
   * because the machine's speed moves within minutes (2× within one quick run).
   */
  before?: string;
}

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  platform: string;
  kernel: string;
}

export interface BenchResults {
  profile: string;
  startedAt: string;
  durationS: number;
  machine: MachineInfo;
  /**
   * 1-minute load average when the run started and when it ended (os.loadavg): the bench
   * shares the machine, and a load far above the core count means noisy figures.
   */
  loadAverage1m?: { start: number; end: number };
  /** The matrix as run (for the report header). */
  matrix: { workers: number[]; podCounts: number[]; profiles: string[]; churnPodsPerSec: number; slowChurnPodsPerSec: number; steadySeconds: number; churnSeconds: number; agentArgs?: string[]; pin?: { runtime: string; agent: string } };
  workloads: WorkloadResult[];
  ceilings: CeilingResult[];
  /** Correctness failures: any entry makes the run fail (exit 1). */
  failures: string[];
  /** Sections not run, each with its reason. */
  skipped: string[];
  /** Cluster-mode sessions (pods through a private kube-apiserver), in run order. */
  cluster?: ClusterSessionResult[];
  /** The kubelet side-by-side section (side-by-side.ts), in run order. */
  sideBySide?: SideBySideResult[];
  /** The probe-density section (probe-density.ts). */
  probeDensity?: ProbeDensityRound[];
}

export function configLabel(c: ConfigurationId): string {
  const rt = c.runtime === 'sim' ? `sim/${c.profile}` : 'containerd';
  return `${rt} w=${c.workers === 0 ? '0 (inline)' : c.workers}${(c.containersPerPod ?? 1) > 1 ? ` ×${c.containersPerPod} ctr` : ''}`;
}
