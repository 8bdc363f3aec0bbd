/**
 * Volumes and API objects against a real kube-apiserver (Node,RBAC + NodeRestriction; node
 * identity) on the simulated runtime, one control plane and agent for the file, in order:
 *  1. a pod with the default kube-api-access volume (token via TokenRequest, the
 *     kube-root-ca.crt configMap, the namespace), a configMap volume, a secret volume, an
 *     emptyDir shared by two containers and env from both reaches Running in the API, and its
 *     containers read the right bytes (ExecSync cat through CRI);
 *  2. updating the configMap changes the file in the running container;
 *  3. a missing required env key gives the kubelet's waiting reason and message; an optional
 *     one is fine;
 *  4. an agent restart (SIGKILL) leaves the running pod's volumes in place (no rewrite, no
 *     container restart);
 *  5. deleting the pod removes its volume directories and tmpfs mounts.
 * Then, with the same agent: a disk emptyDir written past its sizeLimit gets its pod evicted
 * (the eviction manager's local-storage check): phase Failed, reason Evicted, the kubelet's
 * message, an Evicted Warning event, its containers stopped and never restarted, while a pod
 * under its limit keeps running until it too goes past it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startControlPlane, type ControlPlane } from '../harness/apiserver-harness.js';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { pollUntil, removeAgentRoot, runtimeView, type AgentProcess } from './agent-harness.js';
import type { V1Pod } from '@kubernetes/client-node';
import { apiPod, coreApi, createPods, isApiRunning, PodWatchRecorder, startClusterAgent, TEST_IMAGE } from './cluster-harness.js';
import { createAppObjects, execIn, SA_DIR, volumesPod } from './cluster-volumes.js';

const NS = 'vol';
const NODE = 'node-vol';
let cp: ControlPlane | undefined;
let sim: SimRuntimeInstance | undefined;
let agent: AgentProcess | undefined;
let rec: PodWatchRecorder | undefined;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-vol-root-'));

before(async () => {
  cp = await startControlPlane();
  await cp.ensureNamespace(NS);
  sim = await startSimRuntime({ profile: 'zero', extraArgs: ['--image', TEST_IMAGE] });
}, { timeout: 30 * 60_000 });

after(async () => {
  rec?.close();
  await agent?.kill();
  await sim?.stop();
  await cp?.stop();
  removeAgentRoot(root);
}, { timeout: 120_000 });

function mountsUnder(dir: string): string[] {
  return fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4] ?? '').filter((m) => m.startsWith(`${dir}/`));
}

test('cluster volumes on the sim: kube-api-access, configMap, secret, emptyDir, env; configMap update; missing key; restart; deletion', { timeout: 600_000 }, async (t) => {
  assert.ok(cp && sim);
  const { core } = coreApi(cp.adminKubeconfig);
  const r = (rec = new PodWatchRecorder(cp.adminKubeconfig, NS));
  await r.start();
  agent = await startClusterAgent({ cp, nodeName: NODE, endpoint: sim.endpoint, rootDir: root });
  await createAppObjects(core, NS, 'v=1\n');

  // 1. Running in the API, and the containers read the right bytes.
  const [pod] = await createPods(core, [volumesPod('vols', NS, NODE)]);
  const uid = pod!.metadata!.uid!;
  assert.ok(pod!.spec?.volumes?.some((v) => v.name.startsWith('kube-api-access-')), 'the API server added the kube-api-access volume');
  await r.waitFor(() => { const p = r.pods.get(uid); return p && isApiRunning(p) ? true : undefined; }, 'the volumes pod Running in the API', 60_000);
  const cat = async (container: string, file: string): Promise<string> => {
    const out = await execIn(sim!.endpoint, uid, container, ['cat', file]);
    assert.equal(out.exitCode, 0, `cat ${file}: ${out.stderr}`);
    return out.stdout;
  };
  const token = await cat('writer', `${SA_DIR}/token`);
  assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'a JWT from TokenRequest');
  const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { sub?: string; 'kubernetes.io'?: { pod?: { uid?: string } } };
  assert.equal(claims.sub, `system:serviceaccount:${NS}:default`);
  assert.equal(claims['kubernetes.io']?.pod?.uid, uid, 'the token is bound to the pod');
  const ca = await core.readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: NS });
  assert.equal(await cat('writer', `${SA_DIR}/ca.crt`), ca.data?.['ca.crt']);
  assert.equal(await cat('writer', `${SA_DIR}/namespace`), NS);
  assert.equal(await cat('writer', '/etc/app/app.conf'), 'v=1\n');
  assert.equal(await cat('writer', '/etc/secret/password'), 's3cret');
  assert.equal((await execIn(sim.endpoint, uid, 'writer', ['sh', '-c', 'echo "$MODE $PASS"'])).stdout, 'fast s3cret\n');
  assert.equal((await execIn(sim.endpoint, uid, 'reader', ['sh', '-c', 'echo "$CM_mode"'])).stdout, 'fast\n');
  const podDir = path.join(root, 'pods', uid);
  fs.writeFileSync(path.join(podDir, 'volumes', 'kubernetes.io~empty-dir', 'scratch', 'note'), 'shared\n');
  assert.equal(await cat('reader', '/shared/note'), 'shared\n', 'the emptyDir is shared by both containers');
  const tmpfs = mountsUnder(podDir).map((m) => path.relative(podDir, m)).sort();
  assert.deepEqual(tmpfs.map((m) => m.replace(/kube-api-access-\w+/, 'kube-api-access')), ['volumes/kubernetes.io~projected/kube-api-access', 'volumes/kubernetes.io~secret/sec'], 'secret and projected volumes on tmpfs');

  // 2. A configMap update reaches the running container.
  const t0 = performance.now();
  await core.replaceNamespacedConfigMap({ name: 'app-config', namespace: NS, body: { metadata: { name: 'app-config', namespace: NS }, data: { 'app.conf': 'v=2\n', mode: 'fast' } } });
  await pollUntil(async () => ((await cat('writer', '/etc/app/app.conf')) === 'v=2\n' ? true : undefined), { what: 'the configMap update in the container', timeoutMs: 60_000, intervalMs: 200 });
  t.diagnostic(`configMap update visible in the container after ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // 3. A missing required key: the kubelet's waiting reason; optional: Running.
  const missing = apiPod('missing-key', NS, NODE);
  missing.spec!.containers[0]!.env = [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'nope' } } }];
  const optional = apiPod('optional-key', NS, NODE);
  optional.spec!.containers[0]!.env = [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'nope', optional: true } } }];
  const [m, o] = await createPods(core, [missing, optional]);
  const waiting = await r.waitFor(() => r.pods.get(m!.metadata!.uid!)?.status?.containerStatuses?.[0]?.state?.waiting ?? undefined, 'the missing-key pod waiting', 60_000);
  await r.waitFor(() => (r.pods.get(m!.metadata!.uid!)?.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError' ? true : undefined), 'CreateContainerConfigError', 60_000);
  assert.equal(r.pods.get(m!.metadata!.uid!)?.status?.containerStatuses?.[0]?.state?.waiting?.message, `couldn't find key nope in ConfigMap ${NS}/app-config`);
  void waiting;
  await r.waitFor(() => { const p = r.pods.get(o!.metadata!.uid!); return p && isApiRunning(p) ? true : undefined; }, 'the optional-key pod Running', 60_000);

  // 4. Agent SIGKILL + restart: the volumes stay as they are, nothing restarts.
  const dataLink = path.join(podDir, 'volumes', 'kubernetes.io~configmap', 'cfg', '..data');
  const versionBefore = fs.readlinkSync(dataLink);
  const viewBefore = (await runtimeView(sim.endpoint)).get(uid);
  await agent.kill();
  assert.ok(fs.existsSync(path.join(podDir, 'volumes')), 'volumes survive the agent');
  agent = await startClusterAgent({ cp, nodeName: NODE, endpoint: sim.endpoint, rootDir: root });
  // The restarted agent has synced the pod once the token it requests shows up in the volume.
  await pollUntil(async () => ((await cat('writer', `${SA_DIR}/token`)) !== token ? true : undefined), { what: 'the restarted agent to sync the pod (a new token)', timeoutMs: 60_000, intervalMs: 250 });
  assert.equal(fs.readlinkSync(dataLink), versionBefore, 'the unchanged configMap volume was adopted, not rewritten');
  assert.equal(await cat('writer', '/etc/app/app.conf'), 'v=2\n');
  assert.equal(await cat('reader', '/shared/note'), 'shared\n', 'emptyDir content kept');
  assert.deepEqual((await runtimeView(sim.endpoint)).get(uid), viewBefore, 'same sandbox and containers, no restart');
  assert.equal(mountsUnder(podDir).length, 2, 'no second tmpfs mounted over the adopted ones');

  // 5. Deletion removes the volume directories and mounts.
  const del = await cp.kubectl(['delete', 'pod', '-n', NS, '--timeout=120s', 'vols'], { timeoutMs: 180_000 });
  assert.equal(del.code, 0, del.stderr);
  await pollUntil(() => (!fs.existsSync(podDir) ? true : undefined), { what: 'the pod directory removed', timeoutMs: 60_000, intervalMs: 200 });
  assert.deepEqual(mountsUnder(podDir), [], 'tmpfs mounts gone');
  assert.deepEqual(r.violations, []);
});

/** A pod with a disk emptyDir `cache` (sizeLimit 1Mi) mounted at /cache. */
function limitedPod(name: string): V1Pod {
  const p = apiPod(name, NS, NODE, { graceSeconds: 30 });
  p.spec!.volumes = [{ name: 'cache', emptyDir: { sizeLimit: '1Mi' } }];
  p.spec!.containers[0]!.volumeMounts = [{ name: 'cache', mountPath: '/cache' }];
  return p;
}

