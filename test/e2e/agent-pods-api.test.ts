/**
 * /pods against the runtime, for 500 pods on the real agent process (4 threads, simulated
 * runtime): for every pod, phase Running ⇔ the runtime has a running container for it; each
 * container status's containerID is `<runtime>://<the runtime's container id>`; hostIP is set;
 * podIP is the host IP for host-network pods and the sandbox's own IP (from
 * PodSandboxStatus) for pod-network pods. Then one container is made to exit for good (a
 * `restartPolicy: Never` pod whose command finishes) and /pods follows the runtime there too.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { pollUntil, runtimeView, startAgent, writePodManifest, type AgentProcess } from './agent-harness.js';

const HOST_NET = 450;
const POD_NET = 50;
const N = HOST_NET + POD_NET;
const RUNTIME_NAME = 'shardlet-sim';

let sim: SimRuntimeInstance;
let agent: AgentProcess | undefined;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-pods-api-'));

/** A pod on the pod network (writePodManifest's pods use the host network). */
function writePodNetworkManifest(name: string, opts: { command: string[]; restartPolicy?: string }): void {
  fs.writeFileSync(
    path.join(dir, `${name}.yaml`),
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: podnet\nspec:\n  restartPolicy: ${opts.restartPolicy ?? 'Always'}\n  terminationGracePeriodSeconds: 2\n  containers:\n  - name: app\n    image: docker.io/local/busybox:1\n    imagePullPolicy: IfNotPresent\n    command: ${JSON.stringify(opts.command)}\n`,
  );
}

before(async () => {
  sim = await startSimRuntime({ extraArgs: ['--image', 'docker.io/local/busybox:1'] });
  for (let i = 0; i < HOST_NET; i++) writePodManifest(dir, `hn-${i}`);
  for (let i = 0; i < POD_NET; i++) writePodNetworkManifest(`pn-${i}`, { command: ['sleep', '100000'] });
});

after(async () => {
  await agent?.kill();
  await sim?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

type View = Awaited<ReturnType<typeof runtimeView>>;

/** Every /pods entry checked against the runtime; returns the mismatches (empty when all agree). */
function mismatches(pods: readonly V1Pod[], view: View): string[] {
  const out: string[] = [];
  for (const pod of pods) {
    const uid = pod.metadata?.uid ?? '';
    const name = pod.metadata?.name ?? '';
    const rt = view.get(uid);
    const runtimeRunning = rt?.containers.some((c) => c.state === 'CONTAINER_RUNNING') ?? false;
    if ((pod.status?.phase === 'Running') !== runtimeRunning) out.push(`${name}: phase ${pod.status?.phase}, runtime running ${runtimeRunning}`);
    const statuses = pod.status?.containerStatuses ?? [];
    if (rt !== undefined && rt.containers.length > 0) {
      // The newest instance of the pod's one container is the one the status describes.
      const latest = [...rt.containers].sort((a, b) => b.attempt - a.attempt)[0]!;
      if (statuses.length !== 1 || statuses[0]?.containerID !== `${RUNTIME_NAME}://${latest.id}`) {
        out.push(`${name}: containerID ${statuses[0]?.containerID} != runtime ${latest.id}`);
      }
    }
    if (!pod.status?.hostIP) out.push(`${name}: no hostIP`);
    if (!pod.status?.podIP) out.push(`${name}: no podIP`);
  }
  return out;
}

test(`/pods matches the runtime for ${N} pods: phase, containerID, podIP, hostIP`, async () => {
  agent = await startAgent({ endpoint: sim.endpoint, manifestDir: dir, workers: 4 });
  const a = agent;
  // Settle: all N listed and Running, and the runtime agrees on every one.
  const { pods, view } = await pollUntil(async () => {
    const p = await a.pods();
    if (p.length !== N || !p.every((x) => x.status?.phase === 'Running')) return undefined;
    const v = await runtimeView(sim.endpoint);
    return mismatches(p, v).length === 0 ? { pods: p, view: v } : undefined;
  }, { what: `${N} pods Running on /pods and matching the runtime`, timeoutMs: 180_000, intervalMs: 500 });
  assert.deepEqual(mismatches(pods, view), []);
  assert.equal(view.size, N, 'one runtime pod per /pods entry, no extra');
  const uids = new Set(pods.map((p) => p.metadata?.uid));
  for (const uid of view.keys()) assert.ok(uids.has(uid), `runtime pod ${uid} missing from /pods`);

  // Pod IPs: host network → the host IP; pod network → the sandbox's IP, unique per pod.
  const cri = new CriClient({ endpoint: sim.endpoint, timeoutMs: 30_000 });
  try {
    const podNetIPs = new Set<string>();
    for (const pod of pods) {
      const st = pod.status!;
      if (pod.metadata?.namespace === 'default') {
        assert.equal(st.podIP, st.hostIP, `${pod.metadata?.name}: host-network podIP`);
        continue;
      }
      const sandbox = view.get(pod.metadata!.uid!)!.sandboxes[0]!;
      const sb = await cri.podSandboxStatus(sandbox.id);
      assert.equal(st.podIP, sb.status?.network?.ip, `${pod.metadata?.name}: podIP is the sandbox IP`);
      assert.deepEqual(st.podIPs?.map((x) => x.ip), [sb.status?.network?.ip]);
      podNetIPs.add(st.podIP ?? '');
    }
    assert.equal(podNetIPs.size, POD_NET, 'pod-network IPs are distinct');
  } finally {
    cri.close();
  }
});

test('a container that exits for good: /pods leaves Running with the runtime, same containerID', async () => {
  const a = agent!;
  writePodNetworkManifest('done', { command: ['sh', '-c', 'sleep 1; exit 3'], restartPolicy: 'Never' });
  const done = await pollUntil(async () => {
    const p = (await a.pods()).find((x) => x.metadata?.name === 'done-node-e2e');
    return p?.status?.phase === 'Failed' ? p : undefined;
  }, { what: 'the finished pod Failed on /pods', timeoutMs: 60_000 });
  const view = await runtimeView(sim.endpoint);
  const rt = view.get(done.metadata!.uid!);
  assert.ok(rt, 'the finished pod is still in the runtime');
  assert.deepEqual(rt.containers.map((c) => c.state), ['CONTAINER_EXITED']);
  const cs = done.status?.containerStatuses?.[0];
  assert.equal(cs?.containerID, `${RUNTIME_NAME}://${rt.containers[0]!.id}`);
  assert.equal(cs?.state?.terminated?.exitCode, 3);
  // And the other N pods still match.
  const pods = (await a.pods()).filter((p) => p.metadata?.name !== 'done-node-e2e');
  assert.equal(pods.length, N);
  assert.deepEqual(mismatches(pods, await runtimeView(sim.endpoint)), []);
});
