/**
 * The benchmark matrix: which configurations run, at which pod counts, with which workloads.
 * Two frozen profiles (quick: `npm run bench`, under 3 minutes on 2 cores; full) and flags that
 * override single dimensions. Validation happens once here, with errors naming the bad flag.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parsePin, CpuPinningError, type CpuPinning } from './cpu-pinning.js';

export class BenchConfigError extends Error {
  readonly code = 'ERR_BENCH_CONFIG';
}

export type ProfileName = 'quick' | 'full';

/** Which workloads a session runs: burst and mass delete always; steady state and churn here. */
export interface SessionWorkloads {
  steady: boolean;
  churn: boolean;
}

/** One cell of the sim matrix: a profile at a pod count, on these worker counts, with these workloads. */
export interface SimCell extends SessionWorkloads {
  profile: 'zero' | 'containerd';
  pods: number;
  workers: readonly number[];
  /** Containers in each pod (absent: 1). */
  containersPerPod?: number;
}

export interface ProfileDefaults {
  /** Worker counts the report's matrix line names (the union over the cells). */
  workers: readonly number[];
  /** The sim sessions, in run order (used as is unless --workers/--pods/--sim-profiles is given). */
  sim: readonly SimCell[];
  /** Worker counts when --pods or --sim-profiles builds the matrix and --workers does not say. */
  flagWorkers: readonly number[];
  /** Pod counts per sim profile when --workers or --sim-profiles builds the matrix and --pods does not say. */
  flagPods: Readonly<Record<string, readonly number[]>>;
  steadySeconds: number;
  churnSeconds: number;
  /** Churn rate under the sim `zero` profile. */
  churnPodsPerSec: number;
  /** Churn rate under the sim `containerd` profile (~20 pods/s of CPU there for create + delete together). */
  slowChurnPodsPerSec: number;
  /** Real containerd section: pod counts and the agent configurations run there (burst + mass delete). */
  realPods: readonly number[];
  realWorkers: readonly number[];
  /** Raw-CRI ceiling concurrency: 16 suits containerd (best at 4–16); the zero profile peaks higher. */
  ceilingConcurrency: number;
  zeroCeilingConcurrency: number;
  removalTimeoutS: number;
  /** Cluster-mode section (pods through a private kube-apiserver): pods, worker threads, and the --kube-api-qps values (0 = unthrottled). */
  clusterPods: number;
  clusterWorkers: number;
  clusterQps: readonly number[];
}

const ALL: SessionWorkloads = Object.freeze({ steady: true, churn: true });

export const PROFILES: Readonly<Record<ProfileName, Readonly<ProfileDefaults>>> = Object.freeze({
  // Sized to finish in about 6 minutes on an idle 2-core machine (a 1,000-pod session with
  // every workload takes ~40 s there; burst + steady + mass delete ~30 s): every worker count
  // at 100 pods, inline vs 2 threads at 1,000 pods, churn at both counts on 2 threads, one
  // session on the containerd-latency profile, one at 5,000 pods (memory and relist at that
  // size) and one on real containerd.
  quick: Object.freeze<ProfileDefaults>({
    workers: [0, 1, 2, 4],
    sim: [
      { profile: 'zero', pods: 100, workers: [0, 1, 4], steady: true, churn: false },
      { profile: 'zero', pods: 100, workers: [2], ...ALL },
      { profile: 'zero', pods: 1000, workers: [0], steady: true, churn: false },
      { profile: 'zero', pods: 1000, workers: [2], ...ALL },
      // One configuration on the containerd-latency profile: each session there takes ~19 s.
      { profile: 'containerd', pods: 100, workers: [2], ...ALL },
      // Memory and relist at 5,000 running pods (issue 15): burst, steady state (RSS, per-thread
      // heaps, relist p50/p99), mass delete; no churn. ~60 s on an idle 2-core machine.
      { profile: 'zero', pods: 5000, workers: [2], steady: true, churn: false },
      // A sidecar-heavy node (issue 30): 200 pods of 12 containers each, 2,400 containers —
      // burst, steady state and mass delete on 2 threads; its ceiling creates the same shape.
      { profile: 'zero', pods: 200, workers: [2], steady: true, churn: false, containersPerPod: 12 },
    ],
    flagWorkers: [0, 1, 2, 4],
    flagPods: { zero: [100, 1000], containerd: [100] },
    // 10 s: V8 gives back the heap a burst grew on its memory reducer's schedule, seconds to
    // tens of seconds after the burst; RSS at the end of a 2 s window was the burst's transient
    // (issue 15, one agent at 1,000 pods: 343 MiB as the last pods started, 255 MiB 7 s later,
    // 201 MiB after 55 s), and the peak column keeps that transient visible.
    steadySeconds: 10,
    churnSeconds: 2,
    churnPodsPerSec: 50,
    slowChurnPodsPerSec: 5,
    // Real containerd here runs ~4.5 pods/s (ceiling); N=100 + its ceiling alone would take
    // ~80 s, so quick measures N=50 and full adds N=100.
    realPods: [50],
    realWorkers: [2],
    ceilingConcurrency: 16,
    zeroCeilingConcurrency: 64,
    removalTimeoutS: 30,
    clusterPods: 1000,
    clusterWorkers: 2,
    clusterQps: [50, 0],
  }),
  full: Object.freeze<ProfileDefaults>({
    workers: [0, 1, 2, 4],
    sim: (['zero', 'containerd'] as const).flatMap((profile) => [100, 500, 1000, 2000, 5000].map((pods) => ({ profile, pods, workers: [0, 1, 2, 4], ...ALL }))),
    flagWorkers: [0, 1, 2, 4],
    flagPods: { zero: [100, 500, 1000, 2000, 5000], containerd: [100, 500, 1000, 2000, 5000] },
    steadySeconds: 60,
    churnSeconds: 30,
    churnPodsPerSec: 50,
    slowChurnPodsPerSec: 5,
    realPods: [50, 100],
    realWorkers: [0, 2],
    ceilingConcurrency: 16,
    zeroCeilingConcurrency: 64,
    removalTimeoutS: 120,
    clusterPods: 1000,
    clusterWorkers: 2,
    clusterQps: [50, 0],
  }),
});

