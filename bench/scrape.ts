/**
 * Scrape benchmark for the agent's /metrics.
 *
 *   runScrapeBench({ url, connections, durationSec })  autocannon against a /metrics URL
 *   node dist/bench/scrape.js --url http://127.0.0.1:10255/metrics [--connections 10] [--duration 10]
 *   node dist/bench/scrape.js --synthetic [--threads 4] [--pods 1000]
 *        starts the real metrics system + agent server with N worker threads recording
 *        synthetic pod work (prober series for --pods pods), then runs the bench against it
 *   node dist/bench/scrape.js --compare-transports [--threads 4] [--series 60] [--scrapes 200]
 *        the measurement behind the cross-thread design: per-thread prom-client registries
 *        collected over MessagePorts and merged with AggregatorRegistry.aggregate, versus the
 *        shared-memory arena read by the main thread; idle and with busy worker threads.
 *
 * This file is also the worker script of the synthetic and comparison setups (!isMainThread).
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { isMainThread, MessageChannel, parentPort, Worker, workerData, type MessagePort } from 'node:worker_threads';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { createMetricsSystem } from '../src/main/metrics/main-metrics.js';
import { createAgentServer } from '../src/main/server/agent-server.js';
import { silentLogger } from '../src/shared/logging/logger.js';
import { createWorkerMetrics } from '../workers/metrics/worker-metrics.js';

export interface ScrapeBenchOptions {
  url: string;
  connections?: number;
  durationSec?: number;
  /** Send Accept-Encoding: gzip (Prometheus does). Default true. */
  gzip?: boolean;
  /** Requests per second across all connections (autocannon overallRate); default unbounded. */
  overallRate?: number;
}

export interface ScrapeBenchResult {
  url: string;
  connections: number;
  durationSec: number;
  requestsPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  non2xx: number;
  errors: number;
  bytesPerResponse: number;
}

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; max: number };
  throughput: { total: number };
  non2xx: number;
  errors: number;
}
type Autocannon = (opts: { url: string; connections: number; duration: number; headers?: Record<string, string>; overallRate?: number }) => Promise<AutocannonResult>;

export async function runScrapeBench(opts: ScrapeBenchOptions): Promise<ScrapeBenchResult> {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  const connections = opts.connections ?? 10;
  const durationSec = opts.durationSec ?? 10;
  const r = await autocannon({
    url: opts.url, connections, duration: durationSec,
    headers: (opts.gzip ?? true) ? { 'accept-encoding': 'gzip' } : {},
    ...(opts.overallRate !== undefined ? { overallRate: opts.overallRate } : {}),
  });
  return {
    url: opts.url, connections, durationSec,
    requestsPerSec: r.requests.average,
    latencyP50Ms: r.latency.p50,
    latencyP99Ms: r.latency.p99,
    latencyMaxMs: r.latency.max,
    non2xx: r.non2xx,
    errors: r.errors,
    bytesPerResponse: r.requests.total > 0 ? Math.round(r.throughput.total / r.requests.total) : 0,
  };
}

// ---------------------------------------------------------------------------------------------
// Worker side (synthetic load and transport comparison).

interface WorkerInit { mode: 'prom' | 'sab' | 'synthetic'; arena?: SharedArrayBuffer; series: number; busy: boolean; pods: number; port?: MessagePort }

const OPS = ['run_podsandbox', 'create_container', 'start_container', 'container_status', 'podsandbox_status', 'list_containers', 'list_podsandbox', 'stop_container', 'remove_container', 'exec_sync'];

