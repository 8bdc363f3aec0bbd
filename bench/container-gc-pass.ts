/**
 * CPU of one container GC pass (src/main/gc/container-gc.ts, every minute on the agent's main
 * thread, as the kubelet's) at N dead containers: P pods × K dead instances of one container, on
 * the simulated runtime in its own process. The GC runs in this process as the agent runs it
 * (CRI client, planning, removals one at a time); only this process's CPU counts
 * (process.cpuUsage).
 *
 *   1. a pass that removes nothing (no per-container limit): what holding N dead containers
 *      costs every minute (two listings and the plan);
 *   2. passes with the kubelet's default policy (one dead instance kept per container) until
 *      nothing is left to remove: the removals, at most --cap per pass.
 *
 *   node dist/bench/container-gc-pass.js [--pods P] [--dead K] [--cap C]
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ContainerGc } from '../src/main/gc/container-gc.js';
import { realClock } from '../src/shared/clock/clock.js';
import { CriClient } from '../src/shared/cri/cri-client.js';
import { createLogger } from '../src/shared/logging/logger.js';
import { mapSettled } from '../test/harness/bounded-concurrency.js';
import { startSimRuntime } from '../test/harness/sim-runtime-harness.js';
import { ceilingPodSpec } from './ceiling-pod-specs.js';
import { intFlag } from './int-flag.js';

const USAGE = `usage: node dist/bench/container-gc-pass.js [--pods P] [--dead K] [--cap C]
  --pods P   pods (default 1000, 1–10000)
  --dead K   dead instances of the pod's container (default 5, 1–50)
  --cap C    removals per pass (default 1000, the agent's, 1–100000)`;

const IMAGE = 'docker.io/local/busybox:1';

function cpuMs(since: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { pods: { type: 'string' }, dead: { type: 'string' }, cap: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help === true) {
    console.log(USAGE);
    return;
  }
  const pods = intFlag(values.pods, 'pods', 1000, 1, 10_000, USAGE);
  const dead = intFlag(values.dead, 'dead', 5, 1, 50, USAGE);
  const cap = intFlag(values.cap, 'cap', 1000, 1, 100_000, USAGE);
  const podLogsDir = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-gc-bench-'));
  const sim = await startSimRuntime({ profile: 'zero', extraArgs: ['--image', IMAGE] });
  const cri = new CriClient({ endpoint: sim.endpoint, timeoutMs: 30_000 });
  const logger = createLogger({ verbosity: 0 });
  try {
    const t0 = performance.now();
    await mapSettled(Array.from({ length: pods }, (_, i) => i), 64, async (i) => {
      const spec = ceilingPodSpec({ name: `gc-${i}`, image: IMAGE, hostNetwork: true, logDirectory: podLogsDir });
      const podSandboxId = await cri.runPodSandbox({ config: spec.sandbox });
      for (let k = 0; k < dead; k++) {
        const config = { ...spec.container, metadata: { name: spec.container.metadata.name, attempt: k }, annotations: { 'io.kubernetes.container.restartCount': String(k) }, logPath: `${spec.container.metadata.name}/${k}.log` };
        const id = await cri.createContainer({ podSandboxId, config, sandboxConfig: spec.sandbox });
        await cri.startContainer(id);
        await cri.stopContainer(id, 0);
      }
    });
    const listed = await cri.listContainers();
    console.log(`setup: ${listed.length} dead containers in ${pods} pods (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    const gcOf = (maxPerPodContainer: number): ContainerGc => new ContainerGc({
      runtime: cri, clock: realClock, logger, podLogsDir,
      policy: { minAgeMs: 0, maxPerPodContainer, maxContainers: -1 },
      sourcesReady: () => true, isPodGone: () => false, maxRemovalsPerPass: cap,
    });
    const idle = gcOf(-1);
    for (let r = 1; r <= 3; r++) {
      const cpu0 = process.cpuUsage();
      const w0 = performance.now();
      const res = await idle.runOnce();
      console.log(`pass removing nothing ${r}: ${listed.length} dead held, ${cpuMs(cpu0).toFixed(1)} ms CPU, ${(performance.now() - w0).toFixed(1)} ms wall, removed ${res.containersRemoved}`);
    }
    const gc = gcOf(1);
    for (let r = 1; ; r++) {
      const cpu0 = process.cpuUsage();
      const w0 = performance.now();
      const res = await gc.runOnce();
      const ms = cpuMs(cpu0);
      console.log(`pass ${r} (default policy): removed ${res.containersRemoved}, deferred ${res.deferred}, ${ms.toFixed(1)} ms CPU (${res.containersRemoved > 0 ? (ms / res.containersRemoved).toFixed(3) : '-'} ms per removal), ${(performance.now() - w0).toFixed(1)} ms wall`);
      if (res.deferred === 0 || r > 100) break;
    }
    console.log(`left: ${(await cri.listContainers()).length} dead containers (one per pod)`);
  } finally {
    cri.close();
    await sim.stop();
    await fs.rm(podLogsDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
