/**
 * The raw-CRI ceiling: how fast a runtime can create and tear down pods when nothing but a bare
 * gRPC client drives it. Every agent throughput is read as a fraction of this number.
 *
 * Create phase: per pod RunPodSandbox → CreateContainer → StartContainer (busybox
 * `sleep 100000`, pod network unless hostNetwork), `concurrency` pods in flight. Teardown phase,
 * measured separately: per pod StopContainer(timeout 0) → StopPodSandbox → RemovePodSandbox.
 * Per-pod latency is the wall time of one pod's three (or three teardown) calls; throughput is
 * pods / phase wall time; client CPU is this process's user+system CPU over the phase / pods.
 *
 * Nothing else is called during a phase (no status polls, no lists), so the figure is the
 * runtime's, not an agent's. Failed pods are counted (and torn down as far as they got); they
 * never abort the run.
 *
 * CLI: see ceiling-cli.ts. In-process: `runCeiling(opts)` (the density suite uses it).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { realClock, type Clock } from '../src/shared/clock/clock.js';
import { CriClient } from '../src/shared/cri/cri-client.js';
import { mapSettled } from '../test/harness/bounded-concurrency.js';
import { CEILING_DEFAULTS, CEILING_USAGE, CeilingUsageError, formatCeilingResult, parseCeilingArgs } from './ceiling-cli.js';
import { ceilingPodSpec, type CeilingPodSpec } from './ceiling-pod-specs.js';
import { percentile } from './stats.js';

export interface CeilingOptions {
  /** `unix:///…` CRI endpoint. */
  readonly endpoint: string;
  readonly pods: number;
  /** Pods in flight at once, in each phase. */
  readonly concurrency: number;
  /** Default `docker.io/local/busybox:1`; pulled first when the runtime lacks it. */
  readonly image?: string;
  /** Default false: pod network (CNI on containerd). */
  readonly hostNetwork?: boolean;
  /** Containers per pod (default 1), each created and started in turn, as an agent would. */
  readonly containersPerPod?: number;
  /** Injected for tests; monotonic() times the phases. */
  readonly clock?: Clock;
}

export interface CeilingResult {
  readonly endpoint: string;
  readonly runtimeName: string;
  readonly runtimeVersion: string;
  readonly pods: number;
  readonly concurrency: number;
  readonly hostNetwork: boolean;
  readonly image: string;
  /** Pods started per second over the create phase. */
  readonly podsPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly createWallMs: number;
  readonly teardownPodsPerSec: number;
  readonly teardownP50Ms: number;
  readonly teardownP99Ms: number;
  readonly teardownWallMs: number;
  /** This process's CPU (user+system) per pod, create phase. */
  readonly clientCpuMsPerPod: number;
  readonly teardownClientCpuMsPerPod: number;
  /** Pods that failed in either phase. */
  readonly errors: number;
  readonly firstError?: string;
}

interface PodOutcome {
  sandboxId?: string;
  containerIds: string[];
  createMs?: number;
  teardownMs?: number;
}

const cpuMs = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000;

function validate(opts: CeilingOptions): void {
  if (!Number.isInteger(opts.pods) || opts.pods < 1) throw new RangeError(`runCeiling: pods must be a positive integer, got ${opts.pods}`);
  if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1) throw new RangeError(`runCeiling: concurrency must be a positive integer, got ${opts.concurrency}`);
  if (!opts.endpoint) throw new RangeError('runCeiling: endpoint is required');
  const n = opts.containersPerPod ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new RangeError(`runCeiling: containersPerPod must be an integer in 1..1000, got ${n}`);
}

async function ensureImage(client: CriClient, image: string): Promise<void> {
  const st = await client.imageStatus({ image });
  if (st.image === null) await client.pullImage({ image: { image } });
}

