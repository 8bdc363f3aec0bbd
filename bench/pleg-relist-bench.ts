/**
 * The PLEG's relist cost on its own, over the product's pieces: a `shardlet sim-runtime`
 * child process (profile zero) holding N running pods, the CriClient (with its list memo) and
 * GenericPleg with the shared pod cache in this process. Prints, per scenario, the relist's
 * wall time (kubelet_pleg_relist_duration_seconds) and this process's CPU per relist.
 *
 *   node dist/bench/pleg-relist-bench.js [--pods 1000,5000] [--relists 20] [--scenarios quiet,foreign,churn,burst]
 *
 * Scenarios per size (after the first relist and one to settle):
 *   quiet     nothing changed (an idle node)
 *   foreign   the runtime is unchanged but a "pod worker" (another attached cache view) wrote
 *             one entry since the last relist: the listing is the same objects, every entry is
 *             checked
 *   churn     1 in 200 pods' containers stopped since the last relist (a changed listing:
 *             decode of the changed items, events, inspections of the exits)
 *   burst     1 in 20 pods new since the last relist, each published by its "pod worker" (its
 *             status written through another attached cache view, as the agent's workers do)
 * Not a test: numbers for a human; the machine's load shows in them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { realClock } from '../src/shared/clock/clock.js';
import { CriClient } from '../src/shared/cri/cri-client.js';
import { attachPodCache, createPodCache } from '../src/shared/pod-cache/pod-cache-create.js';
import { GenericPleg, type RelistReport } from '../workers/pleg/generic-pleg.js';
import { getPodStatus } from '../workers/runtime-status/get-pod-status.js';
import { CEILING_NAMESPACE, ceilingPodSpec } from './ceiling-pod-specs.js';
import { BENCH_IMAGE } from './pod-manifests.js';
import { startSimRuntime } from './processes.js';

const { values } = parseArgs({ options: { pods: { type: 'string', default: '1000,5000' }, relists: { type: 'string', default: '20' }, scenarios: { type: 'string', default: 'quiet,foreign,churn,burst' }, help: { type: 'boolean', default: false } } });
if (values.help) {
  console.log('usage: node dist/bench/pleg-relist-bench.js [--pods 1000,5000] [--relists 20] [--scenarios quiet,foreign,churn,burst]\n' +
    '  the PLEG relist alone against a sim-runtime child holding N running pods: wall ms and this process\'s CPU ms per relist');
  process.exit(0);
}
const only = new Set(values.scenarios.split(','));
const sizes = values.pods.split(',').map(Number);
const relists = Number(values.relists);
if (sizes.some((n) => !Number.isInteger(n) || n < 1 || n > 20_000) || !Number.isInteger(relists) || relists < 1 || relists > 1000) {
  throw new RangeError('--pods: integers 1..20000; --relists: 1..1000');
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
}

async function session(pods: number): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pleg-relist-bench-'));
  const socket = path.join(dir, 'cri.sock');
  // The bench's one way to start a runtime: resolves once CRI Version answers, stop() is bounded.
  const sim = await startSimRuntime({ clock: realClock, socket, profile: 'zero', images: [BENCH_IMAGE, 'registry.k8s.io/pause:3.9'] });
  const client = new CriClient({ endpoint: `unix://${socket}`, timeoutMs: 60_000 });
  // The "pod workers'" own channel, as in the agent: their per-pod lists never share the PLEG's list memo.
  const workerClient = new CriClient({ endpoint: `unix://${socket}`, timeoutMs: 60_000 });
  try {
    const containers: string[] = [];
    let next = 0;
    let target = pods;
    const lane = async (): Promise<void> => {
      while (next < target) {
        const { sandbox, container } = ceilingPodSpec({ name: `p${next++}`, image: BENCH_IMAGE, hostNetwork: true, logDirectory: dir });
        const sandboxId = await workerClient.runPodSandbox({ config: sandbox });
        const id = await workerClient.createContainer({ podSandboxId: sandboxId, config: container, sandboxConfig: sandbox });
        await workerClient.startContainer(id);
        containers.push(id);
      }
    };
    await Promise.all(Array.from({ length: 32 }, lane));

    const cache = createPodCache({ capacity: pods + pods / 4, maxCapacity: pods * 4 });
    const worker = attachPodCache(cache.buffer);
    let last: RelistReport | undefined;
    const pleg = new GenericPleg({ runtime: client, cache: cache.writer, cacheReader: cache.reader, clock: realClock, sink: (r) => (last = r), eventCapacity: 1e9 });
    const relist = async (): Promise<{ wallMs: number; cpuMs: number; events: number }> => {
      const cpu = process.cpuUsage();
      await pleg.relist();
      const used = process.cpuUsage(cpu);
      pleg.ackEvents(last?.events.length ?? 0);
      return { wallMs: 1000 * (last?.durationSeconds ?? NaN), cpuMs: (used.user + used.system) / 1000, events: last?.events.length ?? 0 };
    };
    const first = await relist();
    await relist();
    console.log(`${pods} pods: first relist ${first.wallMs.toFixed(1)} ms wall, ${first.cpuMs.toFixed(1)} ms CPU, ${first.events} events`);
    let stopped = 0;
    const scenarios: Record<string, () => Promise<void>> = {
      quiet: async () => {},
      foreign: async () => {
        const uid = 'ceiling-uid-p0';
        const e = cache.reader.get(uid);
        if (e) worker.writer.set(uid, e.status, null, e.timestampMs + 1);
      },
      burst: async () => {
        const from = next;
        target = next + Math.max(1, pods / 20);
        await Promise.all(Array.from({ length: 16 }, lane));
        for (let i = from; i < target; i++) {
          const uid = `ceiling-uid-p${i}`;
          worker.writer.set(uid, await getPodStatus(workerClient, uid, `p${i}`, CEILING_NAMESPACE), null, Math.floor(realClock.monotonic()));
        }
      },
      churn: async () => {
        for (let k = 0; k < Math.max(1, pods / 200) && stopped < containers.length; k++) await client.stopContainer(containers[stopped++]!, 0);
      },
    };
    for (const [name, before] of Object.entries(scenarios)) {
      if (!only.has(name)) continue;
      const wall: number[] = [];
      const cpu: number[] = [];
      for (let i = 0; i < relists; i++) {
        await before();
        const r = await relist();
        wall.push(r.wallMs);
        cpu.push(r.cpuMs);
      }
      const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
      console.log(
        `${String(pods).padStart(5)} pods  ${name.padEnd(8)} wall p50 ${quantile(wall, 0.5).toFixed(1).padStart(6)} p99 ${quantile(wall, 0.99).toFixed(1).padStart(6)} ms` +
          `   CPU mean ${mean(cpu).toFixed(2).padStart(6)} p50 ${quantile(cpu, 0.5).toFixed(2).padStart(6)} ms   quiet ${(pleg.counters() as { quietRelistsTotal?: number }).quietRelistsTotal ?? '-'}`,
      );
    }
    await pleg.close();
  } finally {
    client.close();
    workerClient.close();
    await sim.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

for (const n of sizes) await session(n);
