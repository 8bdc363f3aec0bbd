/**
 * V8 heap limits of the agent's long-lived worker threads (pod workers, the PLEG thread).
 *
 * Why a young-generation cap: V8 grows each isolate's new space (two semispaces) up to 16 MiB
 * each under allocation pressure — a burst of pod starts or a relist of thousands of pods — and
 * keeps those pages committed afterwards. With four or more isolates that is 100+ MiB of RSS
 * holding garbage between scavenges. Capping the young generation at 8 MiB (semispaces of about
 * 2.7 MiB) measured 216 → 169 MiB RSS at 0 pods and 450 → 361 MiB at 1,000 running pods with
 * 2 threads, together with the main thread's `--max-semi-space-size=2` (issue 15; README,
 * Performance). The cost is more frequent scavenges; each is cheap because little of a pod
 * worker's young data survives (per-call gRPC objects, decoded statuses).
 *
 * The old generation is not capped: a cap would turn a dense node into an out-of-memory crash
 * of the thread instead of a larger RSS.
 */
import type { ResourceLimits } from 'node:worker_threads';

export const WORKER_HEAP_LIMITS: Readonly<ResourceLimits> = Object.freeze({ maxYoungGenerationSizeMb: 8 });
