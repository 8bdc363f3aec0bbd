/**
 * How many pod-worker threads the agent runs when `--workers` is not given: whatever is fastest
 * on the machine it runs on, judged by `os.availableParallelism()`.
 *
 * Measured (issue 15; `node dist/bench/run.js --workers 0,2 --pods 1000 --sim-profiles zero
 * --no-real --no-cluster`, 2-core VM shared with other work, eight runs on 2026-11-23, before
 * and after that changes): on 2 cores shared with the container runtime, inline pod
 * workers (0 threads) started a 1,000-pod burst at least as fast as 2 threads in every run
 * (34–53% of the raw-CRI ceiling against 12–43%; one tie) and at less agent CPU per pod in
 * five of the eight (the other three within 0.4 ms): a thread adds structured-clone message
 * passing, its own gRPC channel and caches, and no core to run on. What threads buy there is
 * a responsive main thread (event-loop delay p99 during the burst 32–139 ms against
 * 192–512 ms inline); `--workers 2` still chooses that.
 *
 * Above 2 cores the previous default stands, min(cores, 4) (not measured here: no machine with
 * more cores was available).
 */
export const INLINE_MAX_CORES = 2;
export const MAX_DEFAULT_WORKER_THREADS = 4;

export function defaultWorkerThreads(cores: number): number {
  if (!Number.isFinite(cores) || cores <= INLINE_MAX_CORES) return 0;
  return Math.min(Math.floor(cores), MAX_DEFAULT_WORKER_THREADS);
}
