/**
 * `shardlet hollow` with the whole control plane: the real kube-apiserver, kube-scheduler and
 * kube-controller-manager v1.20.2.
 *  - a node that cannot start (its state directory is blocked) fails alone: the others register
 *    and run, /nodes reports it failed, a fault aimed at it is refused naming it;
 *  - the node lifecycle controller lifts the not-ready taint of the Ready hollow nodes, a
 *    Deployment's ReplicaSet creates pods, the scheduler places them on the hollow nodes and the
 *    Deployment becomes available (every replica);
 *  - a node whose lease stops (fault `lease-stop`) goes Ready=Unknown by the node lifecycle
 *    controller (NodeStatusUnknown, as for a node cut off) while the others stay Ready; resumed,
 *    it is Ready again.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startControlPlane, type ControlPlane } from '../harness/apiserver-harness.js';
import { hollowNodes, startHollow, type HollowProcess } from '../harness/hollow-process.js';
import { pollUntil } from '../harness/poll.js';

const NS = 'hollow-deploy';
let cp: ControlPlane | undefined;
let hollow: HollowProcess | undefined;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-hollow-deploy-'));

before(async () => {
  cp = await startControlPlane({
    scheduler: true,
    controllerManager: true,
    // A lease silent for 20 s marks the node Unknown (default 40 s), checked every 2 s.
    extraControllerManagerArgs: ['--node-monitor-grace-period=20s', '--node-monitor-period=2s'],
  });
  await cp.ensureNamespace(NS);
});

after(async () => {
  await hollow?.stop().catch(() => undefined);
  await cp?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('a Deployment scheduled onto hollow nodes becomes available; a stopped lease makes its node Unknown', async () => {
  if (cp === undefined) throw new Error('control plane not started');
  const c = cp;
  const agentConfig = path.join(tmp, 'agent.yaml');
  fs.writeFileSync(agentConfig, 'nodeLeaseDurationSeconds: 8\n');
  // hd-3's state directory cannot be created (a file is in the way): that node fails alone.
  const rootDir = path.join(tmp, 'hd');
  fs.mkdirSync(rootDir, { recursive: true });
  fs.writeFileSync(path.join(rootDir, 'hd-3'), 'not a directory');
  hollow = await startHollow(['--kubeconfig', c.adminKubeconfig, '--nodes', '4', '--node-name-prefix', 'hd-', '--max-pods', '20', '--agent-config', agentConfig], { rootDir });
  const h = hollow;
  await pollUntil(async () => ((await hollowNodes(c, 'hd-')).filter((n) => n.ready === 'True').length === 3 ? true : undefined), { what: '3 hollow nodes Ready', timeoutMs: 180_000, intervalMs: 1_000 });
  const states = await pollUntil(async () => {
    const r = await fetch(`http://127.0.0.1:${h.port}/nodes`, { signal: AbortSignal.timeout(10_000) });
    const s = (await r.json()) as Record<string, string>;
    return s['hd-3'] === 'failed' ? s : undefined;
  }, { what: 'hd-3 reported failed', timeoutMs: 60_000, intervalMs: 500 });
  assert.deepEqual(states, { 'hd-0': 'running', 'hd-1': 'running', 'hd-2': 'running', 'hd-3': 'failed' });
  assert.deepEqual((await hollowNodes(c, 'hd-')).map((n) => n.name).sort(), ['hd-0', 'hd-1', 'hd-2'], 'the failed node registered nothing');
  const refused = await h.faults('0s hd-3 lease-stop\n');
  assert.equal(refused.status, 409);
  assert.match(refused.body, /hd-3: lease-stop failed: node hd-3 failed to start/);

  const replicas = 12;
  const d = {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'docker.io/local/busybox:1', command: ['sleep', '3600'] }] } },
    },
  };
  const applied = await c.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify(d) });
  assert.equal(applied.code, 0, applied.stderr);
  let last = '';
  await pollUntil(async () => {
    const r = await c.kubectl(['get', 'deployment', '-n', NS, 'web', '-o', 'jsonpath={.status.availableReplicas}/{.status.replicas}']);
    last = r.stdout;
    return r.code === 0 && r.stdout === `${replicas}/${replicas}` ? true : undefined;
  }, { what: `deployment web ${replicas}/${replicas} available`, timeoutMs: 300_000, intervalMs: 2_000 }).catch((err: unknown) => {
    throw new Error(`${String(err)} (last: ${last})`);
  });
  const r = await c.kubectl(['get', 'pods', '-n', NS, '-o', 'jsonpath={range .items[*]}{.spec.nodeName}{"\\n"}{end}']);
  const placed = r.stdout.split('\n').filter((l) => l !== '');
  assert.equal(placed.length, replicas);
  for (const n of placed) assert.match(n, /^hd-[0-2]$/);

  // The lease stops: the node lifecycle controller marks the node Unknown; the others stay Ready.
  let f = await h.faults('0s hd-1 lease-stop\n');
  assert.equal(f.status, 200, f.body);
  await pollUntil(async () => {
    const ns = await hollowNodes(c, 'hd-');
    const one = ns.find((n) => n.name === 'hd-1');
    return one?.ready === 'Unknown' && one.readyReason === 'NodeStatusUnknown' ? ns : undefined;
  }, { what: 'hd-1 Ready=Unknown after its lease stopped', timeoutMs: 120_000, intervalMs: 1_000 });
  assert.deepEqual((await hollowNodes(c, 'hd-')).filter((n) => n.name !== 'hd-1').map((n) => n.ready), ['True', 'True']);
  f = await h.faults('0s hd-1 lease-resume\n');
  assert.equal(f.status, 200, f.body);
  await pollUntil(async () => ((await hollowNodes(c, 'hd-')).find((n) => n.name === 'hd-1')?.ready === 'True' ? true : undefined), { what: 'hd-1 Ready again', timeoutMs: 120_000, intervalMs: 1_000 });

  assert.equal(await h.stop(), 0, h.stderr().slice(-2000));
  hollow = undefined;
});
