/**
 * The QoS scenario, the same on real containerd and on the simulated runtime: three pods from
 * manifests (Guaranteed, Burstable, BestEffort) under an agent process with a private
 * --cgroup-root; then, read through the runtime as a user would:
 *   - /pods shows each pod's status.qosClass;
 *   - inside each container (ExecSync) /proc/self/cgroup names `<root>/kubepods[/<qos>]/pod<uid>/<id>`
 *     and /proc/self/oom_score_adj is the kubelet's value (containerd raises a value below its
 *     own, restrict_oom_score_adj);
 *   - the sandbox's verbose status has that cgroupParent in its runtime spec's cgroupsPath;
 *   - with host cgroups (containerd): the pod cgroups' limit files on the host match the spec;
 *     without (the simulated runtime): nothing was created on the host;
 *   - a removed pod's cgroup is gone from the host.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { detectCgroupLayout, type CgroupLayout } from '../../src/shared/cgroups/cgroup-layout.js';
import { cgroupHierarchies } from '../harness/test-cgroups.js';
import { isRunning, pollUntil, startAgent, type AgentProcess } from './agent-harness.js';

const Mi = 1024 * 1024;

export interface QosRuntime {
  endpoint: string;
  /** The runtime creates real cgroups from cgroupParent (containerd), or none (the sim). */
  hostCgroups: boolean;
  /** What oom_score_adj a container asked for reads as inside it. */
  effectiveOOMScoreAdj: (requested: number) => number;
  /** The agent's --cgroup-root (the harness's per-runtime one). */
  cgroupRoot: string;
  /** --cgroup-driver (default cgroupfs; systemd only where nothing is created on the host). */
  driver?: 'cgroupfs' | 'systemd';
}

/** The driver's spelling of `<root>/<parent components>/pod<uid>`, and of a container's cgroup in it. */
function names(rt: QosRuntime, parent: string, uid: string): { pod: string; child: (id: string) => string } {
  if (rt.driver === 'systemd') {
    // A systemd --cgroup-root is a slice path; its last slice names the whole ancestry ("_" is an escaped "-").
    const last = path.basename(rt.cgroupRoot);
    const root = rt.cgroupRoot === '/' ? [] : last.slice(0, -'.slice'.length).split('-').map((p) => p.replaceAll('_', '-'));
    const parts = [...root, ...parent.split('/'), `pod${uid}`];
    let prefix = '';
    const pod = parts.map((p) => (prefix = prefix === '' ? p.replaceAll('-', '_') : `${prefix}-${p.replaceAll('-', '_')}`)).map((p) => `/${p}.slice`).join('');
    return { pod, child: (id) => `${pod}/cri-containerd-${id}.scope` };
  }
  const pod = '/' + [...rt.cgroupRoot.split('/').filter((p) => p !== ''), ...parent.split('/'), `pod${uid}`].join('/');
  return { pod, child: (id) => `${pod}/${id}` };
}

const PODS = {
  g: { qos: 'Guaranteed', parent: 'kubepods', resources: 'requests: {cpu: 200m, memory: 64Mi}\n      limits: {cpu: 200m, memory: 64Mi}' },
  b: { qos: 'Burstable', parent: 'kubepods/burstable', resources: 'requests: {cpu: 100m, memory: 32Mi}\n      limits: {cpu: 500m, memory: 96Mi}' },
  e: { qos: 'BestEffort', parent: 'kubepods/besteffort', resources: '{}' },
} as const;
type Key = keyof typeof PODS;

function writeManifest(dir: string, key: Key): void {
  fs.writeFileSync(path.join(dir, `${key}.yaml`), `apiVersion: v1
kind: Pod
metadata:
  name: qos-${key}
  namespace: default
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: docker.io/local/busybox:1
    imagePullPolicy: IfNotPresent
    command: ["sleep", "100000"]
    resources:
      ${PODS[key].resources}
`);
}

/** The cgroup path of /proc/self/cgroup: the memory controller's line (v1) or the unified one. */
export function cgroupPathOf(procSelfCgroup: string): string {
  const lines = procSelfCgroup.trim().split('\n').map((l) => l.split(':'));
  const mem = lines.find((l) => (l[1] ?? '').split(',').includes('memory'));
  const unified = lines.find((l) => l[0] === '0' && l[1] === '');
  return (mem ?? unified)?.slice(2).join(':') ?? '';
}

async function exec(cri: CriClient, id: string, cmd: string[]): Promise<string> {
  const r = await cri.execSync({ containerId: id, cmd, timeout: 10 });
  assert.equal(r.exitCode, 0, `${cmd.join(' ')}: ${Buffer.from(r.stderr).toString()}`);
  return Buffer.from(r.stdout).toString();
}

function hostFile(layout: CgroupLayout, v1Controller: string, rel: string, file: string): string {
  const base = layout.version === 'v2' ? layout.root : layout.mounts[v1Controller]!;
  return fs.readFileSync(path.join(base, rel, file), 'utf8').trim();
}

