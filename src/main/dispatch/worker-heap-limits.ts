/**
 * V8 heap limits of the agent's long-lived worker threads (pod workers, the PLEG thread).
 *
 * Why a young-generation cap: V8 grows each isolate's new space (two semispaces) up to 16 MiB
 * each under allocation pressure — a burst of pod starts or a relist of thousands of pods — and
 * keeps those pages committed afterwards. With four or more isolates that is 100+ MiB of RSS
 * holding garbage between scavenges. Capping the young generation at 8 MiB (semispaces of about
 * 2.7 MiB) leaves each empty pod-worker thread at ~22 MiB of committed heap; with the main
 * thread no longer loading all of client-node it took the agent (2 threads, bench/memory-profile)
 * from 216 to 181 MiB RSS at 0 pods and from 450 to 338 MiB at 1,000 running pods (issue 15;
 * README, Performance). The cost is more frequent scavenges; each is cheap because little of a
 * pod worker's young data survives (per-call gRPC objects, decoded statuses); the PLEG's relist
 * CPU at 5,000 pods did not grow (fake runtime, in a worker: ~31 ms either way).
 *
 * The old generation is not capped: a cap would turn a dense node into an out-of-memory crash
 * of the thread instead of a larger RSS.
 */
import type { ResourceLimits } from 'node:worker_threads';

export const WORKER_HEAP_LIMITS: Readonly<ResourceLimits> = Object.freeze({ maxYoungGenerationSizeMb: 8 });
