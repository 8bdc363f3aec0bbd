/**
 * The cluster-mode session of the bench (issue 11, item 7): one private control plane (etcd +
 * kube-apiserver from test/harness/apiserver-harness.ts) for the section; per configuration
 * (`--kube-api-qps` 50, then unthrottled) a fresh sim-runtime (zero profile) and an agent in
 * cluster mode with its own node name (so no session sees another's pods), then:
 *
 *  1. the bench opens a watch on the session's namespace (admin identity) and snapshots the API
 *     server's apiserver_request_total;
 *  2. it creates N pods through the client library with spec.nodeName set (32 in flight) and
 *     notes when each create returned;
 *  3. it waits (bounded: no pod progressing for the stall timeout fails) until the watch has seen
 *     every pod Running with its container running; start latency = create returned → watch saw
 *     Running; "all Running" = first create sent → last pod seen Running;
 *  4. it snapshots the counter again: requests by verb + resource(/subresource) over the window.
 *     Per pod start: GET pods + PATCH/PUT pods/status over N (the bench itself does none of
 *     those; its POSTs, its list and its watch are listed apart, as are the agent's shared
 *     list and watch);
 *  5. audit: every pod Running in the API, exactly one sandbox and one container (attempt 0) per
 *     pod in the runtime, no pod the bench did not create. Anything else is a failure.
 *
 * The node lease over the same window (lease-during-burst.ts): the agent's lateness histogram
 * scraped before the first create and after the last Running, and the renewTimes the API server
 * held, from a watch on the Lease opened with the pod watch.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CoreV1Api, KubeConfig, Watch, type V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../src/shared/clock/clock.js';
import { CriClient } from '../src/shared/cri/cri-client.js';
import type { ControlPlane } from '../test/harness/apiserver-harness.js';
import { removeAgentRoot } from '../test/harness/agent-root.js';
import { fetchMetricsText } from './agent-observer.js';
import { leaseDuringBurst, type LeaseDuringBurst } from './lease-during-burst.js';
import { BENCH_IMAGE } from './pod-manifests.js';
import { freePort, startAgent, startSimRuntime } from './processes.js';
import { parsePromText, type ParsedMetrics } from './prom-text.js';
import { summarize, type Summary } from './stats.js';

export interface ClusterSessionPlan {
  /** `--kube-api-qps` (0 = unthrottled). */
  qps: number;
  /**
   * Pods get the default service-account volume (kube-api-access: a TokenRequest per pod, the
   * kube-root-ca.crt configMap watch, the namespace) instead of automountServiceAccountToken false.
   */
  serviceAccountVolume?: boolean;
  pods: number;
  workers: number;
}

export interface ClusterSessionResult extends ClusterSessionPlan {
  /** First create sent → every pod seen Running through the watch. */
  allRunningS: number | null;
  /** Seconds spent creating the pods (the API server's own pace). */
  createS: number;
  /** Create returned → watch saw Running, per pod (ms). */
  startupMs: Summary | null;
  /** apiserver_request_total deltas over the window, "VERB resource[/subresource]" → count. */
  requests: Record<string, number>;
  /** (GET pods + PATCH/PUT pods/status) / pods. */
  requestsPerPodStart: number | null;
  /** The node lease over the same window (null: the agent's /metrics could not be read). */
  lease: LeaseDuringBurst | null;
  /** The agent's main-thread event-loop delay max over the window (ms), from its /metrics. */
  eventLoopDelayMaxMs: number | null;
  notes: string[];
}

export interface ClusterSessionDeps {
  clock: Clock;
  cp: ControlPlane;
  plan: ClusterSessionPlan;
  stallTimeoutS: number;
  onProgress?: (phase: string, done: number, total: number) => void;
  /** Flags for the agent's node process (`--agent-cpu-prof`: `--cpu-prof --cpu-prof-dir DIR`). */
  agentNodeArgs?: readonly string[];
  /** `--keep`: leave the session's temp dir (agent and runtime logs) in place. */
  keepTemp?: boolean;
}

const CREATE_CONCURRENCY = 32;

function isRunning(p: V1Pod): boolean {
  const cs = p.status?.containerStatuses ?? [];
  return p.status?.phase === 'Running' && cs.length > 0 && cs.every((c) => c.state?.running !== undefined && c.state.running !== null);
}

/** apiserver_request_total summed by "VERB resource[/subresource]". */
export function requestCounts(metricsText: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const close = line.lastIndexOf('}');
    const labels: Record<string, string> = {};
    for (const m of line.slice(0, close).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!;
    const key = `${labels['verb'] ?? '?'} ${labels['resource'] ?? ''}${labels['subresource'] ? `/${labels['subresource']}` : ''}`;
    const v = Number(line.slice(close + 1).trim());
    if (Number.isFinite(v)) out.set(key, (out.get(key) ?? 0) + v);
  }
  return out;
}