function workerMain(init: WorkerInit): void {
  const opTypes = Array.from({ length: Math.ceil(init.series / 3) }, (_, i) => `${OPS[i % OPS.length]}_${Math.floor(i / OPS.length)}`);
  let record: (i: number) => void;
  if (init.mode === 'prom') {
    const registry = new Registry();
    const total = new Counter({ name: 'kubelet_runtime_operations_total', help: 'h', labelNames: ['operation_type'], registers: [registry] });
    const errors = new Counter({ name: 'kubelet_runtime_operations_errors_total', help: 'h', labelNames: ['operation_type'], registers: [registry] });
    const dur = new Histogram({ name: 'kubelet_runtime_operations_duration_seconds', help: 'h', labelNames: ['operation_type'], buckets: [0.005, 0.0125, 0.03125, 0.078125, 0.1953125, 0.48828125, 1.220703125, 3.0517578125, 7.62939453125, 19.073486328125, 47.6837158203125, 119.20928955078125, 298.0232238769531, 745.0580596923828], registers: [registry] });
    record = (i) => {
      const op = opTypes[i % opTypes.length] as string;
      total.inc({ operation_type: op });
      errors.inc({ operation_type: op });
      dur.observe({ operation_type: op }, 0.01);
    };
    init.port?.on('message', () => {
      void registry.getMetricsAsJSON().then((json) => init.port?.postMessage(json));
    });
  } else {
    const m = createWorkerMetrics({ arena: init.arena as SharedArrayBuffer });
    record = (i) => m.runtimeOperation(opTypes[i % opTypes.length] as string, 0.01, true);
    if (init.mode === 'synthetic') {
      const perThread = Math.ceil(init.pods / 4);
      for (let p = 0; p < perThread; p++) {
        m.probe({ type: 'readiness', result: 'success', container: 'app', pod: `pod-${m.threadId}-${p}`, namespace: 'bench', podUID: `uid-${m.threadId}-${p}`, seconds: 0.002 });
      }
      m.threadLoad(perThread, 0);
    }
  }
  for (let i = 0; i < opTypes.length * 3; i++) record(i);
  let n = 0;
  const chunk = (): void => {
    // Busy mode: 20 ms synchronous chunks of "pod work", as a pod sync would hold the thread.
    const end = performance.now() + 20;
    while (performance.now() < end) record(n++);
    setImmediate(chunk);
  };
  if (init.busy) setImmediate(chunk);
  parentPort?.postMessage('ready');
}

if (!isMainThread && (workerData as { scrapeBench?: boolean } | null)?.scrapeBench === true) {
  workerMain((workerData as { init: WorkerInit }).init);
}

// ---------------------------------------------------------------------------------------------
// Main side.

async function startWorkers(n: number, init: (i: number) => { init: WorkerInit; transfer: MessagePort[] }): Promise<Worker[]> {
  const workers = Array.from({ length: n }, (_, i) => {
    const { init: wi, transfer } = init(i);
    return new Worker(new URL(import.meta.url), { workerData: { scrapeBench: true, init: wi }, transferList: transfer });
  });
  await Promise.all(workers.map((w) => new Promise((resolve) => w.once('message', resolve))));
  return workers;
}

interface TransportResult { transport: string; busyWorkers: boolean; scrapes: number; mainThreadMsPerScrape: number; latencyP50Ms: number; latencyP99Ms: number; bytes: number }

async function measure(name: string, busy: boolean, scrapes: number, collect: () => Promise<string>): Promise<TransportResult> {
  for (let i = 0; i < 10; i++) await collect(); // warm-up
  const lat: number[] = [];
  let bytes = 0;
  const elu0 = performance.eventLoopUtilization();
  for (let i = 0; i < scrapes; i++) {
    const t0 = performance.now();
    bytes = (await collect()).length;
    lat.push(performance.now() - t0);
  }
  const elu = performance.eventLoopUtilization(elu0);
  lat.sort((a, b) => a - b);
  const pct = (p: number): number => Number((lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] as number).toFixed(3));
  return { transport: name, busyWorkers: busy, scrapes, mainThreadMsPerScrape: Number((elu.active / scrapes).toFixed(3)), latencyP50Ms: pct(0.5), latencyP99Ms: pct(0.99), bytes };
}

