/**
 * `shardlet hollow` against the real kube-apiserver v1.20.2 with the real kube-scheduler:
 *  - bad input (N = 0, N = 10^6, a node identity, an identity without node rights, a taken
 *    name) exits 2 with an error naming it, and registers nothing;
 *  - three hollow nodes register and turn Ready; pods without nodeName are placed by the real
 *    scheduler on them and run; every node serves its own API traffic (node-labelled metrics);
 *  - faults through POST /faults: a pod's containers crash (the agent restarts them: restartCount
 *    in the API), the runtime goes down (Ready=False from the agent's runtime health) and comes
 *    back (Ready=True), the lease stops (no renewals from that node while the others renew) and
 *    resumes; a bad fault script is refused (400) and applies nothing.
 * The node lifecycle controller's NotReady and a Deployment's availability need the
 * controller-manager: hollow-deployment-apiserver.test.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startControlPlane, type ControlPlane } from '../harness/apiserver-harness.js';
import { pollUntil } from '../harness/poll.js';
import { hollowNodes, metricSum, runHollowToExit, startHollow, type HollowProcess } from '../harness/hollow-process.js';

const NS = 'hollow-e2e';
const IMAGE = 'docker.io/local/busybox:1';
let cp: ControlPlane | undefined;
let hollow: HollowProcess | undefined;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-hollow-e2e-'));

before(async () => {
  cp = await startControlPlane({ scheduler: true, tokenUsers: [{ name: 'nobody', groups: [] }] });
  await cp.ensureNamespace(NS);
});

after(async () => {
  await hollow?.stop().catch(() => undefined);
  await cp?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const need = (): ControlPlane => {
  if (cp === undefined) throw new Error('control plane not started');
  return cp;
};

test('bad input exits 2 naming the problem, before anything is registered', async () => {
  const c = need();
  const root = path.join(tmp, 'bad');
  const base = ['--root-dir', root, '--metrics-port', '0'];
  let r = await runHollowToExit([...base, '--kubeconfig', c.adminKubeconfig, '--nodes', '0']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--nodes: must be in 1\.\.5000, got 0/);
  r = await runHollowToExit([...base, '--kubeconfig', c.adminKubeconfig, '--nodes', '1000000']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--nodes: must be in 1\.\.5000, got 1000000/);
  r = await runHollowToExit([...base, '--kubeconfig', c.nodeKubeconfig('bad-0'), '--nodes', '2', '--node-name-prefix', 'bad-']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /authenticates as the node system:node:bad-0 .*NodeRestriction/);
  r = await runHollowToExit([...base, '--kubeconfig', c.tokenKubeconfig('nobody'), '--nodes', '2', '--node-name-prefix', 'bad-']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /may not do what every node does: denied create nodes/);
  const created = await c.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'taken-1' } }) });
  assert.equal(created.code, 0, created.stderr);
  r = await runHollowToExit([...base, '--kubeconfig', c.adminKubeconfig, '--nodes', '3', '--node-name-prefix', 'taken-']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /1 hollow node name\(s\) already exist as Nodes: taken-1;/);
  // Nothing was registered by any refused run.
  assert.deepEqual((await hollowNodes(c, 'bad-')).map((n) => n.name), []);
  assert.deepEqual((await hollowNodes(c, 'taken-')).map((n) => n.name), ['taken-1']);
  assert.ok(!fs.existsSync(path.join(root, 'bad-0')), 'no node state was created');
});

interface PodView {
  name: string;
  node: string;
  phase: string;
  restarts: number;
}

async function pods(c: ControlPlane): Promise<PodView[]> {
  const r = await c.kubectl(['get', 'pods', '-n', NS, '-o', 'json'], { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(r.stderr);
  const list = JSON.parse(r.stdout) as { items: { metadata: { name: string }; spec: { nodeName?: string }; status?: { phase?: string; containerStatuses?: { restartCount: number }[] } }[] };
  return list.items.map((p) => ({ name: p.metadata.name, node: p.spec.nodeName ?? '', phase: p.status?.phase ?? '', restarts: p.status?.containerStatuses?.[0]?.restartCount ?? 0 }));
}

const leaseRenewals = (text: string, node: string): number => metricSum(text, 'shardlet_node_lease_renew_lateness_seconds_count', { node, result: 'ok' });

test('hollow nodes turn Ready, run pods the real scheduler placed, and take faults per node', async () => {
  const c = need();
  const agentConfig = path.join(tmp, 'agent.yaml');
  // Renewals every 2 s, so the lease checks below take seconds.
  fs.writeFileSync(agentConfig, 'nodeLeaseDurationSeconds: 8\n');
  hollow = await startHollow(['--kubeconfig', c.adminKubeconfig, '--nodes', '3', '--node-name-prefix', 'hl-', '--max-pods', '30', '--agent-config', agentConfig], { rootDir: path.join(tmp, 'hl') });
  const h = hollow;
  await pollUntil(async () => ((await hollowNodes(c, 'hl-')).filter((n) => n.ready === 'True').length === 3 ? true : undefined), { what: '3 hollow nodes Ready', timeoutMs: 120_000, intervalMs: 1_000 });

  // Pods without nodeName: the real scheduler places them. The API server's TaintNodesByCondition
  // admission taints every new Node not-ready:NoSchedule and only the node lifecycle controller
  // (controller-manager, not run here) lifts it: these pods tolerate it.
  const items = Array.from({ length: 6 }, (_, i) => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: `web-${i}`, namespace: NS },
    spec: {
      automountServiceAccountToken: false,
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' }],
      containers: [{ name: 'c', image: IMAGE, command: ['sleep', '3600'] }] },
  }));
  const applied = await c.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
  assert.equal(applied.code, 0, applied.stderr);
  let seen: PodView[] = [];
  const running = await pollUntil(async () => {
    const ps = (seen = await pods(c));
    return ps.length === 6 && ps.every((p) => p.phase === 'Running') ? ps : undefined;
  }, { what: '6 scheduled pods Running', timeoutMs: 120_000, intervalMs: 1_000 }).catch((err: unknown) => {
    throw new Error(`${String(err)}; pods: ${JSON.stringify(seen)}`);
  });
  for (const p of running) assert.match(p.node, /^hl-[0-2]$/, `${p.name} on ${p.node}`);

  // A pod's containers crash: the node's agent restarts them (restartPolicy Always).
  const victim = running[0] as PodView;
  const crash = await h.faults(`0s ${victim.node} crash ${NS}/${victim.name}\n`);
  assert.equal(crash.status, 200, crash.body);
  assert.match(crash.body, new RegExp(`${victim.node}: 1 container\\(s\\) of ${NS}/${victim.name} crashed`));
  await pollUntil(async () => {
    const p = (await pods(c)).find((x) => x.name === victim.name);
    return p && p.restarts >= 1 && p.phase === 'Running' ? true : undefined;
  }, { what: `${victim.name} restarted after the crash`, timeoutMs: 90_000, intervalMs: 1_000 });

  // The runtime goes down: the node's own runtime health makes it NotReady; back up, Ready.
  let r = await h.faults('0s hl-0 runtime-down\n');
  assert.equal(r.status, 200, r.body);
  await pollUntil(async () => ((await hollowNodes(c, 'hl-0')).find((n) => n.name === 'hl-0')?.ready === 'False' ? true : undefined), { what: 'hl-0 Ready=False with its runtime down', timeoutMs: 120_000, intervalMs: 1_000 });
  assert.deepEqual((await hollowNodes(c, 'hl-')).filter((n) => n.name !== 'hl-0').map((n) => n.ready), ['True', 'True'], 'the other nodes stay Ready');
  r = await h.faults('0s hl-0 runtime-up\n');
  assert.equal(r.status, 200, r.body);
  await pollUntil(async () => ((await hollowNodes(c, 'hl-0')).find((n) => n.name === 'hl-0')?.ready === 'True' ? true : undefined), { what: 'hl-0 Ready again', timeoutMs: 120_000, intervalMs: 1_000 });

  // The lease stops: hl-2 renews no more while hl-1 renews three more times; then it resumes.
  r = await h.faults('0s hl-2 lease-stop\n');
  assert.equal(r.status, 200, r.body);
  const atStop = await h.metrics();
  const stopped2 = leaseRenewals(atStop, 'hl-2');
  const from1 = leaseRenewals(atStop, 'hl-1');
  const later = await pollUntil(async () => {
    const t = await h.metrics();
    return leaseRenewals(t, 'hl-1') >= from1 + 3 ? t : undefined;
  }, { what: 'hl-1 to renew 3 more times', timeoutMs: 60_000, intervalMs: 500 });
  // One renewal may have been in flight when the stop came.
  assert.ok(leaseRenewals(later, 'hl-2') <= stopped2 + 1, `hl-2 renewed while stopped: ${stopped2} → ${leaseRenewals(later, 'hl-2')}`);
  r = await h.faults('0s hl-2 lease-resume\n');
  assert.equal(r.status, 200, r.body);
  const resumedFrom = leaseRenewals(await h.metrics(), 'hl-2');
  await pollUntil(async () => (leaseRenewals(await h.metrics(), 'hl-2') > resumedFrom ? true : undefined), { what: 'hl-2 to renew again', timeoutMs: 60_000, intervalMs: 500 });

  // Bad fault scripts: refused whole, nothing applied.
  r = await h.faults('0s hl-9 lease-stop\n');
  assert.equal(r.status, 400);
  assert.match(r.body, /node "hl-9" is not one of/);
  r = await h.faults('0s hl-1 lease-stop\nnonsense\n');
  assert.equal(r.status, 400);
  const m = await h.metrics();
  // Per-node metrics, each node its own traffic; the process summary.
  for (const n of ['hl-0', 'hl-1', 'hl-2']) {
    assert.ok(metricSum(m, 'shardlet_api_requests_total', { node: n, verb: 'list', resource: 'pods' }) >= 1, `${n} lists its pods`);
    assert.ok(metricSum(m, 'shardlet_heartbeat_api_requests_total', { node: n, resource: 'leases' }) >= 1, `${n} renews its lease`);
  }
  assert.equal(metricSum(m, 'shardlet_hollow_nodes', { state: 'running' }), 3);
  assert.equal(metricSum(m, 'shardlet_hollow_nodes_registered'), 3);
  assert.ok(metricSum(m, 'process_resident_memory_bytes') > 0);

  assert.equal(await h.stop(), 0, h.stderr().slice(-2000));
  hollow = undefined;
});
