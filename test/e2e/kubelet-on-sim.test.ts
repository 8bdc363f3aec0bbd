/**
 * A real kubelet (v1.20.2 from Debian source, test/harness/kubelet-install.ts; CRI v1alpha2 only)
 * runs static pods on the simulated runtime, launched exactly as the bench launches it
 * (bench/kubelet-process.ts): its pods reach Running through the sim, its exec probes land in the
 * sim's ExecSync log and its HTTP probes at a loopback server, and the host's kernel tunables are
 * the same afterwards. Root (the kubelet's pod cgroups, a private mount namespace).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeletRunningLog } from '../../bench/kubelet-observer.js';
import { KUBELET_KERNEL_TUNABLES, removePodLogs, startKubelet } from '../../bench/kubelet-process.js';
import { BENCH_IMAGE, BENCH_NAMESPACE, ManifestDir, type BenchPod } from '../../bench/pod-manifests.js';
import { probePodManifest } from '../../bench/probe-density.js';
import { freePort, startSimRuntime, type ManagedProcess } from '../../bench/processes.js';
import { realClock } from '../../src/shared/clock/clock.js';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { parseExecLogLine } from '../../src/simruntime/sim-exec-log.js';
import { ensureKubelet } from '../harness/kubelet-install.js';
import { pollUntil } from '../harness/poll.js';
import { removeTestCgroupRoot } from '../harness/test-cgroups.js';

const PODS = 3;
const PERIOD_S = 2;

describe('a real kubelet v1.20 on the simulated runtime (CRI v1alpha2)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubelet-on-sim-'));
  const cgroupRoot = `/shardlet-e2e-kubelet-on-sim-${process.pid}`;
  const sysctlsBefore = Object.keys(KUBELET_KERNEL_TUNABLES).map((k) => fs.readFileSync(`/proc/sys/${k}`, 'utf8'));
  const httpHits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const key = (req.url ?? '').replace(/^\/probe\//, '');
    httpHits.set(key, (httpHits.get(key) ?? 0) + 1);
    res.end('ok');
  });
  let sim: ManagedProcess | undefined;
  let kubelet: ManagedProcess | undefined;
  let cri: CriClient | undefined;
  let pods: BenchPod[] = [];
  const log = new KubeletRunningLog(() => realClock.monotonic());
  const execLog = path.join(dir, 'exec.log');

  before(async () => {
    const bin = await ensureKubelet();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const socket = path.join(dir, 'cri.sock');
    sim = await startSimRuntime({ clock: realClock, socket, profile: 'zero', images: [BENCH_IMAGE], extraArgs: ['--exec-log', execLog] });
    cri = new CriClient({ endpoint: `unix://${socket}`, timeoutMs: 10_000 });
    const manifestDir = path.join(dir, 'manifests');
    fs.mkdirSync(manifestDir);
    kubelet = await startKubelet({
      clock: realClock,
      kubelet: bin,
      endpoint: `unix://${socket}`,
      dir: path.join(dir, 'kubelet'),
      manifestDir,
      nodeName: 'e2e-node',
      cgroupRoot,
      maxPods: 110,
      healthzPort: await freePort(),
      port: await freePort(),
      onStderrLine: log.onLine,
      logFile: path.join(dir, 'kubelet.log'),
      readyTimeoutMs: 180_000,
    });
    pods = await new ManifestDir(manifestDir, () => realClock.monotonic(), (name, uid) => probePodManifest(name, uid, name, port, PERIOD_S)).create(PODS);
    // A cold machine builds the kubelet first (~25 min on 2 cores), as the apiserver tests build theirs.
  }, { timeout: 40 * 60_000 });

  after(async () => {
    await kubelet?.stop();
    if (cri) {
      for (const s of await cri.listPodSandbox().catch(() => [])) {
        await cri.stopPodSandbox(s.id).catch(() => undefined);
        await cri.removePodSandbox(s.id).catch(() => undefined);
      }
      cri.close();
    }
    await sim?.stop();
    server.close();
    removePodLogs(BENCH_NAMESPACE, new Set(pods.map((p) => p.uid)));
    removeTestCgroupRoot(cgroupRoot);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts every static pod: Running in its PLEG log and in the runtime', async () => {
    await pollUntil(() => (pods.every((p) => log.get(p.uid) !== undefined) ? true : undefined), { what: `${PODS} pods Running in the kubelet's log`, timeoutMs: 180_000, intervalMs: 250 });
    const running = (await (cri as CriClient).listContainers({ state: { state: 'CONTAINER_RUNNING' } })).filter((c) => c.labels?.['io.kubernetes.pod.namespace'] === BENCH_NAMESPACE);
    assert.deepEqual(new Set(running.map((c) => c.labels?.['io.kubernetes.pod.uid'])), new Set(pods.map((p) => p.uid)));
  });

  it('runs its exec and HTTP probes against the sim and the loopback server', async () => {
    await pollUntil(
      () => {
        const lines = fs.existsSync(execLog) ? fs.readFileSync(execLog, 'utf8').split('\n').map(parseExecLogLine) : [];
        const execd = new Set(lines.flatMap((l) => (l?.cmd[0] === 'echo' && l.cmd[1] !== undefined ? [l.cmd[1]] : [])));
        return pods.every((p) => execd.has(p.name) && (httpHits.get(p.name) ?? 0) > 0) ? true : undefined;
      },
      { what: 'an exec and an HTTP probe of every pod', timeoutMs: 60_000, intervalMs: 250 },
    );
  });

  it('leaves the host kernel tunables as they were', () => {
    assert.deepEqual(
      Object.keys(KUBELET_KERNEL_TUNABLES).map((k) => fs.readFileSync(`/proc/sys/${k}`, 'utf8')),
      sysctlsBefore,
    );
  });
});