/** One agent process lifetime: burst → steady → churn → mass delete at one pod count. */
export interface SessionPlan extends SessionWorkloads {
  runtime: 'sim' | 'containerd';
  profile: string;
  workers: number;
  pods: number;
  /** Containers in each pod (absent: 1). */
  containersPerPod?: number;
}

export interface BenchConfig {
  profile: ProfileName;
  outDir: string;
  sessions: SessionPlan[];
  /** Raw-CRI ceilings to measure: one per runtime/profile/pod count used by a session. */
  ceilings: Array<Pick<SessionPlan, 'runtime' | 'profile' | 'pods' | 'containersPerPod'>>;
  workers: number[];
  simProfiles: string[];
  podCounts: number[];
  steadySeconds: number;
  churnSeconds: number;
  churnPodsPerSec: number;
  slowChurnPodsPerSec: number;
  ceilingConcurrency: number;
  zeroCeilingConcurrency: number;
  removalTimeoutS: number;
  /** Any wait fails when no pod progressed for this long. */
  stallTimeoutS: number;
  real: boolean;
  /** The cluster-mode section: one session per --kube-api-qps value (empty: --no-cluster). */
  cluster: { pods: number; workers: number; qps: number[] } | undefined;
  keepTemp: boolean;
  /** A stand-in agent script (bench self-tests); undefined = the real `shardlet agent`. */
  agentScript: string | undefined;
  /**
   * `--agent-cpu-prof DIR`: run each agent under `node --cpu-prof`, one sub-folder per session
   * (`DIR/<session>/`, one .cpuprofile per thread); undefined = no profiling.
   */
  agentCpuProfDir: string | undefined;
  /** `--agent-arg FLAG` (repeatable): extra `shardlet agent` flags for every session (e.g. --optimize-for-size). */
  agentArgs: string[];
  /** `--agent-node-arg FLAG` (repeatable): extra `node` flags for every agent process (e.g. --max-semi-space-size=4). */
  agentNodeArgs: string[];
  /** `--pin RUNTIME:AGENT`: sim runtimes on one CPU set, agents (and the ceiling's client) on another. */
  pin: CpuPinning | undefined;
  /** The kubelet side-by-side section (kubelet-section.ts; undefined: --no-kubelet). */
  kubelet: KubeletSectionConfig | undefined;
  /** The probe-density section (probe-density.ts; undefined: --probe-pods 0). */
  probes: { pods: number; periodS: number; windowS: number } | undefined;
}

/** `--kubelet-pods N` on containerd (0: not run), `--kubelet-sim-pods N` on the sim, `--kubelet-rounds R` per agent. */
export interface KubeletSectionConfig {
  pods: number;
  simPods: number;
  simProfile: 'zero' | 'containerd';
  rounds: number;
  /** shardlet's --workers in those rounds. */
  workers: number;
}

