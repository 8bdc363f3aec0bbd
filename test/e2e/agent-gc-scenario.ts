/**
 * The GC scenario both runtimes run, through the agent as an operator runs it (a child process,
 * observed through the runtime and /metrics):
 *
 *   container GC: a static pod runs; the agent stops (pods keep running); three dead instances
 *   of a container the spec no longer has ("retired", restart counts 0–2, each with a log file
 *   where the agent puts logs) are created in the pod's sandbox through CRI; a new agent starts
 *   and its first GC pass (at start, as the kubelet's) keeps the newest dead instance and its
 *   log, removes the two older ones and their logs, and leaves the running pod alone.
 *
 *   image GC: the images the runtime started with that no container uses are removed, those in
 *   use and the sandbox image are kept (thresholds and capacity are the caller's: see each test).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import type { PodSandboxConfig } from '../../src/shared/cri/cri-types.js';
import { isRunning, pollUntil, startAgent, writePodManifest, type AgentProcess } from './agent-harness.js';

export interface GcScenarioRuntime {
  endpoint: string;
  /** Image of the pod and of the dead instances. */
  image: string;
  /** Flags for every agent of the scenario. */
  agentArgs?: readonly string[];
}

const NODE_NS = { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } as const;

/** Sum of a counter's series matching all the given labels, from /metrics text. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const ls = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => ls.includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

export async function containerGcScenario(rt: GcScenarioRuntime): Promise<void> {
  const manifests = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-gc-manifests-'));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-gc-root-'));
  const cri = new CriClient({ endpoint: rt.endpoint, timeoutMs: 60_000 });
  let agent: AgentProcess | undefined;
  try {
    writePodManifest(manifests, 'gc-web', { image: rt.image });
    agent = await startAgent({ endpoint: rt.endpoint, manifestDir: manifests, rootDir: root, extraArgs: rt.agentArgs ?? [] });
    const a1 = agent;
    // A static pod's name ends with the node name (gc-web-node-e2e).
    const { uid, name } = await pollUntil(async () => {
      const p = (await a1.pods()).find((x) => x.metadata?.name?.startsWith('gc-web'));
      return p && isRunning(p) && p.metadata?.uid && p.metadata.name ? { uid: p.metadata.uid, name: p.metadata.name } : undefined;
    }, { what: 'gc-web running', timeoutMs: 60_000 });
    assert.equal(await agent.stop(), 0);
    agent = undefined;

    const sandbox = (await cri.listPodSandbox()).find((s) => s.metadata?.uid === uid && s.state === 'SANDBOX_READY');
    assert.ok(sandbox, 'the pod\'s sandbox is ready');
    const logDir = path.join(root, 'pods', `default_${name}_${uid}`);
    const sandboxConfig: PodSandboxConfig = {
      metadata: { name, namespace: 'default', uid, attempt: sandbox.metadata?.attempt ?? 0 },
      logDirectory: logDir,
      linux: { securityContext: { namespaceOptions: { ...NODE_NS } } },
    };
    const dead: string[] = [];
    for (let n = 0; n < 3; n++) {
      const id = await cri.createContainer({
        podSandboxId: sandbox.id,
        sandboxConfig,
        config: {
          metadata: { name: 'retired', attempt: n },
          image: { image: rt.image },
          command: ['sh', '-c', `echo retired ${n}; exit 3`],
          logPath: `retired/${n}.log`,
          labels: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': 'default', 'io.kubernetes.pod.uid': uid, 'io.kubernetes.container.name': 'retired' },
          annotations: { 'io.kubernetes.container.restartCount': String(n) },
          linux: { securityContext: { namespaceOptions: { ...NODE_NS } } },
        },
      });
      await cri.startContainer(id);
      await pollUntil(async () => ((await cri.containerStatus(id)).status?.state === 'CONTAINER_EXITED' ? true : undefined), { what: `retired/${n} to exit`, timeoutMs: 30_000 });
      dead.push(id);
    }
    const logOf = (n: number): string => path.join(logDir, 'retired', `${n}.log`);
    for (let n = 0; n < 3; n++) assert.ok(fs.existsSync(logOf(n)), `the runtime wrote retired/${n}.log`);

    agent = await startAgent({ endpoint: rt.endpoint, manifestDir: manifests, rootDir: root, extraArgs: rt.agentArgs ?? [] });
    const a2 = agent;
    await pollUntil(async () => {
      const left = (await cri.listContainers()).filter((c) => c.metadata?.name === 'retired');
      return left.length === 1 ? true : undefined;
    }, { what: 'the two older dead instances to be removed', timeoutMs: 30_000 });
    const left = (await cri.listContainers()).filter((c) => c.labels['io.kubernetes.pod.uid'] === uid);
    assert.deepEqual(left.filter((c) => c.metadata?.name === 'retired').map((c) => c.id), [dead[2]], 'the newest dead instance stays');
    assert.ok(left.some((c) => c.metadata?.name === 'main' && c.state === 'CONTAINER_RUNNING'), 'the pod keeps running');
    assert.ok(!fs.existsSync(logOf(0)) && !fs.existsSync(logOf(1)), 'the removed instances\' logs are gone');
    assert.ok(fs.existsSync(logOf(2)), 'the kept instance keeps its log (kubectl logs --previous)');
    const metrics = (await a2.get('/metrics')).body;
    assert.ok(metricValue(metrics, 'shardlet_container_gc_removed_total', { kind: 'container', result: 'ok' }) >= 2, 'removals counted');
    assert.ok(metricValue(metrics, 'shardlet_gc_pass_duration_seconds_count', { gc: 'container', result: 'ok' }) >= 1);
  } finally {
    await agent?.kill();
    cri.close();
    fs.rmSync(manifests, { recursive: true, force: true });
    fs.rmSync(root, { recursive: true, force: true });
  }
}
