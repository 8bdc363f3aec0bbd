/**
 * How many pod-worker threads the agent runs when `--workers` is not given.
 *
 * Policy: min(cores, 4) threads, at least 1 — never inline by default. Inline pod workers
 * (`--workers 0`) are the fastest burst on 2 cores, but only just, and they cost the main
 * thread its responsiveness, which the node lease, the status writer and the kubelet API share:
 *
 *   `node dist/bench/run.js --workers 0,1,2 --pods 1000 --sim-profiles zero --no-real
 *   --no-cluster` on the 2-core VM, quiet (load 0.7), 2026-11-23 08:13, one run:
 *     inline     222.7 pods/s (40% of ceiling), 5.08 ms CPU/pod, main-thread ELD p99 297 ms
 *     1 thread   214.5 pods/s (39%),            4.91 ms,           ELD p99 8.8 ms
 *     2 threads  205.9 pods/s (37%),            5.51 ms,           ELD p99 11.8 ms
 *   Eight earlier runs under load (08:00, other work running): inline at least as fast as
 *   2 threads in every run (34–53% of the ceiling against 12–43%), ELD p99 192–512 ms inline
 *   against 32–139 ms.
 *
 * A 4–8% burst gain does not pay for a main thread that stalls 0.3 s (a late lease renewal, a
 * slow /healthz), nor for losing the thread boundary that keeps a pod's failure off the main
 * thread; the operator who wants the last percent on a small node sets `--workers 0`. Above 2
 * cores threads also add CPU; 4 is where the main thread (one dispatcher, one sync loop) and
 * the PLEG thread stop keeping up with more shards (not measured: no machine with more cores).
 */
export const MAX_DEFAULT_WORKER_THREADS = 4;

export function defaultWorkerThreads(cores: number): number {
  if (!Number.isFinite(cores) || cores < 1) return 1;
  return Math.min(Math.max(Math.floor(cores), 1), MAX_DEFAULT_WORKER_THREADS);
}
