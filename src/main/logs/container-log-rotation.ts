/**
 * Container log rotation, as the kubelet's ContainerLogManager does it
 * (pkg/kubelet/logs/container_log_manager.go), so a chatty container cannot fill the disk:
 * every `intervalMs`, for each running container, stat its log file (path from ContainerStatus);
 * past `maxSizeBytes`:
 *   1. drop leftovers of earlier passes (`*.tmp`; an uncompressed file whose `.gz` exists);
 *   2. remove the oldest rotated files so at most maxFiles − 2 remain;
 *   3. gzip the rotated files not yet compressed (streaming, bounded memory; `.tmp` then rename);
 *   4. rename the live file to `<path>.<YYYYMMDD-HHMMSS>` and ask the runtime to
 *      ReopenContainerLog, which opens a fresh file at the path. If that fails, the rename is
 *      undone so the next pass tries again.
 * So at most `maxFiles` files exist per container: the live one, the newest rotated one
 * uncompressed (readers following the log finish it), the rest gzipped.
 * A live file found missing (a failed reopen, a crash between the steps) is reopened.
 *
 * Beyond the kubelet (which calls ContainerStatus for every running container on every pass:
 * 1,000 calls every 10 s at 1,000 pods, the largest CRI cost of a steady node): a container's
 * log path never changes for its life, so it is learnt once per container and remembered while
 * the container is listed running. With `podLogsDir`, it is learnt without a call: the path
 * shardlet asked the runtime to write (pod-log-paths.ts, rebuilt from the container's kubelet
 * labels), taken once a stat finds the file there; a container without those labels, or whose
 * file is not there, is asked with ContainerStatus as before. (At the first pass after a burst
 * of 1,000 pods, those calls were a second of main-thread CPU.)
 *
 * Failures are logged through RotationFailureLog: a new failure at once, a repeated one at most
 * every 10 minutes per container, the rest summarized in one line per pass (a pod of thousands
 * of containers whose logs cannot be rotated must not write megabytes of errors every pass).
 *
 * One pass at a time; passes run on the injected clock. close() waits for a running pass.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import type { Clock, TimerHandle } from '../../shared/clock/clock.js';
import type { Container } from '../../shared/cri/cri-types.js';
import type { ContainerLogService, RuntimeService } from '../../shared/cri/runtime-service.js';
import { statEach } from '../../shared/fs/stat-each.js';
import { listedContainerLogPath } from '../../shared/kubetypes/pod-log-paths.js';
import type { Logger } from '../../shared/logging/logger.js';
import { RotationFailureLog } from './rotation-failure-log.js';

export interface ContainerLogRotationOptions {
  runtime: Pick<RuntimeService, 'listContainers' | 'containerStatus'> & ContainerLogService;
  clock: Clock;
  logger: Logger;
  maxSizeBytes: number;
  /** Files kept per container, the live one included (≥ 2). */
  maxFiles: number;
  intervalMs: number;
  /** --pod-logs-dir: log paths of shardlet's own containers are derived, not asked (see above). */
  podLogsDir?: string;
}

/** Go's "20060102-150405" in UTC. */
export function rotationTimestamp(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-01-02T03:04:05.678Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}

/** Log files stat'ed at once in a pass (see stat-each.ts: bounds the libuv pool threads held). */
const STAT_CONCURRENCY = 16;

const GZ = '.gz';
const TMP = '.tmp';

export class ContainerLogRotation {
  readonly #o: ContainerLogRotationOptions;
  #timer: TimerHandle | undefined;
  #pass: Promise<void> | undefined;
  #closed = false;
  /** Log path per running container id ('' = the runtime reports none); pruned every pass to the listed ones. */
  readonly #logPaths = new Map<string, string>();
  /** Failures, logged new-or-rarely and summarized per pass (rotation-failure-log.ts). */
  readonly #failures: RotationFailureLog;

  constructor(opts: ContainerLogRotationOptions) {
    if (!opts?.runtime || !opts.clock || !opts.logger) throw new TypeError('ContainerLogRotation: runtime, clock and logger are required');
    if (!(opts.maxSizeBytes > 0)) throw new RangeError(`ContainerLogRotation: maxSizeBytes must be positive, got ${opts.maxSizeBytes}`);
    if (!Number.isInteger(opts.maxFiles) || opts.maxFiles < 2) throw new RangeError(`ContainerLogRotation: maxFiles must be at least 2, got ${opts.maxFiles}`);
    this.#o = opts;
    this.#failures = new RotationFailureLog({ logger: opts.logger, monotonicMs: () => opts.clock.monotonic() });
  }

  start(): void {
    if (this.#closed || this.#timer) return;
    this.#schedule();
  }

  #schedule(): void {
    this.#timer = this.#o.clock.setTimer(this.#o.intervalMs, () => {
      this.#pass = this.rotateOnce()
        .catch((err: unknown) => this.#o.logger.error('container log rotation pass failed', { err: err instanceof Error ? err.message : String(err) }))
        .finally(() => {
          this.#pass = undefined;
          if (!this.#closed) this.#schedule();
        });
    }, { unref: true });
  }