/** Defaults of the kubelet section: 50 pods on containerd and 200 on sim/zero, 2 rounds each (quick and full). */
export const KUBELET_SECTION_DEFAULTS: Readonly<KubeletSectionConfig> = Object.freeze({ pods: 50, simPods: 200, simProfile: 'zero', rounds: 2, workers: 2 });

function nonNegativeInt(flag: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 20_000) throw new BenchConfigError(`--${flag} must be an integer in [0, 20000], got ${JSON.stringify(v)}`);
  return n;
}

function csvInts(flag: string, v: string | undefined): number[] | undefined {
  if (v === undefined) return undefined;
  const out = v.split(',').map((s) => Number(s.trim()));
  if (out.length === 0 || out.some((n) => !Number.isInteger(n) || n < 0)) throw new BenchConfigError(`--${flag} must be a comma-separated list of non-negative integers, got ${JSON.stringify(v)}`);
  return out;
}

function positive(flag: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!(n > 0)) throw new BenchConfigError(`--${flag} must be a positive number, got ${JSON.stringify(v)}`);
  return n;
}

export const BENCH_USAGE = `usage: npm run bench -- [options]
  --profile quick|full      the matrix (quick: ~6 min on 2 cores; full: every worker count,
                            100–5,000 pods, both sim profiles, 60 s steady state)
  --workers 0,1,2,4         worker threads (0 = inline); with --pods/--sim-profiles, a flag
  --pods 100,1000           rebuilds the sim matrix as a plain cross product
  --sim-profiles zero,containerd
  --containers-per-pod N    containers in each pod of the flag-built sim matrix (default 1;
                            the quick profile's sidecar-heavy session: --pods 200 --workers 2
                            --containers-per-pod 12)
  --steady-seconds S  --churn-seconds S  --churn-rate R  --slow-churn-rate R
  --ceiling-concurrency C  --removal-timeout S  --stall-timeout S
  --no-real                 skip the real-containerd section (it needs root)
  --no-cluster              skip the cluster-mode section (a private kube-apiserver; 1,000 pods
                            through the API at --kube-api-qps 50 and unthrottled, and the node
                            lease's renewal lateness during each burst, PASS/FAIL against 1 s;
                            "none due" for a burst over before the next renewal was due).
                            Only that section: --sim-profiles '' --no-real
  --no-kubelet              skip the kubelet side-by-side section (root; a kubelet v1.20.2 built
                            once from Debian source): shardlet and the kubelet in alternating
                            rounds on one runtime, a raw-CRI ceiling before and after
  --kubelet-pods N          pods per round on the private containerd (default 50; 0: none)
  --kubelet-sim-pods N      pods per round on the simulated runtime (default 200; 0: none)
  --kubelet-sim-profile P   zero|containerd (default zero)
  --kubelet-rounds R        rounds per agent (default 2: shardlet, kubelet, shardlet, kubelet)
  --probe-pods N            probe density: N pods on the sim, an exec readiness and an HTTP
                            liveness probe each, shardlet then the kubelet (default 1000; 0: none)
  --probe-period S  --probe-window S   probe period (default 10) and measured window (default 40)
  --out DIR                 output folder (default bench/results/<timestamp>/)
  --keep                    keep the agents' and runtimes' temp dirs
  --agent-cpu-prof DIR      run each agent under --cpu-prof (one .cpuprofile per thread)
  --agent-arg FLAG          an extra shardlet agent flag for every session, repeatable
                            (e.g. --agent-arg=--optimize-for-size)
  --agent-node-arg FLAG     an extra node (V8) flag for every agent process, repeatable
                            (e.g. --agent-node-arg=--v8-pool-size=1)
  --agent-script FILE       a stand-in agent script (the bench's self-tests)
  --pin RUNTIME:AGENT       CPU sets (taskset lists, e.g. 0:1 or 0-1:2-3) for the sim runtime and
                            for the agent and the ceiling's client: the thread-scaling curve
                            (e.g. --pin 0:1 --workers 0,1,2 --no-real --no-cluster). Sim sections only
`;

