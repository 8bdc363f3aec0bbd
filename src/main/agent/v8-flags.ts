/**
 * The V8 flags the agent sets for every isolate it runs (main, pod workers, PLEG, decoder):
 * set with v8.setFlagsFromString before any worker thread exists, because each isolate reads
 * them when it is created (the main thread's heap follows them from its next collection on).
 * Only flags computed here from validated config values (agent-config.ts) are ever set: never
 * text from elsewhere.
 *
 * Single-threaded GC (the default; `--parallel-gc` restores V8's own): V8's parallel scavenges
 * and concurrent marking and sweeping run on a process-wide pool of helper threads (4 by
 * default) shared by all the agent's isolates. On a node where the agent shares few cores with
 * the runtime, those helpers cost more CPU than they save in pauses: a 1,000-pod burst on 2
 * cores (w=2, sim/zero, alternating runs) took 4.57–4.94 ms of agent CPU per pod with each
 * thread collecting its own heap against 5.04–5.68 ms with the helpers, at the same or better
 * main-thread event-loop delay (README, Performance). The pod-worker and PLEG threads do not
 * serve latency-sensitive callers; the main thread's pauses stay inside the ELD target.
 *
 * Later tier-up (the default; `--lazy-jit=false` restores V8's own): each isolate compiles its
 * own optimized code, so a freshly started agent with 2 pod-worker threads optimizes the same
 * hot functions four times over (main, 2 workers, PLEG): ~3,600 TurboFan compilations in the
 * bench's first 40 s (`--trace-opt`), 3.5–3.9 s of CPU on V8's helper threads, most of it
 * during the first burst, where it is not repaid. With the tier-up budget at 4× V8's default
 * only functions that stay hot get optimized: agent CPU per pod in a 1,000-pod burst 3.8–4.4 ms
 * against 5.5–5.8 ms (w=2, single-threaded GC in both, alternating runs), relists unchanged
 * (8× and 16× measured the same as 4×; `--no-opt` was 3.7 ms but slowed the relist at 1,000
 * pods from p50 17.5 to 25 ms). The flag is V8 11's `--interrupt-budget` (Node 20); V8 12
 * replaced it with invocation counts and Maglev (Node 22, 24), where the agent leaves tiering
 * as it is (not measured).
 *
 * `--single-threaded-gc`'s implications (V8 flag-definitions.h) are spelled out too: V8
 * enforces implications only while parsing its command line at start-up, not for flags set
 * later, so each helper-using feature is turned off by name.
 */
import v8 from 'node:v8';

export interface V8FlagsConfig {
  optimizeForSize: boolean;
  /** 0 = V8's heuristic. A validated integer in [0, 1000]. */
  heapGrowingPercent: number;
  parallelGc: boolean;
  lazyJit: boolean;
}

/** V8 11's default `--interrupt-budget` (flag-definitions.h: 132 KB / 2). */
export const V8_DEFAULT_INTERRUPT_BUDGET = 67_584;
/** The tier-up budget with `lazyJit` (see above). */
export const LAZY_JIT_INTERRUPT_BUDGET = 4 * V8_DEFAULT_INTERRUPT_BUDGET;

/** V8's major version, from a `process.versions.v8` string ("11.3.244.8-node.33"). */
export function v8Major(version: string): number {
  const m = /^(\d+)\./.exec(version);
  return m === null ? 0 : Number(m[1]);
}

/** What `--single-threaded-gc` implies, by name (see above). */
export const SINGLE_THREADED_GC_FLAGS: readonly string[] = Object.freeze([
  '--single-threaded-gc',
  '--no-parallel-scavenge',
  '--no-parallel-marking',
  '--no-parallel-compaction',
  '--no-parallel-pointer-update',
  '--no-concurrent-marking',
  '--no-concurrent-sweeping',
  '--no-concurrent-array-buffer-sweeping',
]);

/** The flags for `c`, in the order they are set. */
export function agentV8Flags(c: V8FlagsConfig, v8Version: string = process.versions.v8): string[] {
  const flags: string[] = [];
  if (!c.parallelGc) flags.push(...SINGLE_THREADED_GC_FLAGS);
  if (c.lazyJit && v8Major(v8Version) === 11) flags.push(`--interrupt-budget=${LAZY_JIT_INTERRUPT_BUDGET}`);
  if (c.optimizeForSize) flags.push('--optimize-for-size');
  if (Number.isSafeInteger(c.heapGrowingPercent) && c.heapGrowingPercent > 0 && c.heapGrowingPercent <= 1000) flags.push(`--heap-growing-percent=${c.heapGrowingPercent}`);
  return flags;
}

/**
 * Sets {@link agentV8Flags} on this process. Call once, before any worker thread starts.
 * Returns what was set (logged at start).
 */
export function applyAgentV8Flags(c: V8FlagsConfig, set: (flag: string) => void = v8.setFlagsFromString, v8Version: string = process.versions.v8): string[] {
  const flags = agentV8Flags(c, v8Version);
  for (const f of flags) set(f);
  return flags;
}
