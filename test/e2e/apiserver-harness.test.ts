/**
 * The kube-apiserver harness against itself: a real etcd + kube-apiserver v1.20.2 (Node,RBAC +
 * NodeRestriction), used the way the cluster-mode tests and the bench use it.
 *
 * - start → /readyz ok; a namespace and its ServiceAccount `default`;
 * - the node identity may list pods with `spec.nodeName=<node>` and sees a pod created by kubectl
 *   as admin; it may not read a secret that only another node's pod uses (Node authorizer; 1.20
 *   still lets every node read every pod) nor create a non-mirror pod (NodeRestriction);
 * - a strategic-merge status PATCH by the node identity works (the pod create before it proves the
 *   reflect2 patch: without it the apiserver panics on every pod create), a PATCH carrying another
 *   UID is refused with 422, and one to another node's pod with 403;
 * - bearer-token kubeconfigs (admin, and a node identity) authenticate;
 * - compact() → a watch from a resourceVersion seen before it gets 410; one from after it works;
 * - apiserver_request_total counts the status PATCH; kill/restart keeps port and data;
 * - stop() is idempotent and leaves no process, port or file;
 * - two instances at once do not share ports, files, data or trust;
 * - a control plane whose owner was SIGKILLed is reclaimed by the next start; one whose owner
 *   exited without stop() is taken down by the owner's exit hook.
 *
 * The first run on a bare machine builds kube-apiserver (~6 min), hence the generous before-hook
 * bound; later starts take ~5 s.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ApiException, CoreV1Api, KubeConfig, PatchStrategy, Watch, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../harness/apiserver-harness.js';
import { portFree } from '../harness/apiserver-slots.js';
import { isAlive } from '../harness/host-processes.js';
import { pollUntil } from '../harness/poll.js';

const NS = 'smoke';
const NODE = 'node-a';
const OTHER_NODE = 'node-b';
const TOKEN_NODE = 'node-t';
let cp: ControlPlane | undefined;

before(async () => {
  cp = await startControlPlane({ tokenUsers: [{ name: `system:node:${TOKEN_NODE}`, groups: ['system:nodes'] }] });
}, { timeout: 30 * 60_000 });

after(async () => {
  await cp?.stop();
}, { timeout: 60_000 });

function client(kubeconfig: string): { kc: KubeConfig; core: CoreV1Api } {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return { kc, core: kc.makeApiClient(CoreV1Api) };
}

function podManifest(name: string, nodeName: string): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      nodeName,
      automountServiceAccountToken: false,
      containers: [{ name: 'main', image: 'docker.io/local/busybox:1', command: ['sleep', '100000'] }],
    },
  };
}

async function apiCode(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (err) {
    if (err instanceof ApiException) return err.code;
    throw err;
  }
}

/**
 * Opens a watch and resolves with the first event (type and object) or the error that ended it.
 * Bounded: aborts after `ms` and rejects.
 */
