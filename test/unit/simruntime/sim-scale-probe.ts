/**
 * Scale probe (not a test: no timing assertions): loads 10,000 sandboxes / 20,000 running
 * containers into a simulated runtime (through its core, to load fast), saves them as a state
 * file, starts `shardlet sim-runtime --state` as its own process (as it runs in production),
 * then times ListContainers / ListPodSandbox end to end from this process: with a raw gRPC
 * client that does not decode the reply (the runtime's answer + transport) and through
 * CriClient (plus protobuf decoding on the client).
 *   npx tsc -p . && node dist/test/unit/simruntime/sim-scale-probe.js [sandboxes]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { CriClient } from '../../../src/shared/cri/cri-client.js';
import { CRI_FLOW_CONTROL_WINDOW, MAX_MESSAGE_BYTES } from '../../../src/shared/cri/cri-proto.js';
import { SimulatedRuntime } from '../../../src/simruntime/simulated-runtime.js';

async function time<T>(label: string, n: number, fn: () => Promise<T>): Promise<T> {
  let last: T | undefined;
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    last = await fn();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  const p50 = samples[Math.floor(samples.length / 2)] ?? 0;
  process.stdout.write(`${label.padEnd(44)} p50 ${p50.toFixed(1)} ms  max ${(samples.at(-1) ?? 0).toFixed(1)} ms\n`);
  return last as T;
}

async function main(): Promise<void> {
  const sandboxes = Number(process.argv[2] ?? 10_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simrt-scale-'));
  const statePath = path.join(dir, 'state.json');
  const rt = await SimulatedRuntime.start({ socketPath: path.join(dir, 'load.sock'), preloadImages: ['busybox'], statePath, stateSaveIntervalMs: 0 });
  let client: CriClient | undefined;
  let child: ReturnType<typeof spawn> | undefined;
  try {
    const t0 = performance.now();
    {
      for (let i = 0; i < sandboxes; i++) {
        const cfg = {
          metadata: { name: `pod-${i}`, namespace: 'bench', uid: `uid-${i}`, attempt: 0 },
          labels: { 'io.kubernetes.pod.name': `pod-${i}`, 'io.kubernetes.pod.namespace': 'bench', 'io.kubernetes.pod.uid': `uid-${i}` },
          annotations: { 'kubernetes.io/config.seen': '2024-01-01T00:00:00Z' },
        };
        const sb = rt.core.runPodSandbox({ config: cfg });
        for (const name of ['app', 'sidecar']) {
          const id = rt.core.createContainer({
            podSandboxId: sb,
            config: {
              metadata: { name, attempt: 0 },
              image: { image: 'busybox' },
              command: ['sleep', '100000'],
              labels: { 'io.kubernetes.container.name': name, 'io.kubernetes.pod.uid': `uid-${i}` },
              annotations: { 'io.kubernetes.container.hash': 'abcdef', 'io.kubernetes.container.restartCount': '0' },
            },
            sandboxConfig: cfg,
          });
          rt.core.startContainer(id);
        }
      }
    }
    process.stdout.write(`loaded ${rt.core.store.sandboxCount} sandboxes / ${rt.core.store.containerCount} containers in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    await rt.close();
    const mainJs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../src/cli/main.js');
    const sock = path.join(dir, 'cri.sock');
    child = spawn(process.execPath, [mainJs, 'sim-runtime', '--socket', sock, '--state', statePath, '--state-interval-ms', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      child?.stderr?.on('data', (d: Buffer) => /serving/.test(d.toString()) && resolve());
      child?.once('exit', (c) => reject(new Error(`sim-runtime exited ${c}`)));
    });
    client = new CriClient({ endpoint: sock });
    const endpoint = `unix://${sock}`;
    // Two raw clients: HTTP/2's default 64 KiB flow-control window, and the window CriClient
    // uses (CRI_FLOW_CONTROL_WINDOW): a 9 MB reply otherwise waits on ~150 WINDOW_UPDATEs.
    const rawClient = (window: boolean): grpc.Client =>
      new grpc.Client(endpoint, grpc.credentials.createInsecure(), {
        'grpc.max_receive_message_length': MAX_MESSAGE_BYTES, 'grpc.default_authority': 'localhost',
        ...(window ? { 'grpc-node.flow_control_window': CRI_FLOW_CONTROL_WINDOW } : {}),
      });
    const rawList = (raw: grpc.Client, method: string): Promise<number> =>
      new Promise((resolve, reject) =>
        raw.makeUnaryRequest(`/runtime.v1.RuntimeService/${method}`, (x: Buffer) => x, (b: Buffer) => b, Buffer.alloc(0), (err, res) => (err ? reject(err) : resolve(res?.length ?? 0))),
      );
    const small = rawClient(false);
    const big = rawClient(true);
    const bytes = await time('raw ListContainers (all, first: builds cache)', 1, () => rawList(small, 'ListContainers'));
    process.stdout.write(`  ${(bytes / 1e6).toFixed(1)} MB on the wire\n`);
    for (let round = 0; round < 2; round++) {
      await time('raw ListContainers, 64 KiB window', 10, () => rawList(small, 'ListContainers'));
      await time('raw ListContainers, CriClient window', 10, () => rawList(big, 'ListContainers'));
    }
    await time('raw ListPodSandbox, 64 KiB window', 20, () => rawList(small, 'ListPodSandbox'));
    await time('raw ListPodSandbox, CriClient window', 20, () => rawList(big, 'ListPodSandbox'));
    small.close();
    big.close();
    const c = client;
    const all = await time('CriClient ListContainers (all, decoded)', 10, () => c.listContainers());
    process.stdout.write(`  ${all.length} containers\n`);
    await time('CriClient ListContainers (state RUNNING)', 10, () => c.listContainers({ state: { state: 'CONTAINER_RUNNING' } }));
    await time('CriClient ListPodSandbox (all)', 10, () => c.listPodSandbox());
    const sb = all[0]?.podSandboxId ?? '';
    await time('ListContainers (podSandboxId)', 50, () => c.listContainers({ podSandboxId: sb }));
    await time('ListContainers (label io.kubernetes.pod.uid)', 50, () => c.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-77' } }));
    await time('ContainerStatus', 50, () => c.containerStatus(all[0]?.id ?? ''));
  } finally {
    client?.close();
    await rt.close();
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child?.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(String(e) + '\n');
  process.exit(1);
});