/** `now` names the default output folder (bench/results/<timestamp>/). */
export function parseBenchArgs(argv: readonly string[], now: Date): BenchConfig {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      profile: { type: 'string', default: 'quick' },
      out: { type: 'string' },
      workers: { type: 'string' },
      pods: { type: 'string' },
      'sim-profiles': { type: 'string' },
      'containers-per-pod': { type: 'string' },
      'steady-seconds': { type: 'string' },
      'churn-seconds': { type: 'string' },
      'churn-rate': { type: 'string' },
      'slow-churn-rate': { type: 'string' },
      'ceiling-concurrency': { type: 'string' },
      'removal-timeout': { type: 'string' },
      'stall-timeout': { type: 'string' },
      'no-real': { type: 'boolean', default: false },
      'no-cluster': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      'agent-script': { type: 'string' },
      'agent-cpu-prof': { type: 'string' },
      'agent-arg': { type: 'string', multiple: true },
      'agent-node-arg': { type: 'string', multiple: true },
      pin: { type: 'string' },
      'no-kubelet': { type: 'boolean', default: false },
      'kubelet-pods': { type: 'string' },
      'kubelet-sim-pods': { type: 'string' },
      'kubelet-sim-profile': { type: 'string' },
      'kubelet-rounds': { type: 'string' },
      'probe-pods': { type: 'string' },
      'probe-period': { type: 'string' },
      'probe-window': { type: 'string' },
    },
  });
  let pin: CpuPinning | undefined;
  try {
    pin = values.pin === undefined ? undefined : parsePin(values.pin);
  } catch (err) {
    throw err instanceof CpuPinningError ? new BenchConfigError(err.message.startsWith('--pin') ? err.message : `--pin: ${err.message}`) : err;
  }
  const agentArgs = values['agent-arg'] ?? [];
  // Flags only (no paths, no positional values): one `--flag` or `--flag=value` each.
  for (const a of agentArgs) if (!/^--[a-z0-9-]+(=[\w.,:-]+)?$/.test(a)) throw new BenchConfigError(`--agent-arg must be one --flag or --flag=value, got ${JSON.stringify(a)}`);
  const agentNodeArgs = values['agent-node-arg'] ?? [];
  for (const a of agentNodeArgs) if (!/^--[a-z0-9-]+(=[\w.,:-]+)?$/.test(a)) throw new BenchConfigError(`--agent-node-arg must be one --flag or --flag=value, got ${JSON.stringify(a)}`);
  const profile = values.profile;
  if (profile !== 'quick' && profile !== 'full') throw new BenchConfigError(`--profile must be quick or full, got ${JSON.stringify(profile)}`);
  const d = PROFILES[profile];
  const workers = csvInts('workers', values.workers) ?? [...d.flagWorkers];
  const podsOverride = csvInts('pods', values.pods);
  const simProfiles = values['sim-profiles'] !== undefined ? values['sim-profiles'].split(',').map((s) => s.trim()).filter((s) => s !== '') : Object.keys(d.flagPods);
  for (const p of simProfiles) if (p !== 'zero' && p !== 'containerd') throw new BenchConfigError(`--sim-profiles: unknown profile ${JSON.stringify(p)} (zero, containerd)`);
  if (podsOverride?.some((n) => n === 0)) throw new BenchConfigError('--pods: pod counts must be at least 1');

  const perPodFlag = values['containers-per-pod'];
  const perPod = perPodFlag === undefined ? 1 : Number(perPodFlag);
  if (!Number.isInteger(perPod) || perPod < 1 || perPod > 100) throw new BenchConfigError(`--containers-per-pod must be an integer from 1 to 100, got ${JSON.stringify(perPodFlag)}`);

  const sessions: SessionPlan[] = [];
  if (values.workers === undefined && podsOverride === undefined && values['sim-profiles'] === undefined && perPodFlag === undefined) {
    for (const c of d.sim) for (const w of c.workers) sessions.push({ runtime: 'sim', profile: c.profile, workers: w, pods: c.pods, steady: c.steady, churn: c.churn, ...(c.containersPerPod !== undefined ? { containersPerPod: c.containersPerPod } : {}) });
  } else {
    // A flag rebuilds the sim matrix as a plain cross product, every workload in every session.
    for (const sp of simProfiles) {
      for (const pods of podsOverride ?? [...(d.flagPods[sp] ?? [])]) for (const w of workers) sessions.push({ runtime: 'sim', profile: sp, workers: w, pods, ...ALL, ...(perPod > 1 ? { containersPerPod: perPod } : {}) });
    }
  }
  const real = !values['no-real'];
  if (real) for (const pods of d.realPods) for (const w of d.realWorkers) sessions.push({ runtime: 'containerd', profile: 'real', workers: w, pods, steady: false, churn: false });
  // Within one profile and pod count, sessions run in worker order (the ceiling runs first).
  const cellOrder = (x: SessionPlan): string => `${x.runtime}|${x.profile}|${x.pods}|${x.containersPerPod ?? 1}`;
  const firstSeen = [...new Set(sessions.map(cellOrder))];
  sessions.sort((a, b) => firstSeen.indexOf(cellOrder(a)) - firstSeen.indexOf(cellOrder(b)) || a.workers - b.workers);
  const ceilingKeys = new Map<string, Pick<SessionPlan, 'runtime' | 'profile' | 'pods' | 'containersPerPod'>>();
  for (const s of sessions) ceilingKeys.set(cellOrder(s), { runtime: s.runtime, profile: s.profile, pods: s.pods, ...(s.containersPerPod !== undefined ? { containersPerPod: s.containersPerPod } : {}) });

  const kd = KUBELET_SECTION_DEFAULTS;
  const kubeletSimProfile = values['kubelet-sim-profile'] ?? kd.simProfile;
  if (kubeletSimProfile !== 'zero' && kubeletSimProfile !== 'containerd') throw new BenchConfigError(`--kubelet-sim-profile must be zero or containerd, got ${JSON.stringify(kubeletSimProfile)}`);
  const kubeletRounds = nonNegativeInt('kubelet-rounds', values['kubelet-rounds'], kd.rounds);
  if (kubeletRounds < 1) throw new BenchConfigError('--kubelet-rounds must be at least 1');
  const kubelet: KubeletSectionConfig | undefined = values['no-kubelet']
    ? undefined
    : { pods: nonNegativeInt('kubelet-pods', values['kubelet-pods'], kd.pods), simPods: nonNegativeInt('kubelet-sim-pods', values['kubelet-sim-pods'], kd.simPods), simProfile: kubeletSimProfile, rounds: kubeletRounds, workers: kd.workers };

  const probePods = nonNegativeInt('probe-pods', values['probe-pods'], 1000);
  const probePeriodS = nonNegativeInt('probe-period', values['probe-period'], 10);
  if (probePeriodS < 1) throw new BenchConfigError('--probe-period must be at least 1 (seconds)');
  const probes = probePods === 0 ? undefined : { pods: probePods, periodS: probePeriodS, windowS: positive('probe-window', values['probe-window'], 40) };

  const stamp = now.toISOString().replace(/[:.]/g, '-');
  return {
    profile,
    outDir: path.resolve(values.out ?? path.join('bench', 'results', stamp)),
    sessions,
    ceilings: [...ceilingKeys.values()],
    workers: [...new Set(sessions.filter((x) => x.runtime === 'sim').map((x) => x.workers))].sort((a, b) => a - b),
    simProfiles: [...new Set(sessions.filter((x) => x.runtime === 'sim').map((x) => x.profile))],
    podCounts: [...new Set(sessions.map((s) => s.pods))].sort((a, b) => a - b),
    steadySeconds: positive('steady-seconds', values['steady-seconds'], d.steadySeconds),
    churnSeconds: positive('churn-seconds', values['churn-seconds'], d.churnSeconds),
    churnPodsPerSec: positive('churn-rate', values['churn-rate'], d.churnPodsPerSec),
    slowChurnPodsPerSec: positive('slow-churn-rate', values['slow-churn-rate'], d.slowChurnPodsPerSec),
    ceilingConcurrency: positive('ceiling-concurrency', values['ceiling-concurrency'], d.ceilingConcurrency),
    zeroCeilingConcurrency: positive('ceiling-concurrency', values['ceiling-concurrency'], d.zeroCeilingConcurrency),
    removalTimeoutS: positive('removal-timeout', values['removal-timeout'], d.removalTimeoutS),
    // No pod progressing for a minute is stuck, not slow: at 1,000 pods on a loaded 2-core box the
    // agent can take 20–30 s from admission to its first Running report (PLEG relist + sync).
    stallTimeoutS: positive('stall-timeout', values['stall-timeout'], 60),
    real,
    cluster: values['no-cluster'] ? undefined : { pods: d.clusterPods, workers: d.clusterWorkers, qps: [...d.clusterQps] },
    keepTemp: values.keep,
    agentScript: values['agent-script'] === undefined ? undefined : path.resolve(values['agent-script']),
    agentCpuProfDir: values['agent-cpu-prof'] === undefined ? undefined : path.resolve(values['agent-cpu-prof']),
    agentArgs,
    agentNodeArgs,
    pin,
    kubelet,
    probes,
  };
}