async function firstWatchEvent(kc: KubeConfig, path: string, query: Record<string, string>, ms: number): Promise<{ type: string; obj: unknown }> {
  const w = new Watch(kc);
  let ctl: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no watch event on ${path} within ${ms} ms`)), ms);
      w.watch(path, query, (type, obj) => resolve({ type, obj }), (err) => resolve({ type: 'DONE', obj: err }))
        .then((c) => {
          ctl = c;
        })
        .catch(reject);
    });
  } finally {
    clearTimeout(timer);
    ctl?.abort();
  }
}

test('control plane: node identity, NodeRestriction, status PATCH, compaction 410, kill/restart, metrics', { timeout: 300_000 }, async () => {
  assert.ok(cp);
  assert.match(cp.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  const ready = await cp.kubectl(['get', '--raw', '/readyz']);
  assert.equal(ready.code, 0, ready.stderr);
  assert.equal(ready.stdout.trim(), 'ok');

  await cp.ensureNamespace(NS);
  await cp.ensureNamespace(NS); // idempotent
  const admin = client(cp.adminKubeconfig);
  const sa = await admin.core.readNamespacedServiceAccount({ name: 'default', namespace: NS });
  assert.equal(sa.metadata?.name, 'default');
  const rootCa = await admin.core.readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: NS });
  assert.equal(rootCa.data?.['ca.crt'], fs.readFileSync(cp.caFile, 'utf8'));

  // Bearer tokens: the built-in admin, and a node identity declared at start.
  const byToken = await cp.kubectl(['get', 'namespace', NS, '-o', 'name'], { kubeconfig: cp.tokenKubeconfig() });
  assert.equal(byToken.stdout.trim(), `namespace/${NS}`, byToken.stderr);
  const tokenNode = client(cp.tokenKubeconfig(`system:node:${TOKEN_NODE}`));
  assert.deepEqual((await tokenNode.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${TOKEN_NODE}` })).items, []);
  assert.equal(await apiCode(tokenNode.core.createNamespacedPod({ namespace: NS, body: podManifest('by-token-node', TOKEN_NODE) })), 403, 'the token node is a node');
  assert.throws(() => cp!.tokenKubeconfig('nobody'), { code: 'ERR_HARNESS_BAD_NAME' });

  // Names that would become paths or subjects are refused.
  assert.throws(() => cp!.nodeKubeconfig('../evil'), { code: 'ERR_HARNESS_BAD_NAME' });
  assert.throws(() => cp!.nodeKubeconfig('a/b'), { code: 'ERR_HARNESS_BAD_NAME' });
  await assert.rejects(cp.ensureNamespace('Bad_NS'), { code: 'ERR_HARNESS_BAD_NAME' });

  const node = client(cp.nodeKubeconfig(NODE));
  assert.equal(cp.nodeKubeconfig(NODE), cp.nodeKubeconfig(NODE), 'one kubeconfig per node name');
  const empty = await node.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${NODE}` });
  assert.deepEqual(empty.items, []);

  // A pod on this node, created by kubectl as admin (the create itself would panic the apiserver without the reflect2 patch).
  const created = await cp.kubectl(['apply', '-f', '-', '-o', 'json'], { stdin: JSON.stringify(podManifest('mine', NODE)) });
  assert.equal(created.code, 0, created.stderr);
  const mine = JSON.parse(created.stdout) as V1Pod;
  assert.ok(mine.metadata?.uid);
  // A pod on another node, created through the client library, using a secret.
  await admin.core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'theirs-secret' }, stringData: { k: 'v' } } });
  const theirsPod = podManifest('theirs', OTHER_NODE);
  theirsPod.spec!.containers[0]!.env = [{ name: 'K', valueFrom: { secretKeyRef: { name: 'theirs-secret', key: 'k' } } }];
  const theirs = await admin.core.createNamespacedPod({ namespace: NS, body: theirsPod });

  const listed = await node.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${NODE}` });
  assert.deepEqual(listed.items.map((p) => [p.metadata?.name, p.metadata?.uid]), [['mine', mine.metadata.uid]]);
  // Node authorizer (1.20): a node reads only the secrets its own pods reference. (Pods themselves
  // are readable by every node before 1.32's AuthorizeNodeWithSelectors.) The authorizer's graph
  // follows the pod asynchronously, hence the bounded wait for the other node's access.
  const other = client(cp.nodeKubeconfig(OTHER_NODE));
  await pollUntil(async () => ((await apiCode(other.core.readNamespacedSecret({ name: 'theirs-secret', namespace: NS }))) === 200 ? true : undefined), {
    what: `${OTHER_NODE} allowed to read its pod's secret`,
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  assert.equal(await apiCode(node.core.readNamespacedSecret({ name: 'theirs-secret', namespace: NS })), 403, 'Node authorizer: another node\'s secret');
  // NodeRestriction: a node creates mirror pods only.
  assert.equal(await apiCode(node.core.createNamespacedPod({ namespace: NS, body: podManifest('by-node', NODE) })), 403, 'NodeRestriction: no plain pod from a node');

  // Status PATCH (strategic merge) as the node, UID as precondition, as the kubelet does.
  const smp = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
  const patched = await node.core.patchNamespacedPodStatus(
    { name: 'mine', namespace: NS, body: { metadata: { uid: mine.metadata.uid }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } } },
    smp,
  );
  assert.equal(patched.status?.phase, 'Running');
  const seen = await admin.core.readNamespacedPod({ name: 'mine', namespace: NS });
  assert.equal(seen.status?.phase, 'Running');
  assert.equal(seen.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  assert.equal(
    await apiCode(node.core.patchNamespacedPodStatus({ name: 'mine', namespace: NS, body: { metadata: { uid: theirs.metadata?.uid }, status: { phase: 'Failed' } } }, smp)),
    422,
    'a UID precondition that does not match is refused',
  );
  assert.equal(
    await apiCode(node.core.patchNamespacedPodStatus({ name: 'theirs', namespace: NS, body: { status: { phase: 'Running' } } }, smp)),
    403,
    'NodeRestriction: not another node\'s pod',
  );

  // The API server's own request counter saw the PATCH.
  const metrics = await cp.metricsText();
  const patchLines = metrics.split('\n').filter((l) => l.startsWith('apiserver_request_total{') && l.includes('verb="PATCH"') && l.includes('resource="pods"') && l.includes('subresource="status"'));
  assert.ok(patchLines.some((l) => l.includes('code="200"')), `apiserver_request_total has the status PATCH:\n${patchLines.join('\n')}`);

  // Compaction: a watch from a resourceVersion seen before it is expired; one from after it works.
  const before = await node.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${NODE}` });
  const oldRv = before.metadata?.resourceVersion;
  assert.ok(oldRv);
  const compactedAt = await cp.compact();
  assert.ok(compactedAt > Number(oldRv), `compacted at ${compactedAt} > ${oldRv}`);
  const expired = await firstWatchEvent(node.kc, '/api/v1/pods', { fieldSelector: `spec.nodeName=${NODE}`, resourceVersion: oldRv }, 30_000);
  const code = expired.type === 'ERROR' ? (expired.obj as { code?: number }).code : undefined;
  assert.equal(code, 410, `watch from ${oldRv} after compaction: ${expired.type} ${JSON.stringify(expired.obj)}`);
  const fresh = await node.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${NODE}` });
  const watching = firstWatchEvent(node.kc, '/api/v1/pods', { fieldSelector: `spec.nodeName=${NODE}`, resourceVersion: fresh.metadata?.resourceVersion ?? '' }, 30_000);
  const labelled = await cp.kubectl(['label', 'pod', '-n', NS, 'mine', 'seen=yes']);
  assert.equal(labelled.code, 0, labelled.stderr);
  const ev = await watching;
  assert.equal(ev.type, 'MODIFIED');
  assert.equal((ev.obj as V1Pod).metadata?.labels?.['seen'], 'yes');

  // Kill and restart: same port, same etcd data.
  const pid1 = cp.apiserverPid;
  assert.ok(pid1 !== undefined && isAlive(pid1));
  await cp.killApiserver();
  assert.equal(cp.apiserverPid, undefined);
  assert.equal(isAlive(pid1), false);
  const down = await cp.kubectl(['get', '--raw', '/readyz', '--request-timeout=5s'], { timeoutMs: 30_000 });
  assert.notEqual(down.code, 0, 'apiserver is down');
  await cp.killApiserver(); // idempotent
  await cp.restartApiserver();
  const pid2 = cp.apiserverPid;
  assert.ok(pid2 !== undefined && pid2 !== pid1 && isAlive(pid2));
  const again = await node.core.readNamespacedPod({ name: 'mine', namespace: NS });
  assert.equal(again.metadata?.uid, mine.metadata.uid);
  assert.equal(again.status?.phase, 'Running');

  // stop(): idempotent; no daemon, port or file left.
  const { tmpDir, port, etcdPid } = cp;
  await Promise.all([cp.stop(), cp.stop()]);
  assert.equal(isAlive(pid2), false);
  assert.equal(isAlive(etcdPid), false);
  assert.equal(fs.existsSync(tmpDir), false);
  assert.equal(await portFree(port), true);
  await assert.rejects(cp.kubectl(['version']), { code: 'ERR_HARNESS_STOPPED' });
  assert.throws(() => cp!.nodeKubeconfig('n2'), { code: 'ERR_HARNESS_STOPPED' });
});

