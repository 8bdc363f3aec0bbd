/**
 * Events against a real kube-apiserver with the agent's node identity, on the simulated runtime:
 * an API pod's Pulled/Created/Started events, then Killing when it is deleted; a crash-looping
 * pod's BackOff events, with no more Event writes for it than the spam-filter budget (25); the
 * node's Starting and NodeReady events in "default".
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSimRuntime, type ManagedProcess } from '../../bench/processes.js';
import { realClock } from '../../src/shared/clock/clock.js';
import { startControlPlane, type ControlPlane } from '../harness/apiserver-harness.js';
import { pollUntil, startAgent, type AgentProcess } from './agent-harness.js';

const NODE = 'n-events';
const NS = 'ev';
const IMAGE = 'docker.io/local/busybox:1';
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-events-'));
const manifests = path.join(root, 'manifests');
const socket = path.join(root, 'sim.sock');

let cp: ControlPlane | undefined;
let sim: ManagedProcess | undefined;
let agent: AgentProcess | undefined;

interface Ev { reason: string; message: string; count?: number; type: string; involvedObject: { kind: string; name: string; fieldPath?: string }; source?: { component?: string; host?: string } }

async function events(ns: string, name: string): Promise<Ev[]> {
  const r = await cp!.kubectl(['-n', ns, 'get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'json']);
  if (r.code !== 0) throw new Error(r.stderr);
  return (JSON.parse(r.stdout) as { items: Ev[] }).items;
}

function pod(name: string, command: string[]): object {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS }, spec: { nodeName: NODE, automountServiceAccountToken: false, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: IMAGE, command }] } };
}

before(async () => {
  fs.mkdirSync(manifests);
  cp = await startControlPlane();
  await cp.ensureNamespace('kube-node-lease');
  await cp.ensureNamespace(NS);
  sim = await startSimRuntime({ socket, profile: 'zero', images: [IMAGE], clock: realClock });
  agent = await startAgent({ endpoint: `unix://${socket}`, manifestDir: manifests, nodeName: NODE, workers: 2, extraArgs: ['--kubeconfig', cp.nodeKubeconfig(NODE)] });
}, { timeout: 30 * 60_000 });

after(async () => {
  await agent?.kill();
  await sim?.stop(2_000);
  await cp?.stop();
  fs.rmSync(root, { recursive: true, force: true });
}, { timeout: 60_000 });

test('the node records Starting and NodeReady', async () => {
  const evs = await pollUntil(async () => {
    const e = await events('default', NODE);
    return e.some((x) => x.reason === 'NodeReady') && e.some((x) => x.reason === 'Starting') ? e : undefined;
  }, { what: 'node events', timeoutMs: 30_000, intervalMs: 500 });
  const ready = evs.find((e) => e.reason === 'NodeReady')!;
  assert.equal(ready.message, `Node ${NODE} status is now: NodeReady`);
  assert.deepEqual(ready.source, { component: 'kubelet', host: NODE });
});

test('a pod shows Pulled, Created, Started, then Killing when deleted', async () => {
  const r = await cp!.kubectl(['create', '-f', '-'], { stdin: JSON.stringify(pod('web', ['sleep', '100000'])) });
  assert.equal(r.code, 0, r.stderr);
  const evs = await pollUntil(async () => {
    const e = await events(NS, 'web');
    return ['Pulled', 'Created', 'Started'].every((x) => e.some((y) => y.reason === x)) ? e : undefined;
  }, { what: 'Pulled/Created/Started', timeoutMs: 60_000, intervalMs: 500 });
  assert.equal(evs.find((e) => e.reason === 'Pulled')!.message, `Container image "${IMAGE}" already present on machine`);
  assert.equal(evs.find((e) => e.reason === 'Created')!.message, 'Created container c');
  assert.equal(evs.find((e) => e.reason === 'Started')!.involvedObject.fieldPath, 'spec.containers{c}');
  const d = await cp!.kubectl(['-n', NS, 'delete', 'pod', 'web', '--timeout=60s'], { timeoutMs: 90_000 });
  assert.equal(d.code, 0, d.stderr);
  const killing = await pollUntil(async () => (await events(NS, 'web')).find((e) => e.reason === 'Killing'), { what: 'Killing', timeoutMs: 30_000, intervalMs: 500 });
  assert.equal(killing.message, 'Stopping container c');
});

test('a crash-looping pod shows BackOff, within the spam-filter budget', async () => {
  const r = await cp!.kubectl(['create', '-f', '-'], { stdin: JSON.stringify(pod('crash', ['sh', '-c', 'exit 1'])) });
  assert.equal(r.code, 0, r.stderr);
  const evs = await pollUntil(async () => {
    const e = await events(NS, 'crash');
    return e.some((x) => x.reason === 'BackOff') && e.some((x) => x.reason === 'Started' && (x.count ?? 1) >= 2) ? e : undefined;
  }, { what: 'BackOff and a second start', timeoutMs: 90_000, intervalMs: 1_000 });
  const backoff = evs.find((e) => e.reason === 'BackOff')!;
  assert.equal(backoff.type, 'Warning');
  assert.match(backoff.message, /^Back-off restarting failed container c in pod crash_ev\(/);
  const total = evs.reduce((n, e) => n + (e.count ?? 1), 0);
  assert.ok(total <= 25, `at most 25 event writes for one object in 5 min, got ${total}`);
  assert.ok(evs.some((e) => e.reason === 'Started' && (e.count ?? 1) >= 2), 'repeats are counted on one Event, not new objects');
});