  /**
   * One pass over every running container (exported for tests and for the timer): the log paths
   * not yet known are learnt, every live log is stat'ed (STAT_CONCURRENCY at a time: one at a
   * time, the wake-ups were most of a pass's CPU), then the few past the limit are rotated, one
   * at a time.
   */
  async rotateOnce(): Promise<void> {
    const rt = this.#o.runtime;
    const containers = await rt.listContainers({ state: { state: 'CONTAINER_RUNNING' } });
    const listed = new Set(containers.map((c) => c.id));
    for (const id of this.#logPaths.keys()) if (!listed.has(id)) this.#logPaths.delete(id);
    try {
      await this.#visit(containers);
    } finally {
      this.#failures.endPass(listed);
    }
  }

  async #visit(containers: readonly Container[]): Promise<void> {
    const rt = this.#o.runtime;
    await this.#learnLogPaths(containers.filter((c) => !this.#logPaths.has(c.id)));
    const watched: { id: string; logPath: string }[] = [];
    for (const c of containers) {
      const logPath = this.#logPaths.get(c.id);
      if (logPath) watched.push({ id: c.id, logPath });
    }
    const stats = await statEach(watched.map((w) => w.logPath), STAT_CONCURRENCY);
    for (let i = 0; i < watched.length; i++) {
      if (this.#closed) return;
      const { id, logPath } = watched[i]!;
      const st = stats[i]!;
      try {
        if (st instanceof Error) {
          if (st.code !== 'ENOENT') continue;
          // Lost the live file (a reopen that failed after the rename): get the runtime to open it again.
          await rt.reopenContainerLog(id);
          this.#failures.ok(id);
          continue;
        }
        if (st.size < this.#o.maxSizeBytes) {
          this.#failures.ok(id);
          continue;
        }
        await this.#rotate(id, logPath);
        this.#failures.ok(id);
      } catch (err) {
        this.#failures.failed(id, err);
      }
    }
  }

  /**
   * Learns each container's log path: derived when its file is there (no CRI call; the derived
   * files are stat'ed together), else ContainerStatus's ('' when the runtime reports none). A
   * container whose ContainerStatus fails is left unknown, so the next pass asks again.
   */
  async #learnLogPaths(containers: readonly Container[]): Promise<void> {
    if (containers.length === 0) return;
    const podLogsDir = this.#o.podLogsDir;
    const derived = containers.map((c) => (podLogsDir === undefined ? null : listedContainerLogPath(podLogsDir, c.labels, c.annotations)));
    const asked = derived.flatMap((p, i) => (p === null ? [] : [i]));
    const found = await statEach(asked.map((i) => derived[i]!), STAT_CONCURRENCY);
    const there = new Set(asked.filter((_, j) => !(found[j] instanceof Error)));
    for (let i = 0; i < containers.length; i++) {
      if (this.#closed) return;
      const c = containers[i]!;
      if (there.has(i)) {
        this.#logPaths.set(c.id, derived[i]!);
        continue;
      }
      // Not there (another layout, or lost), or no kubelet labels: the runtime says where it writes.
      try {
        const st = await this.#o.runtime.containerStatus(c.id);
        this.#logPaths.set(c.id, st.status?.logPath ?? '');
      } catch (err) {
        this.#failures.failed(c.id, err);
      }
    }
  }

  async #rotate(id: string, logPath: string): Promise<void> {
    const dir = path.dirname(logPath);
    const base = path.basename(logPath);
    const names = (await fs.promises.readdir(dir)).filter((n) => n.startsWith(`${base}.`)).sort();
    // 1. leftovers
    const live: string[] = [];
    for (const n of names) {
      if (n.endsWith(TMP) || (!n.endsWith(GZ) && names.includes(`${n}${GZ}`))) await fs.promises.rm(path.join(dir, n), { force: true });
      else live.push(n);
    }
    // 2. at most maxFiles − 2 rotated files stay (then +1 from this rotation, +1 live file).
    const keep = this.#o.maxFiles - 2;
    // Timestamps sort lexically; `.gz` of the same stamp sorts right after it.
    while (live.length > keep) {
      const oldest = live.shift()!;
      await fs.promises.rm(path.join(dir, oldest), { force: true });
    }
    // 3. compress what is left uncompressed
    for (const n of live) {
      if (n.endsWith(GZ)) continue;
      const src = path.join(dir, n);
      const tmp = `${src}${GZ}${TMP}`;
      await pipeline(fs.createReadStream(src), zlib.createGzip(), fs.createWriteStream(tmp, { mode: 0o640 }));
      await fs.promises.rename(tmp, `${src}${GZ}`);
      await fs.promises.rm(src, { force: true });
    }
    // 4. rotate the live file
    const rotated = `${logPath}.${rotationTimestamp(this.#o.clock.now())}`;
    await fs.promises.rename(logPath, rotated);
    try {
      await this.#o.runtime.reopenContainerLog(id);
    } catch (err) {
      await fs.promises.rename(rotated, logPath).catch(() => {});
      throw err;
    }
    this.#o.logger.v(2).info('rotated container log', { containerId: id, rotated });
  }

  /** Stops the timer and waits for a running pass. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#pass;
  }
}
