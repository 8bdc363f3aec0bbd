/**
 * The benchmark matrix: which configurations run, at which pod counts, with which workloads.
 * Two frozen profiles (quick: `npm run bench`, under 3 minutes on 2 cores; full) and flags that
 * override single dimensions. Validation happens once here, with errors naming the bad flag.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';

export class BenchConfigError extends Error {
  readonly code = 'ERR_BENCH_CONFIG';
}

export type ProfileName = 'quick' | 'full';

export interface ProfileDefaults {
  workers: readonly number[];
  /** Simulator latency profile → pod counts it runs at. */
  simPods: Readonly<Record<string, readonly number[]>>;
  /** Workers run under the sim `containerd` profile (slow: fewer in quick). */
  slowProfileWorkers: readonly number[];
  steadySeconds: number;
  churnSeconds: number;
  /** Churn rate under the sim `zero` profile. */
  churnPodsPerSec: number;
  /** Churn rate under the sim `containerd` profile (~20 pods/s of CPU there for create + delete together). */
  slowChurnPodsPerSec: number;
  /** Real containerd section: pod counts and the agent configurations run there. */
  realPods: readonly number[];
  realWorkers: readonly number[];
  /** Raw-CRI ceiling concurrency: 16 suits containerd (best at 4–16); the zero profile peaks higher. */
  ceilingConcurrency: number;
  zeroCeilingConcurrency: number;
  removalTimeoutS: number;
}

export const PROFILES: Readonly<Record<ProfileName, Readonly<ProfileDefaults>>> = Object.freeze({
  quick: Object.freeze({
    workers: [0, 1, 2, 4],
    simPods: { zero: [100, 1000], containerd: [100] },
    // One configuration on the containerd-latency profile: each session there takes ~19 s.
    slowProfileWorkers: [2],
    steadySeconds: 2,
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
  }),
  full: Object.freeze({
    workers: [0, 1, 2, 4],
    simPods: { zero: [100, 500, 1000, 2000, 5000], containerd: [100, 500, 1000, 2000, 5000] },
    slowProfileWorkers: [0, 1, 2, 4],
    steadySeconds: 60,
    churnSeconds: 30,
    churnPodsPerSec: 50,
    slowChurnPodsPerSec: 5,
    realPods: [50, 100],
    realWorkers: [0, 2],
    ceilingConcurrency: 16,
    zeroCeilingConcurrency: 64,
    removalTimeoutS: 120,
  }),
});

/** One agent process lifetime: burst → steady → churn → mass delete at one pod count. */
export interface SessionPlan {
  runtime: 'sim' | 'containerd';
  profile: string;
  workers: number;
  pods: number;
}

export interface BenchConfig {
  profile: ProfileName;
  outDir: string;
  sessions: SessionPlan[];
  /** Raw-CRI ceilings to measure: one per runtime/profile/pod count used by a session. */
  ceilings: Array<Pick<SessionPlan, 'runtime' | 'profile' | 'pods'>>;
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
  keepTemp: boolean;
  /** A stand-in agent script (bench self-tests); undefined = the real `shardlet agent`. */
  agentScript: string | undefined;
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

/** `now` names the default output folder (bench-results/<timestamp>/). */
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
      'steady-seconds': { type: 'string' },
      'churn-seconds': { type: 'string' },
      'churn-rate': { type: 'string' },
      'slow-churn-rate': { type: 'string' },
      'ceiling-concurrency': { type: 'string' },
      'removal-timeout': { type: 'string' },
      'stall-timeout': { type: 'string' },
      'no-real': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      'agent-script': { type: 'string' },
    },
  });
  const profile = values.profile;
  if (profile !== 'quick' && profile !== 'full') throw new BenchConfigError(`--profile must be quick or full, got ${JSON.stringify(profile)}`);
  const d = PROFILES[profile];
  const workers = csvInts('workers', values.workers) ?? [...d.workers];
  const podsOverride = csvInts('pods', values.pods);
  const simProfiles = values['sim-profiles'] !== undefined ? values['sim-profiles'].split(',').map((s) => s.trim()).filter((s) => s !== '') : Object.keys(d.simPods);
  for (const p of simProfiles) if (p !== 'zero' && p !== 'containerd') throw new BenchConfigError(`--sim-profiles: unknown profile ${JSON.stringify(p)} (zero, containerd)`);
  if (podsOverride?.some((n) => n === 0)) throw new BenchConfigError('--pods: pod counts must be at least 1');

  const sessions: SessionPlan[] = [];
  for (const sp of simProfiles) {
    const counts = podsOverride ?? [...(d.simPods[sp] ?? [])];
    // The containerd-latency profile is slow; quick runs it on fewer configurations unless --workers says otherwise.
    const ws = sp === 'containerd' && values.workers === undefined ? [...d.slowProfileWorkers] : workers;
    for (const pods of counts) for (const w of ws) sessions.push({ runtime: 'sim', profile: sp, workers: w, pods });
  }
  const real = !values['no-real'];
  if (real) for (const pods of d.realPods) for (const w of d.realWorkers) sessions.push({ runtime: 'containerd', profile: 'real', workers: w, pods });
  const ceilingKeys = new Map<string, Pick<SessionPlan, 'runtime' | 'profile' | 'pods'>>();
  for (const s of sessions) ceilingKeys.set(`${s.runtime}|${s.profile}|${s.pods}`, { runtime: s.runtime, profile: s.profile, pods: s.pods });

  const stamp = now.toISOString().replace(/[:.]/g, '-');
  return {
    profile,
    outDir: path.resolve(values.out ?? path.join('bench-results', stamp)),
    sessions,
    ceilings: [...ceilingKeys.values()],
    workers,
    simProfiles,
    podCounts: [...new Set(sessions.map((s) => s.pods))].sort((a, b) => a - b),
    steadySeconds: positive('steady-seconds', values['steady-seconds'], d.steadySeconds),
    churnSeconds: positive('churn-seconds', values['churn-seconds'], d.churnSeconds),
    churnPodsPerSec: positive('churn-rate', values['churn-rate'], d.churnPodsPerSec),
    slowChurnPodsPerSec: positive('slow-churn-rate', values['slow-churn-rate'], d.slowChurnPodsPerSec),
    ceilingConcurrency: positive('ceiling-concurrency', values['ceiling-concurrency'], d.ceilingConcurrency),
    zeroCeilingConcurrency: positive('ceiling-concurrency', values['ceiling-concurrency'], d.zeroCeilingConcurrency),
    removalTimeoutS: positive('removal-timeout', values['removal-timeout'], d.removalTimeoutS),
    stallTimeoutS: positive('stall-timeout', values['stall-timeout'], 20),
    real,
    keepTemp: values.keep,
    agentScript: values['agent-script'] === undefined ? undefined : path.resolve(values['agent-script']),
  };
}