const harnessModule = fileURLToPath(new URL('../harness/apiserver-harness.js', import.meta.url));

test('a control plane whose owner was SIGKILLed is reclaimed by the next start', { timeout: 600_000 }, async () => {
  // The owner: a separate process that starts a control plane, reports it, and is then killed
  // without any cleanup (no stop(), no exit hook: SIGKILL).
  const script = `import(${JSON.stringify(harnessModule)}).then(async (m) => {
    const cp = await m.startControlPlane();
    process.stdout.write(JSON.stringify({ tmpDir: cp.tmpDir, apiserverPid: cp.apiserverPid, etcdPid: cp.etcdPid, port: cp.port }) + '\\n');
    setInterval(() => {}, 60_000);
  });`;
  const owner = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  owner.stdout.setEncoding('utf8');
  const reported = new Promise<{ tmpDir: string; apiserverPid: number; etcdPid: number; port: number }>((resolve, reject) => {
    owner.stdout.on('data', (d: string) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)) as { tmpDir: string; apiserverPid: number; etcdPid: number; port: number });
    });
    owner.once('exit', (c, s) => reject(new Error(`owner exited (${c ?? s}) before reporting`)));
  });
  let timer: NodeJS.Timeout | undefined;
  const info = await Promise.race([
    reported,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('owner did not start a control plane within 300 s')), 300_000);
    }),
  ]).finally(() => clearTimeout(timer));
  const ownerExited = new Promise<void>((resolve) => owner.once('exit', () => resolve()));
  owner.kill('SIGKILL');
  await ownerExited;
  assert.ok(isAlive(info.apiserverPid) && isAlive(info.etcdPid), 'the killed owner left both daemons running');
  assert.ok(fs.existsSync(info.tmpDir));

  const next = await startControlPlane();
  try {
    await pollUntil(() => (isAlive(info.apiserverPid) || isAlive(info.etcdPid) ? undefined : true), { what: 'the stale daemons to exit', timeoutMs: 15_000 });
    assert.equal(fs.existsSync(info.tmpDir), false, 'stale temp dir removed');
    const r = await next.kubectl(['get', '--raw', '/readyz']);
    assert.equal(r.stdout.trim(), 'ok');
  } finally {
    await next.stop();
  }
});