test('emptyDir sizeLimit: a pod writing past it is evicted (Failed, Evicted, the kubelet message, event, containers stopped, no restart); one under it keeps running', { timeout: 300_000 }, async (t) => {
  assert.ok(cp && sim && agent && rec);
  const { core } = coreApi(cp.adminKubeconfig);
  const r = rec;
  const [over, under] = await createPods(core, [limitedPod('over-limit'), limitedPod('under-limit')]);
  const overUid = over!.metadata!.uid!;
  const underUid = under!.metadata!.uid!;
  for (const uid of [overUid, underUid]) await r.waitFor(() => { const p = r.pods.get(uid); return p && isApiRunning(p) ? true : undefined; }, `pod ${uid} Running`, 60_000);
  const cacheDir = (uid: string): string => path.join(root, 'pods', uid, 'volumes', 'kubernetes.io~empty-dir', 'cache');
  fs.writeFileSync(path.join(cacheDir(underUid), 'half'), Buffer.alloc(512 * 1024, 1));
  const t0 = performance.now();
  fs.writeFileSync(path.join(cacheDir(overUid), 'blob'), Buffer.alloc(2 * 1024 * 1024, 2));
  const message = 'Usage of EmptyDir volume "cache" exceeds the limit "1Mi". ';

  // Within two monitoring periods (10 s each) and a status write.
  const failed = await r.waitFor(() => { const p = r.pods.get(overUid); return p?.status?.phase === 'Failed' ? p : undefined; }, 'the over-limit pod Failed in the API', 60_000);
  t.diagnostic(`evicted ${((performance.now() - t0) / 1000).toFixed(1)} s after the write`);
  assert.equal(failed.status?.reason, 'Evicted');
  assert.equal(failed.status?.message, message);
  assert.ok((failed.status?.containerStatuses ?? []).every((c) => c.state?.terminated), 'every container shown terminated');
  const ev = await pollUntil(async () => {
    const list = await core.listNamespacedEvent({ namespace: NS, fieldSelector: `involvedObject.uid=${overUid}` });
    return list.items.find((e) => e.reason === 'Evicted');
  }, { what: 'the Evicted event', timeoutMs: 30_000, intervalMs: 250 });
  assert.equal(ev.type, 'Warning');
  assert.equal(ev.message, message);
  const stopped = (await runtimeView(sim.endpoint)).get(overUid);
  assert.ok(stopped && stopped.containers.length === 1 && stopped.containers.every((c) => c.state === 'CONTAINER_EXITED'), `the container stopped: ${JSON.stringify(stopped)}`);
  assert.ok(stopped.sandboxes.every((s) => s.state === 'SANDBOX_NOTREADY'), 'the sandbox stopped');
  assert.equal(r.pods.get(underUid)?.status?.phase, 'Running', 'the pod under its limit is not evicted');

  // The pod under its limit keeps running until it goes past it too; by then the evicted pod
  // had at least one more monitoring period and resync to be restarted in, and was not.
  const seenBefore = (r.history.get(underUid) ?? []).length;
  assert.ok((r.history.get(underUid) ?? []).every((s) => s.phase !== 'Failed'), 'never Failed while under its limit');
  fs.writeFileSync(path.join(cacheDir(underUid), 'more'), Buffer.alloc(1024 * 1024, 3));
  await r.waitFor(() => (r.pods.get(underUid)?.status?.reason === 'Evicted' ? true : undefined), 'the second pod evicted once past its limit', 60_000);
  assert.ok(seenBefore > 0);
  const later = (await runtimeView(sim.endpoint)).get(overUid);
  assert.deepEqual(later?.containers, stopped.containers, 'the evicted pod was not restarted (no new container)');
  assert.equal(r.pods.get(overUid)?.status?.phase, 'Failed');
  assert.deepEqual(r.violations, []);
  const metrics = await agent.get('/metrics');
  assert.match(metrics.body, /^kubelet_evictions\{eviction_signal="emptydirfs\.limit"\} 2$/m, 'kubelet_evictions counts both');
  const logs = agent.logs.filter((l) => l.includes('Evicting pod'));
  assert.equal(logs.length, 2, `one "Evicting pod" log line per pod: ${logs.join('\n')}`);
});
