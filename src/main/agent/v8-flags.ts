/**
 * V8 flags the agent sets for every isolate it runs (main, pod workers, PLEG, decoder), with
 * v8.setFlagsFromString before any worker thread exists (each isolate reads them when it is
 * created; the main thread's from its next use on). Only flags computed from validated config
 * values (agent-config.ts), never text from elsewhere, and only flags V8 reads afresh each time,
 * so setting them on a running isolate is safe:
 *   - `--interrupt-budget` (`--lazy-jit`, the default; see LAZY_JIT_INTERRUPT_BUDGET);
 *   - `--optimize-for-size`, `--heap-growing-percent` (opt-in).
 *
 * Why later tier-up (`--lazy-jit`): each isolate compiles its own optimized code, so a freshly
 * started agent with 2 pod-worker threads optimizes the same hot functions four times over
 * (main, 2 workers, PLEG): ~1,700 TurboFan compilations in the bench's first 40 s
 * (`--trace-opt`), 3.5–3.9 s of CPU on V8's helper threads, most of it during the first burst,
 * where it is not repaid. With the tier-up budget at 4× V8's default only functions that stay
 * hot get optimized (~600). Agent CPU per pod in a 1,000-pod burst (2 cores, w=2, sim/zero,
 * alternating runs): 2.48 / 2.88 ms against 4.20 / 4.10 ms without it (h2 CRI transport in
 * both; before that transport 3.8–4.4 against 5.5–5.8 ms), relists unchanged. 8× and 16×
 * measured the same as 4×; `--no-opt` was about as cheap in a burst but slowed the relist at
 * 1,000 pods from p50 17.5 to 25 ms. The flag is V8 11's (Node 20); V8 12 replaced it with
 * invocation counts and Maglev (Node 22, 24), where the agent leaves tiering as it is (not
 * measured).
 *
 * Tried and not kept: the GC's threading. With grpc-js' per-call garbage, `--single-threaded-gc`
 * cut burst CPU per pod by 10–13% (4.57–4.94 against 5.04–5.68 ms), but with the h2 transport
 * `--no-parallel-scavenge` saved only 4–6% (2.48 / 2.88 against 2.63 / 3.00 ms) while the main
 * thread's event-loop delay p99 in the burst rose from 6.3 / 7.6 to 12.9 / 10.0 ms, and
 * `--single-threaded-gc` at 5,000 pods raised it to 39.7 ms. These are process-start flags only:
 * V8 sets a heap's marking and sweeping machinery up from them when the isolate is created, and
 * setting `--single-threaded-gc` on the running agent crashed it once in six runs (`Check failed:
 * concurrent_marking_handle_` in cppgc's marker). The agent never sets GC-threading flags.
 */
import v8 from 'node:v8';

export interface V8FlagsConfig {
  optimizeForSize: boolean;
  /** 0 = V8's heuristic. A validated integer in [0, 1000]. */
  heapGrowingPercent: number;
  lazyJit: boolean;
}

/** V8 11's default `--interrupt-budget` (flag-definitions.h: 132 KB / 2). */
export const V8_DEFAULT_INTERRUPT_BUDGET = 67_584;
/** The tier-up budget with `lazyJit` (see above). */
export const LAZY_JIT_INTERRUPT_BUDGET = 4 * V8_DEFAULT_INTERRUPT_BUDGET;

/** V8's major version, from a `process.versions.v8` string ("11.3.244.8-node.33"); 0 if unreadable. */
export function v8Major(version: string): number {
  const m = /^(\d+)\./.exec(version);
  return m === null ? 0 : Number(m[1]);
}

/** The run-time flags for `c` on V8 `v8Version`, in the order they are set. */
export function agentV8Flags(c: V8FlagsConfig, v8Version: string = process.versions.v8): string[] {
  const flags: string[] = [];
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