export async function compareTransports(opts: { threads: number; series: number; scrapes: number }): Promise<TransportResult[]> {
  const out: TransportResult[] = [];
  for (const busy of [false, true]) {
    // (a) per-thread prom-client registries, collected over MessagePorts on every scrape.
    const ports: MessagePort[] = [];
    const promWorkers = await startWorkers(opts.threads, () => {
      const ch = new MessageChannel();
      ports.push(ch.port1);
      return { init: { mode: 'prom', series: opts.series, busy, pods: 0, port: ch.port2 }, transfer: [ch.port2] };
    });
    const collectProm = async (): Promise<string> => {
      const parts = await Promise.all(ports.map((p) => new Promise<object[]>((resolve) => {
        p.once('message', (m: object[]) => resolve(m));
        p.postMessage('collect');
      })));
      return AggregatorRegistry.aggregate(parts).metrics();
    };
    out.push(await measure('prom-client registries + MessagePort + AggregatorRegistry.aggregate', busy, opts.scrapes, collectProm));
    for (const p of ports) p.close();
    await Promise.all(promWorkers.map((w) => w.terminate()));

    // (b) the shared-memory arena (what shardlet uses).
    const system = createMetricsSystem({ processMetrics: false, eventLoopDelay: false });
    const sabWorkers = await startWorkers(opts.threads, () => ({ init: { mode: 'sab', arena: system.arena.buffer, series: opts.series, busy, pods: 0 }, transfer: [] }));
    out.push(await measure('SharedArrayBuffer arena (shardlet)', busy, opts.scrapes, () => system.aggregator.collect()));
    await Promise.all(sabWorkers.map((w) => w.terminate()));
    system.close();
  }
  return out;
}

/** The real metrics system + server with `threads` workers recording synthetic pod metrics. */
export async function startSyntheticAgent(opts: { threads: number; pods: number }): Promise<{ url: string; stop(): Promise<void> }> {
  const system = createMetricsSystem();
  system.main.runningPods.set(opts.pods);
  const workers = await startWorkers(opts.threads, () => ({ init: { mode: 'synthetic', arena: system.arena.buffer, series: 60, busy: false, pods: opts.pods }, transfer: [] }));
  const server = createAgentServer({ port: 0, metrics: system.aggregator, health: { checks: () => [] }, pods: { list: () => [] }, logger: silentLogger });
  const { address, port } = await server.listen();
  return {
    url: `http://${address}:${port}/metrics`,
    async stop() {
      await server.close();
      await Promise.all(workers.map((w) => w.terminate()));
      system.close();
    },
  };
}

async function cli(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: 'string' }, connections: { type: 'string', default: '10' }, duration: { type: 'string', default: '10' },
      synthetic: { type: 'boolean', default: false }, threads: { type: 'string', default: '4' }, pods: { type: 'string', default: '1000' },
      'compare-transports': { type: 'boolean', default: false }, series: { type: 'string', default: '60' }, scrapes: { type: 'string', default: '200' },
    },
  });
  const threads = Number(values.threads);
  if (values['compare-transports']) {
    const rows = await compareTransports({ threads, series: Number(values.series), scrapes: Number(values.scrapes) });
    process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
    return 0;
  }
  let stop: (() => Promise<void>) | undefined;
  let url = values.url;
  if (values.synthetic) {
    const agent = await startSyntheticAgent({ threads, pods: Number(values.pods) });
    url = agent.url;
    stop = agent.stop;
  }
  if (url === undefined) {
    process.stderr.write('usage: scrape.js --url URL | --synthetic | --compare-transports\n');
    return 2;
  }
  try {
    const r = await runScrapeBench({ url, connections: Number(values.connections), durationSec: Number(values.duration) });
    process.stdout.write(`${r.requestsPerSec.toFixed(0)} req/s  p50 ${r.latencyP50Ms} ms  p99 ${r.latencyP99Ms} ms  (${r.bytesPerResponse} B/response, non2xx ${r.non2xx}, errors ${r.errors})\n`);
    process.stdout.write(JSON.stringify(r) + '\n');
  } finally {
    await stop?.();
  }
  return 0;
}

if (isMainThread && process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  cli(process.argv.slice(2)).then((c) => { process.exitCode = c; }, (e: unknown) => { process.stderr.write(String(e) + '\n'); process.exitCode = 1; });
}
