/**
 * V8 flags for every isolate the agent runs (main, pod workers, PLEG, decoder).
 *
 * Two kinds, by when V8 may take them:
 *
 * 1. Set here at run time with v8.setFlagsFromString, before any worker thread exists (each
 *    isolate reads them when it is created; the main thread's from its next use on). Only
 *    flags computed from validated config values (agent-config.ts), never text from elsewhere,
 *    and only flags V8 reads afresh each time, so flipping them on a running isolate is safe:
 *    - `--interrupt-budget` (`--lazy-jit`, the default; see LAZY_JIT_INTERRUPT_BUDGET);
 *    - `--optimize-for-size`, `--heap-growing-percent` (opt-in).
 *
 * 2. Process-start flags ({@link AGENT_NODE_FLAGS}): on the `node` command line (the `shardlet`
 *    bin's shebang, `npm start`, the README's service example and the bench pass them). The GC's
 *    threading is one: V8 sets up each heap's marking and sweeping machinery from these flags
 *    when the isolate is created, and flipping them later crashed the agent (a `Check failed:
 *    concurrent_marking_handle_` in cppgc's marker, seen once in six 1,000-pod runs with
 *    `--single-threaded-gc` set at run time), so the agent never sets them itself; it logs when
 *    it was started without them.
 *
 * Why no parallel scavenge: V8's young-generation collections (the frequent ones during a
 * burst) are split across a process-wide pool of helper threads (4 by default) shared by all
 * the agent's isolates. With 5 isolates on a node where the agent shares few cores with the
 * runtime, the helpers cost more CPU than they save. Measured on 2 cores, w=2, sim/zero,
 * alternating runs (`npm run bench -- --agent-node-arg=...`):
 *   - with every GC helper off (`--single-threaded-gc`) against V8's default, before the h2
 *     transport and the later tier-up: 4.57–4.94 against 5.04–5.68 ms of agent CPU per pod in a
 *     1,000-pod burst;
 *   - `--no-parallel-scavenge` alone against `--single-threaded-gc`: 2.38 / 3.00 against 2.46 /
 *     3.48 ms per pod at 1,000 pods; at 5,000 pods 2.90 against 2.76 ms per pod, but the main
 *     thread's event-loop delay p99 during the burst 15.7 against 39.7 ms and the steady relist
 *     p99 98.5 against 235 ms: concurrent marking and sweeping keep the old generation's pauses
 *     short on big heaps, so only the scavenge goes single-threaded.
 *
 * Why later tier-up (`--lazy-jit`): each isolate compiles its own optimized code, so a freshly
 * started agent with 2 pod-worker threads optimizes the same hot functions four times over
 * (main, 2 workers, PLEG): ~1,700 TurboFan compilations in the bench's first 40 s
 * (`--trace-opt`), 3.5–3.9 s of CPU on V8's helper threads, most of it during the first burst,
 * where it is not repaid. With the tier-up budget at 4× V8's default only functions that stay
 * hot get optimized (~600): agent CPU per pod in a 1,000-pod burst 3.8–4.4 ms against 5.5–5.8
 * ms (single-threaded GC in both, alternating runs), relists unchanged (8× and 16× measured the
 * same as 4×; `--no-opt` was 3.7 ms but slowed the relist at 1,000 pods from p50 17.5 to 25
 * ms). The flag is V8 11's (Node 20); V8 12 replaced it with invocation counts and Maglev (Node
 * 22, 24), where the agent leaves tiering as it is (not measured).
 */
import v8 from 'node:v8';

/** The `node` flags to start the agent with (see above; kind 2). */
export const AGENT_NODE_FLAGS: readonly string[] = Object.freeze(['--no-parallel-scavenge']);

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

/** The {@link AGENT_NODE_FLAGS} this process was not started with (`execArgv`: node's own flags; the last of a flag and its negation wins). */
export function missingNodeFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return AGENT_NODE_FLAGS.filter((f) => execArgv.lastIndexOf(f) < execArgv.lastIndexOf(negation(f)) || !execArgv.includes(f));
}

/** `--no-x` ↔ `--x`. */
function negation(flag: string): string {
  return flag.startsWith('--no-') ? `--${flag.slice(5)}` : `--no-${flag.slice(2)}`;
}
