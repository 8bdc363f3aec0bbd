/**
 * The core volume scenario on real containerd (private instance, real bind mounts and tmpfs;
 * needs root, nothing skipped) against a real kube-apiserver with the node identity: the pod of
 * cluster-volumes.ts (kube-api-access, configMap, secret, shared emptyDir, env) reaches Running
 * in the API; inside the busybox containers (ExecSync through CRI) `cat` reads the token, the CA
 * and a configMap key, one container writes into the emptyDir and the other reads it; deleting
 * the pod removes its volume directories and tmpfs mounts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startContainerd, type ContainerdInstance } from '../harness/containerd-harness.js';
import { startControlPlane, type ControlPlane } from '../harness/apiserver-harness.js';
import { pollUntil, removeAgentRoot, type AgentProcess } from './agent-harness.js';
import { coreApi, createPods, isApiRunning, PodWatchRecorder, startClusterAgent } from './cluster-harness.js';
import { createAppObjects, execIn, SA_DIR, volumesPod } from './cluster-volumes.js';

const NS = 'ctrd-vol';
const NODE = 'node-ctrd-vol';
let cp: ControlPlane | undefined;
let ctrd: ContainerdInstance | undefined;
let agent: AgentProcess | undefined;
let rec: PodWatchRecorder | undefined;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-ctrd-vol-'));

before(async () => {
  cp = await startControlPlane();
  await cp.ensureNamespace(NS);
  ctrd = await startContainerd();
}, { timeout: 30 * 60_000 });

after(async () => {
  rec?.close();
  await agent?.kill();
  await ctrd?.stop();
  await cp?.stop();
  removeAgentRoot(root);
}, { timeout: 120_000 });

test('cluster volumes on containerd: token, CA and configMap key read inside busybox; shared emptyDir; env; deletion cleans up', { timeout: 300_000 }, async (t) => {
  assert.ok(cp && ctrd);
  const { core } = coreApi(cp.adminKubeconfig);
  const r = (rec = new PodWatchRecorder(cp.adminKubeconfig, NS));
  await r.start();
  agent = await startClusterAgent({ cp, nodeName: NODE, endpoint: ctrd.endpoint, rootDir: root });
  await createAppObjects(core, NS, 'v=1\n');
  const [pod] = await createPods(core, [volumesPod('vols', NS, NODE)]);
  const uid = pod!.metadata!.uid!;
  await r.waitFor(() => { const p = r.pods.get(uid); return p && isApiRunning(p) ? true : undefined; }, 'the volumes pod Running in the API on containerd', 120_000);

  const exec = (c: string, cmd: string[]) => execIn(ctrd!.endpoint, uid, c, cmd);
  const cat = async (c: string, file: string): Promise<string> => {
    const out = await exec(c, ['cat', file]);
    assert.equal(out.exitCode, 0, `cat ${file}: ${out.stderr}`);
    return out.stdout;
  };
  const token = await cat('writer', `${SA_DIR}/token`);
  const ca = await cat('writer', `${SA_DIR}/ca.crt`);
  const conf = await cat('writer', '/etc/app/app.conf');
  t.diagnostic(`inside busybox on containerd: token ${token.slice(0, 24)}… (${token.length} bytes), ca.crt ${ca.split('\n')[0]} (${ca.length} bytes), /etc/app/app.conf ${JSON.stringify(conf)}`);
  assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  assert.equal(ca, (await core.readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: NS })).data?.['ca.crt']);
  assert.equal(conf, 'v=1\n');
  assert.equal(await cat('writer', `${SA_DIR}/namespace`), NS);
  assert.equal(await cat('writer', '/etc/secret/password'), 's3cret');
  assert.equal((await exec('writer', ['/bin/sh', '-c', 'echo "$MODE $PASS"'])).stdout, 'fast s3cret\n');
  assert.equal((await exec('writer', ['/bin/sh', '-c', 'echo shared > /scratch/note'])).exitCode, 0);
  assert.equal(await cat('reader', '/shared/note'), 'shared\n', 'the emptyDir is shared by both containers');
  const ro = await exec('reader', ['/bin/sh', '-c', 'echo x > /shared/other']);
  assert.notEqual(ro.exitCode, 0, 'a readOnly mount is read-only in the container');
  const secretWrite = await exec('writer', ['/bin/sh', '-c', 'echo x > /etc/secret/new']);
  assert.notEqual(secretWrite.exitCode, 0, 'secret volumes are mounted read-only');
  const inMount = (await exec('writer', ['/bin/sh', '-c', 'grep -E " /etc/secret | /var/run/secrets/kubernetes.io/serviceaccount " /proc/self/mounts'])).stdout;
  t.diagnostic(`mounts inside the container: ${inMount.trim().replace(/\n/g, ' | ')}`);
  assert.equal(inMount.split('\n').filter((l) => l.startsWith('tmpfs ')).length, 2, 'secret and projected volumes are tmpfs inside the container');

  const podDir = path.join(root, 'pods', uid);
  const del = await cp.kubectl(['delete', 'pod', '-n', NS, '--timeout=120s', 'vols'], { timeoutMs: 180_000 });
  assert.equal(del.code, 0, del.stderr);
  await pollUntil(() => (!fs.existsSync(podDir) ? true : undefined), { what: 'the pod directory removed', timeoutMs: 60_000, intervalMs: 250 });
  const left = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => (l.split(' ')[4] ?? '').startsWith(`${podDir}/`));
  assert.deepEqual(left, [], 'no tmpfs left mounted');
  assert.deepEqual(r.violations, []);
});