export async function runClusterSession(d: ClusterSessionDeps): Promise<{ result: ClusterSessionResult; failures: string[] }> {
  const { clock, cp, plan } = d;
  const label = `${plan.qps === 0 ? 'unthrottled' : `qps${plan.qps}`}${plan.serviceAccountVolume ? '-sa' : ''}`;
  const node = `bench-${label}`;
  const ns = `bench-${label}`;
  const failures: string[] = [];
  const notes: string[] = [];
  await cp.ensureNamespace(ns);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-bench-cluster-'));
  const socket = path.join(dir, 'cri.sock');
  const manifests = path.join(dir, 'manifests');
  await fs.mkdir(manifests);
  const sim = await startSimRuntime({ clock, socket, profile: 'zero', images: [BENCH_IMAGE], logFile: path.join(dir, 'sim.log') });
  let agent;
  const kc = new KubeConfig();
  kc.loadFromFile(cp.adminKubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  let watchCtl: AbortController | undefined;
  let leaseWatchCtl: AbortController | undefined;
  try {
    const agentPort = await freePort();
    agent = await startAgent({
      clock, endpoint: `unix://${socket}`, manifestDir: manifests, rootDir: path.join(dir, 'root'), podLogsDir: path.join(dir, 'pods'),
      nodeName: node, workers: plan.workers, maxPods: plan.pods + 100, port: agentPort, logFile: path.join(dir, 'agent.log'),
      ...(d.agentNodeArgs ? { nodeArgs: d.agentNodeArgs } : {}),
      extraArgs: ['--kubeconfig', cp.nodeKubeconfig(node), '--kube-api-qps', String(plan.qps), '--kube-api-burst', String(Math.max(1, plan.qps * 2))],
    });
    // The bench's watch: when each pod was first seen Running, and anything unexpected.
    const seenRunningAt = new Map<string, number>();
    const seenUids = new Set<string>();
    const list = await core.listNamespacedPod({ namespace: ns });
    let watchEnded: unknown;
    watchCtl = await new Watch(kc).watch(`/api/v1/namespaces/${ns}/pods`, { resourceVersion: list.metadata?.resourceVersion ?? '' }, (type, obj) => {
      const p = obj as V1Pod;
      const uid = p.metadata?.uid ?? '';
      if (type === 'ADDED' || type === 'MODIFIED') {
        seenUids.add(uid);
        if (isRunning(p) && !seenRunningAt.has(uid)) seenRunningAt.set(uid, clock.monotonic());
      }
    }, (err) => (watchEnded = err ?? 'ended'));
    // The Lease as the API server holds it: every renewTime, with when the bench saw it.
    const renewSeen: { renewTime: string; atMs: number }[] = [];
    const leasePath = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases`;
    leaseWatchCtl = await new Watch(kc).watch(leasePath, { fieldSelector: `metadata.name=${node}` }, (_type, obj) => {
      const t = (obj as { spec?: { renewTime?: unknown } }).spec?.renewTime;
      if (typeof t === 'string') renewSeen.push({ renewTime: t, atMs: clock.monotonic() });
    }, () => {});
    const scrapeAgent = async (): Promise<ParsedMetrics | null> => {
      try {
        return parsePromText(await fetchMetricsText(agentPort));
      } catch (err) {
        notes.push(`agent /metrics not read: ${err instanceof Error ? err.message : String(err)}`);
        return null;
      }
    };
    const agentBefore = await scrapeAgent();
    const serverBeforeText = await cp.metricsText();
    const before = requestCounts(serverBeforeText);

    const t0 = clock.monotonic();
    const createdAt = new Map<string, number>();
    let next = 0;
    const createOne = async (): Promise<void> => {
      for (let i = next++; i < plan.pods; i = next++) {
        const body: V1Pod = {
          apiVersion: 'v1', kind: 'Pod',
          metadata: { name: `c-${String(i).padStart(5, '0')}`, namespace: ns, labels: { app: 'shardlet-bench' } },
          spec: {
            nodeName: node, automountServiceAccountToken: plan.serviceAccountVolume === true, hostNetwork: true, shareProcessNamespace: true, terminationGracePeriodSeconds: 2,
            containers: [{ name: 'sleep', image: BENCH_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '100000'] }],
          },
        };
        const created = await core.createNamespacedPod({ namespace: ns, body });
        createdAt.set(created.metadata!.uid!, clock.monotonic());
      }
    };
    await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, createOne));
    const createS = (clock.monotonic() - t0) / 1000;

    // Wait for every pod Running, failing only when nothing progressed for the stall timeout.
    let lastCount = -1;
    let lastProgressAt = clock.monotonic();
    for (;;) {
      let running = 0;
      for (const uid of createdAt.keys()) if (seenRunningAt.has(uid)) running++;
      d.onProgress?.('running in the API', running, plan.pods);
      if (running === plan.pods) break;
      if (running !== lastCount) {
        lastCount = running;
        lastProgressAt = clock.monotonic();
      } else if (clock.monotonic() - lastProgressAt > d.stallTimeoutS * 1000) {
        failures.push(`cluster ${label}: ${plan.pods - running} of ${plan.pods} pods never seen Running in the API (stalled ${d.stallTimeoutS} s)${watchEnded !== undefined ? `; the bench's watch ended: ${String(watchEnded)}` : ''}`);
        break;
      }
      await clock.sleep(100);
    }
    let lastRunning = t0;
    const startups: number[] = [];
    for (const [uid, at] of createdAt) {
      const r = seenRunningAt.get(uid);
      if (r === undefined) continue;
      lastRunning = Math.max(lastRunning, r);
      startups.push(Math.max(0, r - at));
    }
    const allRunningS = failures.length === 0 ? (lastRunning - t0) / 1000 : null;
    const agentAfter = await scrapeAgent();
    const windowEnd = clock.monotonic();
    // renewTimes seen in the window, and the last one before it (the gap to the first in it counts).
    const inWindow = renewSeen.filter((r) => r.atMs >= t0 && r.atMs <= windowEnd).map((r) => r.renewTime);
    const prior = renewSeen.filter((r) => r.atMs < t0).at(-1);
    const serverAfterText = await cp.metricsText();
    const server = { before: parsePromText(serverBeforeText), after: parsePromText(serverAfterText) };
    const lease = agentBefore && agentAfter ? leaseDuringBurst(agentBefore, agentAfter, prior ? [prior.renewTime, ...inWindow] : inWindow, server, clock.now()) : null;
    const eld = agentAfter?.samples.find((x) => x.name === 'shardlet_main_event_loop_delay_seconds' && x.labels['stat'] === 'max')?.value;
    const eventLoopDelayMaxMs = eld === undefined || !Number.isFinite(eld) ? null : eld * 1000;
    const after = requestCounts(serverAfterText);
    const requests: Record<string, number> = {};
    for (const [k, v] of after) {
      const delta = v - (before.get(k) ?? 0);
      if (delta > 0) requests[k] = delta;
    }
    const perStart = (requests['GET pods'] ?? 0) + (requests['PATCH pods/status'] ?? 0) + (requests['PUT pods/status'] ?? 0);
    notes.push(`the bench's own requests in the window: ${plan.pods} × POST pods (creates), 1 WATCH pods (its watch opened before); the agent's shared LIST/WATCH pods are not per pod`);

    // Audit the runtime: one sandbox and one container (attempt 0) per created pod, nothing else.
    const cri = new CriClient({ endpoint: `unix://${socket}`, timeoutMs: 30_000 });
    try {
      const [sbs, cs] = await Promise.all([cri.listPodSandbox(), cri.listContainers()]);
      const sandboxes = new Map<string, number>();
      for (const s of sbs) sandboxes.set(s.metadata?.uid ?? '', (sandboxes.get(s.metadata?.uid ?? '') ?? 0) + 1);
      const containers = new Map<string, number>();
      for (const c of cs) {
        const uid = c.labels['io.kubernetes.pod.uid'] ?? '';
        containers.set(uid, (containers.get(uid) ?? 0) + 1);
        if ((c.metadata?.attempt ?? 0) !== 0) failures.push(`cluster ${label}: pod ${uid} container restarted (attempt ${c.metadata?.attempt})`);
      }
      for (const uid of createdAt.keys()) {
        if (sandboxes.get(uid) !== 1 || containers.get(uid) !== 1) failures.push(`cluster ${label}: pod ${uid} has ${sandboxes.get(uid) ?? 0} sandboxes and ${containers.get(uid) ?? 0} containers (want 1 and 1)`);
      }
      for (const uid of sandboxes.keys()) if (!createdAt.has(uid)) failures.push(`cluster ${label}: runtime pod ${uid} was never requested`);
    } finally {
      cri.close();
    }
    if (seenUids.size !== createdAt.size) failures.push(`cluster ${label}: the watch saw ${seenUids.size} pods, ${createdAt.size} were created`);
    return {
      result: { ...plan, allRunningS, createS, startupMs: summarize(startups), requests, requestsPerPodStart: plan.pods > 0 ? perStart / plan.pods : null, lease, eventLoopDelayMaxMs, notes },
      failures,
    };
  } finally {
    watchCtl?.abort();
    leaseWatchCtl?.abort();
    await agent?.stop();
    await sim.stop();
    // The agent leaves its pods running, tmpfs volumes included: unmount them before removing.
    if (d.keepTemp) process.stderr.write(`bench: cluster session ${label} kept in ${dir}\n`);
    else removeAgentRoot(dir);
  }
}
