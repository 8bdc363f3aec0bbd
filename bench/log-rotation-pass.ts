/**
 * CPU of one container-log rotation pass (the agent's ContainerLogRotation, every
 * --container-log-monitor-interval, 10 s by default, as the kubelet's) at N running containers
 * whose logs are under the limit: what an idle dense node pays for log rotation. The runtime is
 * the simulated one, in its own process; the rotation runs in this process as the agent runs
 * it on its main thread (--pod-logs-dir set, so log paths are derived). Only this process's CPU
 * (process.cpuUsage) counts, libuv's file-system threads included; the first pass, which also
 * learns every log path, is reported apart.
 *
 *   node dist/bench/log-rotation-pass.js [--containers N] [--rounds R]
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ContainerLogRotation } from '../src/main/logs/container-log-rotation.js';
import { realClock } from '../src/shared/clock/clock.js';
import { CriClient } from '../src/shared/cri/cri-client.js';
import { createLogger } from '../src/shared/logging/logger.js';
import { mapSettled } from '../test/harness/bounded-concurrency.js';
import { startSimRuntime } from '../test/harness/sim-runtime-harness.js';
import { ceilingPodSpec } from './ceiling-pod-specs.js';
import { intFlag } from './int-flag.js';

const USAGE = `usage: node dist/bench/log-rotation-pass.js [--containers N] [--rounds R]
  --containers N  running containers (default 1000, 1–10000)
  --rounds R      passes measured after the first (default 5, 1–100)`;

const IMAGE = 'docker.io/local/busybox:1';

function cpuMs(since: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { containers: { type: 'string' }, rounds: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help === true) {
    console.log(USAGE);
    return;
  }
  const n = intFlag(values.containers, 'containers', 1000, 1, 10_000, USAGE);
  const rounds = intFlag(values.rounds, 'rounds', 5, 1, 100, USAGE);
  const podLogsDir = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-logrot-bench-'));
  const sim = await startSimRuntime({ profile: 'zero', extraArgs: ['--image', IMAGE] });
  const cri = new CriClient({ endpoint: sim.endpoint, timeoutMs: 10_000 });
  try {
    await mapSettled(Array.from({ length: n }, (_, i) => i), 64, async (i) => {
      const spec = ceilingPodSpec({ name: `logrot-${i}`, image: IMAGE, hostNetwork: true, logDirectory: podLogsDir });
      // As shardlet creates them: the restart count annotation lets the path be derived.
      const container = { ...spec.container, annotations: { 'io.kubernetes.container.restartCount': '0' } };
      const podSandboxId = await cri.runPodSandbox({ config: spec.sandbox });
      const id = await cri.createContainer({ podSandboxId, config: container, sandboxConfig: spec.sandbox });
      await cri.startContainer(id);
    });
    const running = await cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } });
    if (running.length !== n) throw new Error(`expected ${n} running containers, got ${running.length}`);
    const rotation = new ContainerLogRotation({ runtime: cri, clock: realClock, logger: createLogger({ verbosity: 0 }), maxSizeBytes: 10 * 2 ** 20, maxFiles: 5, intervalMs: 10_000, podLogsDir });
    let cpu0 = process.cpuUsage();
    let t0 = performance.now();
    await rotation.rotateOnce();
    console.log(`first pass (learns ${n} log paths): ${cpuMs(cpu0).toFixed(1)} ms CPU, ${(performance.now() - t0).toFixed(1)} ms wall`);
    for (let r = 1; r <= rounds; r++) {
      cpu0 = process.cpuUsage();
      t0 = performance.now();
      await rotation.rotateOnce();
      console.log(`pass ${r}: ${n} containers, ${cpuMs(cpu0).toFixed(1)} ms CPU, ${(performance.now() - t0).toFixed(1)} ms wall`);
    }
    await rotation.close();
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
