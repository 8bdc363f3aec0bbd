/**
 * Cluster mode, the Node and its Lease, against a real kube-apiserver (Node,RBAC +
 * NodeRestriction) with the agent holding a node identity `system:node:<name>`, on the simulated
 * runtime:
 * - the Node appears Ready with capacity/allocatable (reserved subtracted), addresses
 *   (--node-ip), nodeInfo (CRI Version), daemon endpoint, the four conditions with the kubelet's
 *   reasons, and the --node-labels / --register-with-taints flags;
 * - the Lease in kube-node-lease names the node, lasts 40 s, is owned by the Node and is renewed
 *   every 10 s (±2 s) — renewTimes read through a watch on the API, from a renewal before a burst
 *   of 400 API pods to one after they all run — and no renewal is more than 2 s late by the
 *   agent's own measure (the 1,000-pod burst and the 1 s target are the bench's);
 * - the runtime stopped → Ready False (KubeletNotReady, "container runtime is down") within 40 s;
 *   restarted → Ready True;
 * - SIGTERM leaves the Node registered and the pods running;
 * - the same identity started as another node is refused with a clear error and exits.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { startSimRuntime, type ManagedProcess } from '../../bench/processes.js';
import { realClock } from '../../src/shared/clock/clock.js';
import { startControlPlane, type ControlPlane } from '../harness/apiserver-harness.js';
import { freePort, pollUntil, runtimeView, startAgent, type AgentProcess } from './agent-harness.js';

const NODE = 'n-lease';
const NS = 'nl';
const IMAGE = 'docker.io/local/busybox:1';
const PODS = 400;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-node-'));
const manifests = path.join(root, 'manifests');
const socket = path.join(root, 'sim.sock');
const endpoint = `unix://${socket}`;

let cp: ControlPlane | undefined;
let sim: ManagedProcess | undefined;
let agent: AgentProcess | undefined;
let securePort = 0;

interface Obj { metadata: { uid: string; labels?: Record<string, string>; ownerReferences?: { kind: string; name: string; uid: string }[] }; spec: Record<string, unknown>; status: Record<string, unknown> }

async function getJson<T>(args: string[]): Promise<T> {
  const r = await cp!.kubectl([...args, '-o', 'json']);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

function condition(node: Obj, type: string): { status: string; reason: string; message: string } | undefined {
  return (node.status['conditions'] as { type: string; status: string; reason: string; message: string }[] | undefined)?.find((c) => c.type === type);
}

function startRuntime(): Promise<ManagedProcess> {
  return startSimRuntime({ socket, profile: 'zero', images: [IMAGE], clock: realClock });
}

before(async () => {
  fs.mkdirSync(manifests);
  cp = await startControlPlane();
  await cp.ensureNamespace('kube-node-lease');
  await cp.ensureNamespace(NS);
  sim = await startRuntime();
  securePort = await freePort();
  agent = await startAgent({
    endpoint, manifestDir: manifests, nodeName: NODE, workers: 2, maxPods: 1000,
    extraArgs: [
      '--kubeconfig', cp.nodeKubeconfig(NODE),
      '--node-labels', 'node.kubernetes.io/pool=dense,example.com/tier=gold',
      '--register-with-taints', 'dedicated=dense:NoSchedule',
      '--system-reserved', 'cpu=500m,memory=256Mi',
      '--kube-reserved', 'memory=256Mi',
      '--node-ip', '10.11.12.13',
      // The secure kubelet port (self-signed, AlwaysAllow is not needed: nothing calls it here)
      // is what the Node advertises as daemonEndpoints.kubeletEndpoint, as with a kubelet.
      '--port', String(securePort),
    ],
  });
}, { timeout: 30 * 60_000 });

after(async () => {
  await agent?.kill();
  await sim?.stop(2_000);
  await cp?.stop();
  fs.rmSync(root, { recursive: true, force: true });
}, { timeout: 60_000 });

test('the Node registers Ready with capacity, allocatable, addresses, nodeInfo, conditions, labels and taints', async () => {
  const node = await pollUntil(async () => {
    const n = await getJson<Obj>(['get', 'node', NODE]).catch(() => undefined);
    return n !== undefined && condition(n, 'Ready')?.status === 'True' ? n : undefined;
  }, { what: 'the Node Ready', timeoutMs: 60_000, intervalMs: 500 });
  const cpus = os.availableParallelism();
  const cap = node.status['capacity'] as Record<string, string>;
  const alloc = node.status['allocatable'] as Record<string, string>;
  assert.equal(cap['cpu'], String(cpus));
  // The server canonicalises quantities (1000 → "1k"), as for a kubelet's.
  assert.equal(cap['pods'], '1k');
  assert.equal(alloc['pods'], '1k');
  assert.equal(alloc['cpu'], `${cpus * 1000 - 500}m`, 'system-reserved cpu subtracted');
  const total = os.totalmem();
  const toBytes = (q: string): number => (q.endsWith('Ki') ? Number(q.slice(0, -2)) * 1024 : Number(q));
  assert.equal(toBytes(cap['memory']!), total);
  assert.equal(toBytes(alloc['memory']!), total - 512 * 1024 * 1024, 'system- and kube-reserved memory subtracted');
  assert.ok(toBytes(cap['ephemeral-storage']!) > 0, 'ephemeral-storage capacity');
  assert.deepEqual(node.status['addresses'], [{ type: 'InternalIP', address: '10.11.12.13' }, { type: 'Hostname', address: NODE }]);
  const info = node.status['nodeInfo'] as Record<string, string>;
  assert.match(info['containerRuntimeVersion']!, /^shardlet-sim:\/\/.+/);
  assert.equal(info['kubeletVersion'], 'v0.1.0-shardlet');
  assert.equal(info['kernelVersion'], os.release());
  assert.equal(info['operatingSystem'], 'linux');
  assert.ok(info['osImage'] !== '', 'osImage');
  assert.ok((node.status['daemonEndpoints'] as { kubeletEndpoint: { Port: number } }).kubeletEndpoint.Port === securePort);
  assert.deepEqual(condition(node, 'Ready'), { ...condition(node, 'Ready'), reason: 'KubeletReady', message: 'kubelet is posting ready status' });
  assert.equal(condition(node, 'MemoryPressure')?.reason, 'KubeletHasSufficientMemory');
  assert.equal(condition(node, 'DiskPressure')?.reason, 'KubeletHasNoDiskPressure');
  assert.equal(condition(node, 'PIDPressure')?.reason, 'KubeletHasSufficientPID');
  for (const t of ['MemoryPressure', 'DiskPressure', 'PIDPressure']) assert.equal(condition(node, t)?.status, 'False');
  const labels = node.metadata.labels ?? {};
  assert.equal(labels['kubernetes.io/hostname'], NODE);
  assert.equal(labels['kubernetes.io/os'], 'linux');
  assert.ok(labels['kubernetes.io/arch']);
  assert.equal(labels['node.kubernetes.io/pool'], 'dense');
  assert.equal(labels['example.com/tier'], 'gold');
  // The apiserver's TaintNodesByCondition admission adds node.kubernetes.io/not-ready:NoSchedule to
  // a new Node (the node lifecycle controller, not run here, removes it once Ready).
  const taints = (node.spec['taints'] as { key: string }[]).filter((t) => t.key !== 'node.kubernetes.io/not-ready');
  assert.deepEqual(taints, [{ key: 'dedicated', value: 'dense', effect: 'NoSchedule' }]);
  const images = node.status['images'] as { names: string[] }[];
  assert.ok(images.some((i) => i.names.includes(IMAGE)), 'images from CRI');
});

test(`the Lease is owned by the Node and renewed every 10 s (±2 s) while ${PODS} API pods start`, async () => {
  const node = await getJson<Obj>(['get', 'node', NODE]);
  // The Lease as the API server holds it, read through a watch (admin identity): every renewTime.
  const renewals: { renewTime: number; seenAt: number }[] = [];
  let leaseObj: Obj | undefined;
  const kc = new KubeConfig();
  kc.loadFromFile(cp!.adminKubeconfig);
  const watch = await new Watch(kc).watch('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', { fieldSelector: `metadata.name=${NODE}` }, (_type, obj) => {
    leaseObj = obj as Obj;
    const t = Date.parse(String(leaseObj.spec['renewTime']));
    if (Number.isFinite(t) && renewals.at(-1)?.renewTime !== t) renewals.push({ renewTime: t, seenAt: Date.now() });
  }, () => {});
  try {
    // One renewal before the burst, so the first gap measured spans its start.
    await pollUntil(() => (renewals.length >= 1 ? true : undefined), { what: 'the Lease', timeoutMs: 30_000, intervalMs: 100 });
    const items = Array.from({ length: PODS }, (_, i) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${i}`, namespace: NS },
      spec: { nodeName: NODE, automountServiceAccountToken: false, tolerations: [{ key: 'dedicated', operator: 'Exists' }], terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: IMAGE, command: ['sleep', '100000'] }] },
    }));
    const burstStart = Date.now();
    const r = await cp!.kubectl(['create', '-f', '-'], { stdin: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }), timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr);
    await pollUntil(async () => {
      const x = await cp!.kubectl(['-n', NS, 'get', 'pods', '--field-selector=status.phase=Running', '-o', 'name']);
      return x.code === 0 && x.stdout.trim().split('\n').filter((l) => l !== '').length === PODS ? true : undefined;
    }, { what: `${PODS} pods Running in the API`, timeoutMs: 120_000, intervalMs: 1_000 });
    const burstEnd = Date.now();
    // The burst is covered when a renewal came after it and at least 3 gaps were seen.
    await pollUntil(() => (renewals.length >= 4 && renewals.at(-1)!.seenAt > burstEnd ? true : undefined), { what: 'renewals spanning the burst', timeoutMs: 40_000, intervalMs: 250 });
    const l = leaseObj!;
    assert.equal(l.spec['holderIdentity'], NODE);
    assert.equal(l.spec['leaseDurationSeconds'], 40);
    assert.deepEqual(l.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.uid]), [['Node', NODE, node.metadata.uid]]);
    const during = renewals.filter((x) => x.seenAt >= burstStart && x.seenAt <= burstEnd).length;
    const gaps = renewals.slice(1).map((x, i) => x.renewTime - renewals[i]!.renewTime);
    const all = `gaps ${gaps.join(', ')} ms; burst ${burstEnd - burstStart} ms with ${during} renewals in it`;
    for (const g of gaps) assert.ok(g >= 8_000 && g <= 12_000, `renewal gap ${g} ms not within 10 s ± 2 s (${all})`);
    // The agent's own measure (due → the server's answer): no renewal more than 2 s late (the
    // issue's 1 s target is the bench's PASS/FAIL, measured at 1,000 pods).
    const metrics = (await agent!.get('/metrics')).body;
    const le2 = /shardlet_node_lease_renew_lateness_seconds_bucket\{result="ok",le="2"\} (\d+)/.exec(metrics);
    const count = /shardlet_node_lease_renew_lateness_seconds_count\{result="ok"\} (\d+)/.exec(metrics);
    assert.ok(le2 && count && Number(count[1]) >= 4 && le2[1] === count[1], `lease lateness ≤ 2 s for every renewal (${all}):\n${metrics.split('\n').filter((x) => x.includes('lease')).join('\n')}`);
    assert.ok(!metrics.includes('shardlet_node_lease_renew_lateness_seconds_count{result="failed"}'), 'no failed renewal');
  } finally {
    watch.abort();
  }
});

test('the runtime stopped turns Ready False with the reason within 40 s; restarted, Ready True', async () => {
  await sim!.stop(2_000);
  const stoppedAt = Date.now();
  const notReady = await pollUntil(async () => {
    const c = condition(await getJson<Obj>(['get', 'node', NODE]), 'Ready');
    return c?.status === 'False' ? c : undefined;
  }, { what: 'Ready False', timeoutMs: 60_000, intervalMs: 500 });
  const took = Date.now() - stoppedAt;
  assert.ok(took <= 40_000, `Ready False after ${took} ms`);
  assert.equal(notReady.reason, 'KubeletNotReady');
  assert.match(notReady.message, /container runtime is down/);
  sim = await startRuntime();
  await pollUntil(async () => (condition(await getJson<Obj>(['get', 'node', NODE]), 'Ready')?.status === 'True' ? true : undefined), { what: 'Ready True again', timeoutMs: 30_000, intervalMs: 500 });
});

test('SIGTERM leaves the Node registered and the pods running', async () => {
  await pollUntil(async () => {
    const v = await runtimeView(endpoint);
    return [...v.values()].filter((p) => p.containers.some((c) => c.state === 'CONTAINER_RUNNING')).length === PODS ? true : undefined;
  }, { what: 'the pods running again in the new runtime', timeoutMs: 120_000, intervalMs: 1_000 });
  assert.equal(await agent!.stop(), 0);
  const node = await getJson<Obj>(['get', 'node', NODE]);
  assert.equal(node.metadata.labels?.['kubernetes.io/hostname'], NODE);
  const v = await runtimeView(endpoint);
  assert.equal([...v.values()].filter((p) => p.containers.some((c) => c.state === 'CONTAINER_RUNNING')).length, PODS);
});

test("a node identity started as another node is refused with a clear error and exits (no retry loop)", async () => {
  const other = await startAgent({ endpoint, manifestDir: manifests, nodeName: 'n-other', workers: 0, extraArgs: ['--kubeconfig', cp!.nodeKubeconfig(NODE)] });
  const code = await pollUntil(async () => (other.running() ? undefined : other.stop()), { what: 'the agent to exit', timeoutMs: 30_000, intervalMs: 200 });
  assert.equal(code, 1);
  const refusal = other.logs.filter((l) => l.includes('registration refused'));
  assert.ok(refusal.length >= 1 && refusal.length <= 3, `one clear refusal:\n${other.logs.slice(-10).join('\n')}`);
  assert.match(refusal[0]!, /system:node:n-other|forbidden|Forbidden/);
  const r = await cp!.kubectl(['get', 'node', 'n-other']);
  assert.notEqual(r.code, 0, 'no Node n-other');
});