export async function runQosScenario(rt: QosRuntime): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-qos-manifests-'));
  const cri = new CriClient({ endpoint: rt.endpoint, timeoutMs: 20_000 });
  let agent: AgentProcess | undefined;
  try {
    for (const k of Object.keys(PODS) as Key[]) writeManifest(dir, k);
    const driverArgs = rt.driver === 'systemd' ? ['--cgroup-driver', 'systemd', '--cgroup-root', rt.cgroupRoot] : [];
    agent = await startAgent({ endpoint: rt.endpoint, manifestDir: dir, workers: 1, extraArgs: driverArgs });
    const pods = await pollUntil(async () => {
      const ps = await agent!.pods();
      return ps.length === 3 && ps.every(isRunning) ? ps : undefined;
    }, { what: 'the three QoS pods running', timeoutMs: 90_000, intervalMs: 250 });
    const byKey = (k: Key): V1Pod => pods.find((p) => p.metadata?.name === `qos-${k}-node-e2e`)!;
    const layout = rt.hostCgroups ? await detectCgroupLayout() : undefined;
    const capacity = os.totalmem();

    for (const k of Object.keys(PODS) as Key[]) {
      const pod = byKey(k);
      const uid = pod.metadata!.uid!;
      assert.equal(pod.status?.qosClass, PODS[k].qos, `${k}: status.qosClass in /pods`);
      const n = names(rt, PODS[k].parent, uid);
      const parent = n.pod;
      const [ctr] = await cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': uid } });
      assert.ok(ctr, `${k}: a container`);
      const inside = cgroupPathOf(await exec(cri, ctr.id, ['cat', '/proc/self/cgroup']));
      if (inside === '/' && layout) {
        // cgroup v2 with a private cgroup namespace (containerd's default there): check from the host.
        assert.ok(fs.existsSync(path.join((layout as { root: string }).root, parent, ctr.id)), `${k}: container cgroup under ${parent}`);
      } else {
        assert.equal(inside, n.child(ctr.id), `${k}: /proc/self/cgroup inside the container`);
      }
      const sb = await cri.podSandboxStatus(ctr.podSandboxId, { verbose: true });
      const info = JSON.parse(sb.info['info'] ?? '{}') as { runtimeSpec?: { linux?: { cgroupsPath?: string } } };
      assert.equal(info.runtimeSpec?.linux?.cgroupsPath, n.child(ctr.podSandboxId), `${k}: the sandbox's cgroupsPath (verbose status)`);
      const requested = k === 'g' ? -997 : k === 'e' ? 1000 : 1000 - Math.trunc((1000 * 32 * Mi) / capacity);
      assert.equal(Number((await exec(cri, ctr.id, ['cat', '/proc/self/oom_score_adj'])).trim()), rt.effectiveOOMScoreAdj(requested), `${k}: oom_score_adj`);
    }

    const rel = (k: Key): string => `${rt.cgroupRoot}/${PODS[k].parent}/pod${byKey(k).metadata!.uid}`;
    if (layout) {
      const v2 = layout.version === 'v2';
      const mem = (k: Key): string => hostFile(layout, 'memory', rel(k), v2 ? 'memory.max' : 'memory.limit_in_bytes');
      const quota = (k: Key): string => (v2 ? hostFile(layout, 'cpu', rel(k), 'cpu.max').split(' ')[0]! : hostFile(layout, 'cpu', rel(k), 'cpu.cfs_quota_us'));
      assert.equal(mem('g'), String(64 * Mi));
      assert.equal(quota('g'), '20000');
      assert.equal(mem('b'), String(96 * Mi));
      assert.equal(quota('b'), '50000');
      assert.equal(quota('e'), v2 ? 'max' : '-1');
      assert.equal(v2 ? hostFile(layout, 'cpu', rel('e'), 'cpu.weight') : hostFile(layout, 'cpu', rel('e'), 'cpu.shares'), v2 ? '1' : '2');
      assert.equal(v2 ? hostFile(layout, 'cpu', rel('g'), 'cpu.weight') : hostFile(layout, 'cpu', rel('g'), 'cpu.shares'), v2 ? '8' : '204');
    } else {
      for (const h of cgroupHierarchies()) assert.equal(fs.existsSync(path.join(h, rt.cgroupRoot)), false, `nothing created under ${h}`);
    }

    // A removed pod: its sandbox goes, then its cgroup.
    const gone = byKey('b').metadata!.uid!;
    fs.rmSync(path.join(dir, 'b.yaml'));
    await pollUntil(async () => {
      const ps = await agent!.pods();
      const left = await cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': gone } });
      if (ps.length !== 2 || left.length !== 0) return undefined;
      if (!layout) return true;
      return cgroupHierarchies().every((h) => !fs.existsSync(path.join(h, rel('b')))) ? true : undefined;
    }, { what: 'the removed pod and its cgroup gone', timeoutMs: 60_000, intervalMs: 250 });
  } finally {
    await agent?.stop();
    cri.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