export async function runCeiling(opts: CeilingOptions): Promise<CeilingResult> {
  validate(opts);
  const clock = opts.clock ?? realClock;
  const image = opts.image ?? CEILING_DEFAULTS.image;
  const hostNetwork = opts.hostNetwork ?? CEILING_DEFAULTS.hostNetwork;
  const client = new CriClient({ endpoint: opts.endpoint });
  const logDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-ceiling-logs-'));
  const runId = crypto.randomBytes(3).toString('hex');
  let firstError: string | undefined;
  let failedPods = 0;
  const fail = (err: unknown): void => {
    failedPods += 1;
    firstError ??= err instanceof Error ? err.message : String(err);
  };
  try {
    const version = await client.version();
    await ensureImage(client, image);
    const specs: CeilingPodSpec[] = Array.from({ length: opts.pods }, (_, i) => ceilingPodSpec({ name: `ceil-${runId}-${i}`, image, hostNetwork, logDirectory, containers: opts.containersPerPod ?? 1 }));
    const outcomes: PodOutcome[] = specs.map(() => ({ containerIds: [] }));

    // ---- create phase
    const cpu0 = process.cpuUsage();
    const t0 = clock.monotonic();
    const created = await mapSettled(specs, opts.concurrency, async (spec, i) => {
      const o = outcomes[i] as PodOutcome;
      const start = clock.monotonic();
      o.sandboxId = await client.runPodSandbox({ config: spec.sandbox });
      for (const config of [spec.container, ...spec.sidecars]) {
        const id = await client.createContainer({ podSandboxId: o.sandboxId, config, sandboxConfig: spec.sandbox });
        o.containerIds.push(id);
        await client.startContainer(id);
      }
      o.createMs = clock.monotonic() - start;
    });
    const createWallMs = clock.monotonic() - t0;
    const createCpuMs = cpuMs(process.cpuUsage(cpu0));
    for (const r of created) if (r.status === 'rejected') fail(r.reason);

    // ---- teardown phase (every pod that got a sandbox, including failed ones)
    const toRemove = outcomes.filter((o) => o.sandboxId !== undefined);
    const cpu1 = process.cpuUsage();
    const t1 = clock.monotonic();
    const removed = await mapSettled(toRemove, opts.concurrency, async (o) => {
      const start = clock.monotonic();
      for (const id of o.containerIds) await client.stopContainer(id, 0);
      await client.stopPodSandbox(o.sandboxId as string);
      await client.removePodSandbox(o.sandboxId as string);
      o.teardownMs = clock.monotonic() - start;
    });
    const teardownWallMs = clock.monotonic() - t1;
    const teardownCpuMs = cpuMs(process.cpuUsage(cpu1));
    for (const r of removed) if (r.status === 'rejected') fail(r.reason);

    const createLat = outcomes.flatMap((o) => (o.createMs !== undefined ? [o.createMs] : []));
    const teardownLat = outcomes.flatMap((o) => (o.teardownMs !== undefined ? [o.teardownMs] : []));
    return {
      endpoint: client.endpoint,
      runtimeName: version.runtimeName,
      runtimeVersion: version.runtimeVersion,
      pods: opts.pods,
      concurrency: opts.concurrency,
      hostNetwork,
      image,
      podsPerSec: (createLat.length * 1000) / createWallMs,
      p50Ms: percentile(createLat, 50),
      p99Ms: percentile(createLat, 99),
      maxMs: percentile(createLat, 100),
      createWallMs,
      teardownPodsPerSec: (teardownLat.length * 1000) / teardownWallMs,
      teardownP50Ms: percentile(teardownLat, 50),
      teardownP99Ms: percentile(teardownLat, 99),
      teardownWallMs,
      clientCpuMsPerPod: createCpuMs / opts.pods,
      teardownClientCpuMsPerPod: teardownCpuMs / Math.max(1, toRemove.length),
      errors: failedPods,
      ...(firstError !== undefined ? { firstError } : {}),
    };
  } finally {
    client.close();
    fs.rmSync(logDirectory, { recursive: true, force: true });
  }
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${CEILING_USAGE}\n`);
    return 0;
  }
  let cli;
  try {
    cli = parseCeilingArgs(argv);
  } catch (err) {
    if (err instanceof CeilingUsageError || (err as { code?: unknown }).code?.toString().startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${CEILING_USAGE}\n`);
      return 2;
    }
    throw err;
  }
  const { startCeilingRuntime } = await import('./ceiling-runtime.js');
  const runtime = cli.runtime !== undefined ? await startCeilingRuntime(cli.runtime, cli.profile) : undefined;
  try {
    const result = await runCeiling({
      endpoint: runtime?.endpoint ?? cli.endpoint ?? '',
      pods: cli.pods,
      concurrency: cli.concurrency,
      image: cli.image,
      hostNetwork: cli.hostNetwork,
    });
    const out = cli.profile !== undefined ? { ...result, profile: cli.profile } : result;
    process.stdout.write((cli.json ? JSON.stringify(out) : formatCeilingResult(result)) + '\n');
    return result.errors > 0 ? 1 : 0;
  } finally {
    await runtime?.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`ceiling: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
