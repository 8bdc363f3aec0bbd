/**
 * Events against a real kube-apiserver with the agent's node identity, on the simulated runtime:
 * an API pod's Pulled/Created/Started events, then Killing when it is deleted; a crash-looping
 * pod's BackOff events, with no more Event writes for it than the spam-filter budget (25); the
 * node's Starting and NodeReady events in "default"; FailedMount for a pod whose configMap
 * volume names a missing configMap (on the kubelet's retry backoff, not once per 2 s sync; the
 * pod starts once the configMap exists); ProbeWarning for a pod whose HTTP readiness probe is
 * redirected to another host (the test serves the probe endpoint itself).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
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

interface Ev { reason: string; message: string; count?: number; type: string; firstTimestamp?: string; lastTimestamp?: string; involvedObject: { kind: string; name: string; fieldPath?: string }; source?: { component?: string; host?: string } }

async function events(ns: string, name: string): Promise<Ev[]> {
  const r = await cp!.kubectl(['-n', ns, 'get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'json']);
  if (r.code !== 0) throw new Error(r.stderr);
  return (JSON.parse(r.stdout) as { items: Ev[] }).items;
}

function pod(name: string, command: string[], spec: Record<string, unknown> = {}, container: Record<string, unknown> = {}): object {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS }, spec: { nodeName: NODE, automountServiceAccountToken: false, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: IMAGE, command, ...container }], ...spec } };
}

async function podPhase(name: string): Promise<string | undefined> {
  const r = await cp!.kubectl(['-n', NS, 'get', 'pod', name, '-o', 'jsonpath={.status.phase}']);
  return r.code === 0 ? r.stdout : undefined;
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

test('a pod whose configMap volume names a missing configMap shows FailedMount, on the retry backoff, and starts once the configMap exists', async () => {
  const r = await cp!.kubectl(['create', '-f', '-'], {
    stdin: JSON.stringify(pod('needs-cm', ['sleep', '100000'], { volumes: [{ name: 'cfg', configMap: { name: 'app-config' } }] }, { volumeMounts: [{ name: 'cfg', mountPath: '/etc/app' }] })),
  });
  assert.equal(r.code, 0, r.stderr);
  const first = await pollUntil(async () => (await events(NS, 'needs-cm')).find((e) => e.reason === 'FailedMount'), { what: 'FailedMount', timeoutMs: 60_000, intervalMs: 500 });
  assert.equal(first.type, 'Warning');
  assert.equal(first.message, 'MountVolume.SetUp failed for volume "cfg" : configmap "app-config" not found');
  assert.deepEqual(first.source, { component: 'kubelet', host: NODE });
  // The pod is synced again every 2 s while it waits. Wait until the Event shows a repeat at
  // least 16 s after the first (the backoff's 0, 2, 4, 6, 10, 18 s …), then count the writes.
  const span = (e: Ev): number => (Date.parse(e.lastTimestamp ?? '') - Date.parse(e.firstTimestamp ?? '')) / 1000;
  const evs = await pollUntil(async () => {
    const e = (await events(NS, 'needs-cm')).filter((x) => x.reason === 'FailedMount');
    return e.some((x) => span(x) >= 16) ? e : undefined;
  }, { what: 'a FailedMount repeat 16 s after the first', timeoutMs: 90_000, intervalMs: 1_000 });
  assert.equal(evs.length, 1, 'repeats of the same message are one Event with a count');
  const writes = evs[0]!.count ?? 1;
  // One per sync would be ≥ span / 2 + 1 (9 or more); the kubelet's backoff gives 6 by 18 s.
  assert.ok(writes >= 2 && writes <= 7 && writes < span(evs[0]!) / 2 + 1, `FailedMount written ${writes} times over ${span(evs[0]!)} s: ${JSON.stringify(evs)}`);
  assert.notEqual(await podPhase('needs-cm'), 'Running');
  const cm = await cp!.kubectl(['-n', NS, 'create', 'configmap', 'app-config', '--from-literal=app.conf=v=1']);
  assert.equal(cm.code, 0, cm.stderr);
  await pollUntil(async () => ((await podPhase('needs-cm')) === 'Running' ? true : undefined), { what: 'the pod Running once its configMap exists', timeoutMs: 60_000, intervalMs: 500 });
});

test('a pod whose HTTP probe is redirected to another host shows ProbeWarning and becomes ready', async (t) => {
  // The probe endpoint, served by the test: a redirect to another host name (localhost, not
  // 127.0.0.1), which the kubelet does not follow: a success with a warning.
  const server = http.createServer((req, res) => {
    res.writeHead(302, { location: `http://localhost:${(req.socket.localPort ?? 0)}/elsewhere` }).end('moved away');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as net.AddressInfo).port;
  const r = await cp!.kubectl(['create', '-f', '-'], {
    stdin: JSON.stringify(pod('redirected', ['sleep', '100000'], {}, { readinessProbe: { httpGet: { host: '127.0.0.1', port, path: '/ready' }, periodSeconds: 2 } })),
  });
  assert.equal(r.code, 0, r.stderr);
  const warning = await pollUntil(async () => (await events(NS, 'redirected')).find((e) => e.reason === 'ProbeWarning'), { what: 'ProbeWarning', timeoutMs: 60_000, intervalMs: 500 });
  assert.equal(warning.type, 'Warning');
  assert.equal(warning.message, 'Readiness probe warning: Probe terminated redirects, Response body: moved away');
  assert.equal(warning.involvedObject.fieldPath, 'spec.containers{c}');
  // A warning counts as success: the pod becomes Ready.
  await pollUntil(async () => {
    const x = await cp!.kubectl(['-n', NS, 'get', 'pod', 'redirected', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']);
    return x.stdout === 'True' ? true : undefined;
  }, { what: 'the pod Ready', timeoutMs: 60_000, intervalMs: 500 });
});
