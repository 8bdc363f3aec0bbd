/**
 * Mirror pods against a real kube-apiserver (Node,RBAC + NodeRestriction, node identity), on the
 * simulated runtime: a static pod from the manifest directory appears in the API as a mirror pod
 * (kubernetes.io/config.mirror = its config hash, exactly one controller ownerReference to the
 * Node with its UID) carrying the static pod's Running status; the mirror is never run as a pod
 * of its own (one sandbox in the runtime); `kubectl delete` of the mirror returns and a new
 * mirror appears; a changed manifest replaces the mirror (new hash); a removed manifest deletes it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSimRuntime, type ManagedProcess } from '../../bench/processes.js';
import { realClock } from '../../src/shared/clock/clock.js';
import { startControlPlane, type ControlPlane } from '../harness/apiserver-harness.js';
import { pollUntil, runtimeView, startAgent, writePodManifest, type AgentProcess } from './agent-harness.js';

const NODE = 'n-mirror';
const MIRROR = `web-${NODE}`;
const IMAGE = 'docker.io/local/busybox:1';
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-mirror-'));
const manifests = path.join(root, 'manifests');
const socket = path.join(root, 'sim.sock');
const endpoint = `unix://${socket}`;

let cp: ControlPlane | undefined;
let sim: ManagedProcess | undefined;
let agent: AgentProcess | undefined;

interface Pod { metadata: { uid: string; annotations?: Record<string, string>; ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[]; deletionTimestamp?: string }; status?: { phase?: string } }

async function mirror(): Promise<Pod | undefined> {
  const r = await cp!.kubectl(['-n', 'default', 'get', 'pod', MIRROR, '-o', 'json']);
  return r.code === 0 ? (JSON.parse(r.stdout) as Pod) : undefined;
}

async function runningMirror(what: string, accept: (p: Pod) => boolean = () => true): Promise<Pod> {
  return pollUntil(async () => {
    const p = await mirror();
    return p !== undefined && p.metadata.deletionTimestamp === undefined && p.status?.phase === 'Running' && accept(p) ? p : undefined;
  }, { what, timeoutMs: 60_000, intervalMs: 500 });
}

before(async () => {
  fs.mkdirSync(manifests);
  writePodManifest(manifests, 'web');
  cp = await startControlPlane();
  await cp.ensureNamespace('kube-node-lease');
  sim = await startSimRuntime({ socket, profile: 'zero', images: [IMAGE], clock: realClock });
  agent = await startAgent({ endpoint, manifestDir: manifests, nodeName: NODE, workers: 2, extraArgs: ['--kubeconfig', cp.nodeKubeconfig(NODE)] });
}, { timeout: 30 * 60_000 });

after(async () => {
  await agent?.kill();
  await sim?.stop(2_000);
  await cp?.stop();
  fs.rmSync(root, { recursive: true, force: true });
}, { timeout: 60_000 });

test('a static pod appears as a mirror pod owned by the Node, with its Running status; run once', async () => {
  const m = await runningMirror('the mirror pod Running');
  const nodeUid = (JSON.parse((await cp!.kubectl(['get', 'node', NODE, '-o', 'json'])).stdout) as Pod).metadata.uid;
  const ann = m.metadata.annotations ?? {};
  assert.ok(ann['kubernetes.io/config.mirror'], 'mirror annotation');
  assert.equal(ann['kubernetes.io/config.mirror'], ann['kubernetes.io/config.hash']);
  assert.equal(ann['kubernetes.io/config.source'], 'file');
  assert.deepEqual(m.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid: nodeUid, controller: true }]);
  const local = (await agent!.pods()).filter((p) => p.metadata?.name === MIRROR);
  assert.equal(local.length, 1, 'the agent runs the static pod once (the mirror is not an API pod to run)');
  assert.equal(local[0]!.metadata?.uid, ann['kubernetes.io/config.hash']);
  const v = await runtimeView(endpoint);
  assert.equal(v.size, 1, `one pod in the runtime, got ${[...v.keys()].join(', ')}`);
});

test('kubectl delete of the mirror returns, and a new mirror appears', async () => {
  const before = await runningMirror('the mirror pod');
  const r = await cp!.kubectl(['-n', 'default', 'delete', 'pod', MIRROR, '--timeout=60s'], { timeoutMs: 90_000 });
  // What the agent did says why a delete did not finish (a missed watch event, a refused DELETE,
  // an API pod version that failed validation, a watch in backoff, ...): every error line too.
  assert.equal(r.code, 0, `${r.stderr}\nagent log tail:\n${agent!.logs.filter((l) => /mirror|watch|api pod|validation|relist|"level":"error"/i.test(l)).slice(-40).join('\n')}`);
  const after = await runningMirror('a new mirror pod Running', (p) => p.metadata.uid !== before.metadata.uid);
  assert.equal(after.metadata.annotations?.['kubernetes.io/config.mirror'], before.metadata.annotations?.['kubernetes.io/config.mirror']);
  const v = await runtimeView(endpoint);
  assert.equal(v.size, 1, 'the static pod itself was not restarted or duplicated');
});

test('a changed manifest replaces the mirror; a removed one deletes it', async () => {
  const before = await runningMirror('the mirror pod');
  writePodManifest(manifests, 'web', { command: ['sleep', '200000'] });
  const replaced = await runningMirror('the mirror of the new manifest', (p) => p.metadata.annotations?.['kubernetes.io/config.mirror'] !== before.metadata.annotations?.['kubernetes.io/config.mirror']);
  assert.notEqual(replaced.metadata.uid, before.metadata.uid);
  fs.rmSync(path.join(manifests, 'web.yaml'));
  await pollUntil(async () => ((await mirror()) === undefined ? true : undefined), { what: 'the mirror pod deleted', timeoutMs: 60_000, intervalMs: 500 });
});
