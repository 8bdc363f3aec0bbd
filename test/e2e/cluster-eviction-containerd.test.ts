/**
 * Disk pressure on real containerd against a real kube-apiserver: the agent's --root-dir (its
 * nodefs, with the pod logs under it) is a 64 MiB tmpfs the test mounts, and the test fills it
 * with a file, so nodefs.available is measured as on any node (statfs) and nothing is faked.
 *
 *   threshold nodefs.available<40%: `writer` (a 4 MiB file in its writable layer and ~1 MB of
 *   logs) and `quiet` run; the fill pushes available below 40% → node-level reclaim (container
 *   and image GC) cannot free the tmpfs → `writer`, the larger disk user, is evicted (Failed,
 *   Evicted, the kubelet's message); the fill is removed at once, so `quiet` stays (one pod per
 *   pass). Meanwhile the Node shows DiskPressure=True and a new pod, of any QoS, is refused with
 *   "The node had condition: [DiskPressure]. "; after the transition period DiskPressure is
 *   False again and a new pod runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pollUntil } from './agent-harness.js';
import { apiPod, clusterSimFixture, coreApi, createPods, isApiRunning, PodWatchRecorder, startClusterAgent } from './cluster-harness.js';

const NS = 'evict-ctrd';
const NODE = 'node-evict-ctrd';
const MiB = 1024 * 1024;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-evict-nodefs-'));
let mounted = false;
const f = clusterSimFixture({
  namespace: NS,
  runtime: 'containerd',
  teardown: () => {
    if (mounted) spawnSync('umount', [root]);
    fs.rmSync(root, { recursive: true, force: true });
  },
});

function statfs(dir: string): { cap: number; avail: number } {
  const st = fs.statfsSync(dir);
  return { cap: st.blocks * st.bsize, avail: st.bavail * st.bsize };
}

test('disk pressure on containerd with a 64 MiB tmpfs nodefs: the larger disk user is evicted, DiskPressure flips and recovers, admission refuses meanwhile', { timeout: 400_000 }, async () => {
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${64 * MiB},mode=0755`, 'tmpfs', root], { encoding: 'utf8' });
  assert.equal(m.status, 0, `mount tmpfs: ${m.stderr}`);
  mounted = true;
  const { core } = coreApi(f.cp.adminKubeconfig);
  const r = (f.rec = new PodWatchRecorder(f.cp.adminKubeconfig, NS));
  await r.start();
  f.agent = await startClusterAgent({
    cp: f.cp, nodeName: NODE, endpoint: f.endpoint, rootDir: root,
    extraArgs: ['--eviction-hard', 'nodefs.available<40%', '--eviction-pressure-transition-period', '30s', '--node-status-update-frequency', '1s'],
  });
  const diskPressure = async (): Promise<string | undefined> => (await core.readNode({ name: NODE })).status?.conditions?.find((c) => c.type === 'DiskPressure')?.status;
  await pollUntil(async () => ((await diskPressure()) === 'False' ? true : undefined), { what: 'the Node registered without disk pressure', timeoutMs: 60_000, intervalMs: 500 });

  const writer = apiPod('writer', NS, NODE, { imagePullPolicy: 'Never', graceSeconds: 1, command: ['sh', '-c', 'dd if=/dev/zero of=/big bs=1048576 count=4 2>/dev/null; i=0; while [ $i -lt 10000 ]; do echo "line $i of the writer pod, padded to about one hundred bytes .........................."; i=$((i+1)); done; sleep 100000'] });
  const quiet = apiPod('quiet', NS, NODE, { imagePullPolicy: 'Never', graceSeconds: 1 });
  const [w, q] = await createPods(core, [writer, quiet]);
  const wUid = w!.metadata!.uid!;
  const qUid = q!.metadata!.uid!;
  await r.waitFor(() => ([wUid, qUid].every((u) => isApiRunning(r.pods.get(u) ?? {})) ? true : undefined), 'writer and quiet running', 120_000);
  const writerLog = path.join(root, 'pods', `${NS}_writer_${wUid}`, 'main', '0.log');
  await pollUntil(() => (fs.existsSync(writerLog) && fs.statSync(writerLog).size > 900_000 ? true : undefined), { what: 'the writer\'s logs written', timeoutMs: 60_000, intervalMs: 200 });

  // Fill the tmpfs to 30% available (threshold 40%).
  const s = statfs(root);
  const fill = Math.max(0, s.avail - Math.floor(0.3 * s.cap));
  const filler = path.join(root, 'filler');
  fs.writeFileSync(filler, Buffer.alloc(fill));
  const evicted = await r.waitFor(() => {
    const p = r.pods.get(wUid);
    return p?.status?.phase === 'Failed' ? p : undefined;
  }, 'writer evicted', 90_000);
  fs.rmSync(filler);
  assert.equal(evicted.status?.reason, 'Evicted');
  assert.match(evicted.status?.message ?? '', /^The node was low on resource: ephemeral-storage\. Threshold quantity: \d+\w*, available: \d+\w*\. Container main was using \d+\w*, request is 0, has larger consumption of ephemeral-storage\. $/);

  await pollUntil(async () => ((await diskPressure()) === 'True' ? true : undefined), { what: 'DiskPressure=True on the Node', timeoutMs: 30_000, intervalMs: 200 });
  const burstable = apiPod('refused', NS, NODE, { imagePullPolicy: 'Never', graceSeconds: 1 });
  burstable.spec!.containers[0]!.resources = { requests: { memory: '16Mi', cpu: '10m' } };
  const [refused] = await createPods(core, [burstable]);
  const rejected = await r.waitFor(() => {
    const p = r.pods.get(refused!.metadata!.uid!);
    return p?.status?.phase === 'Failed' ? p : undefined;
  }, 'a Burstable pod refused under disk pressure', 30_000);
  assert.equal(rejected.status?.reason, 'Evicted');
  assert.equal(rejected.status?.message, 'Pod was rejected: The node had condition: [DiskPressure]. ');

  await pollUntil(async () => ((await diskPressure()) === 'False' ? true : undefined), { what: 'DiskPressure=False again', timeoutMs: 90_000, intervalMs: 500 });
  assert.ok(isApiRunning(r.pods.get(qUid) ?? {}), 'quiet was not evicted: one pod per pass, and the pressure was gone by the next');
  const [late] = await createPods(core, [apiPod('late', NS, NODE, { imagePullPolicy: 'Never', graceSeconds: 1 })]);
  await r.waitFor(() => (isApiRunning(r.pods.get(late!.metadata!.uid!) ?? {}) ? true : undefined), 'a pod runs once the pressure is over', 60_000);
  const events = await core.listNamespacedEvent({ namespace: NS });
  assert.ok(events.items.some((e) => e.reason === 'Evicted' && e.involvedObject.uid === wUid), 'an Evicted event on writer');
});