test('a process that exits without stop() takes its control plane with it', { timeout: 600_000 }, async () => {
  const script = `import(${JSON.stringify(harnessModule)}).then(async (m) => {
    const cp = await m.startControlPlane();
    process.stdout.write(JSON.stringify({ apiserverPid: cp.apiserverPid, etcdPid: cp.etcdPid, tmpDir: cp.tmpDir }) + '\\n');
    process.exit(3);
  });`;
  const owner = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  owner.stdout.setEncoding('utf8');
  owner.stdout.on('data', (d: string) => {
    out += d;
  });
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    new Promise<number | null>((resolve) => owner.once('exit', (c) => resolve(c))),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('owner did not start and exit within 300 s')), 300_000);
    }),
  ]).finally(() => clearTimeout(timer));
  assert.equal(code, 3, out);
  const info = JSON.parse(out.trim()) as { apiserverPid: number; etcdPid: number; tmpDir: string };
  assert.equal(fs.existsSync(info.tmpDir), false, 'temp dir removed by the exit hook');
  await pollUntil(() => (isAlive(info.apiserverPid) || isAlive(info.etcdPid) ? undefined : true), { what: 'the exited owner\'s daemons to die', timeoutMs: 15_000 });
});

test('two control planes at once: own ports, own temp dirs, own data', { timeout: 600_000 }, async () => {
  const [a, b] = await Promise.all([startControlPlane(), startControlPlane()]);
  try {
    assert.notEqual(a.port, b.port);
    assert.notEqual(a.etcdEndpoint, b.etcdEndpoint);
    assert.notEqual(a.tmpDir, b.tmpDir);
    await a.ensureNamespace('only-in-a');
    const inB = await b.kubectl(['get', 'namespace', 'only-in-a']);
    assert.notEqual(inB.code, 0, 'b has its own etcd');
    assert.match(inB.stderr, /NotFound|not found/);
    // Each CA is its own: a's admin kubeconfig is not trusted by b's server.
    const cross = await b.kubectl([`--server=${a.url}`, 'get', '--raw', '/readyz', '--request-timeout=10s'], { timeoutMs: 30_000 });
    assert.notEqual(cross.code, 0, 'b\'s CA does not verify a\'s serving certificate');
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
});
