/**
 * `--kube-api-qps 5 --kube-api-burst 10` against a real kube-apiserver: the API server's own audit
 * log (a policy that records only the node user system:node:<name>, so the test's requests do not
 * count; the node's heartbeats and events, on clients of their own, are left out) shows the main
 * client's requests obeying the token bucket — in every interval [t_i, t_j] at
 * most burst + qps·(t_j − t_i + receipt jitter) + 1 requests, and ≤ 5 requests/s averaged over the
 * run once the burst is spent — and every pod still reaches Running in the API.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { apiPod, clusterSimFixture, coreApi, createPods, isApiRunning, PodWatchRecorder, startClusterAgent } from './cluster-harness.js';

const NS = 'qps';
const NODE = 'node-qps';
const N = 60;
const QPS = 5;
const BURST = 10;
/**
 * Server receipt times are not send times: requests of the initial burst that wait for new TLS
 * connections on a loaded 2-core machine arrive late, which makes the window after them look
 * denser by up to QPS × that delay. Half a second of it is tolerated (2.5 requests at 5 QPS).
 */
const RECEIPT_JITTER_MS = 500;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-audit-'));
const auditLog = path.join(dir, 'audit.log');
const policy = path.join(dir, 'policy.yaml');
fs.writeFileSync(
  policy,
  `apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: ["RequestReceived"]\nrules:\n- level: Metadata\n  users: ["system:node:${NODE}"]\n- level: None\n`,
);
const f = clusterSimFixture({
  namespace: NS,
  controlPlane: { extraApiserverArgs: [`--audit-policy-file=${policy}`, `--audit-log-path=${auditLog}`, '--audit-log-mode=blocking'] },
  teardown: () => fs.rmSync(dir, { recursive: true, force: true }),
});

interface AuditEvent {
  auditID?: string;
  user?: { username?: string };
  verb?: string;
  objectRef?: { resource?: string; subresource?: string };
  requestReceivedTimestamp?: string;
}

/** Resources the main client never writes: its token bucket does not govern them. */
const HEARTBEAT_AND_EVENT_RESOURCES: ReadonlySet<string> = new Set(['nodes', 'leases', 'events']);

function nodeRequests(): { atMs: number; what: string }[] {
  const out: { atMs: number; what: string }[] = [];
  // A long-running request (the watch) has a ResponseStarted event and, once it ends, a ResponseComplete one.
  const seen = new Set<string>();
  for (const line of fs.readFileSync(auditLog, 'utf8').split('\n')) {
    if (line === '') continue;
    const ev = JSON.parse(line) as AuditEvent;
    if (ev.user?.username !== `system:node:${NODE}`) continue;
    // Only the main client is under --kube-api-qps: the Node and its Lease go through the
    // unthrottled heartbeat client and events through their own --event-qps client (as the
    // kubelet's), so they are counted apart.
    if (HEARTBEAT_AND_EVENT_RESOURCES.has(ev.objectRef?.resource ?? '')) continue;
    if (ev.auditID !== undefined && seen.has(ev.auditID)) continue;
    if (ev.auditID !== undefined) seen.add(ev.auditID);
    const at = Date.parse(ev.requestReceivedTimestamp ?? '');
    assert.ok(Number.isFinite(at), `audit event without a timestamp: ${line.slice(0, 200)}`);
    out.push({ atMs: at, what: `${ev.verb} ${ev.objectRef?.resource ?? ''}${ev.objectRef?.subresource ? `/${ev.objectRef.subresource}` : ''}` });
  }
  return out.sort((a, b) => a.atMs - b.atMs);
}

test(`--kube-api-qps ${QPS}: the API server sees the agent's requests within the token bucket, and every pod converges`, { timeout: 300_000 }, async (t) => {
  const { cp, sim } = f;
  const { core } = coreApi(cp.adminKubeconfig);
  const r = (f.rec = new PodWatchRecorder(cp.adminKubeconfig, NS));
  await r.start();
  f.agent = await startClusterAgent({ cp, nodeName: NODE, endpoint: sim.endpoint, extraArgs: ['--kube-api-qps', String(QPS), '--kube-api-burst', String(BURST)] });
  const created = await createPods(core, Array.from({ length: N }, (_, i) => apiPod(`q-${String(i).padStart(2, '0')}`, NS, NODE)));
  const uids = created.map((p) => p.metadata!.uid!);
  await r.waitFor(() => (uids.every((u) => { const p = r.pods.get(u); return p !== undefined && isApiRunning(p); }) ? true : undefined), `${N} pods Running in the API at ${QPS} QPS`, 180_000);

  const reqs = nodeRequests();
  assert.ok(reqs.length >= N, `the audit log holds the agent's requests (${reqs.length}; at least one status write per pod)`);
  // The token bucket's guarantee, checked on the server's clock for every interval.
  let worst = { excess: -Infinity, i: 0, j: 0 };
  for (let i = 0; i < reqs.length; i++) {
    for (let j = i; j < reqs.length; j++) {
      const allowed = BURST + (QPS * (reqs[j]!.atMs - reqs[i]!.atMs + RECEIPT_JITTER_MS)) / 1000 + 1;
      const excess = j - i + 1 - allowed;
      if (excess > worst.excess) worst = { excess, i, j };
    }
  }
  const spanS = (reqs[reqs.length - 1]!.atMs - reqs[0]!.atMs) / 1000;
  const byKind = new Map<string, number>();
  for (const q of reqs) byKind.set(q.what, (byKind.get(q.what) ?? 0) + 1);
  t.diagnostic(`${reqs.length} requests from the node user over ${spanS.toFixed(1)} s (${(reqs.length / spanS).toFixed(2)} req/s averaged, burst included): ${JSON.stringify(Object.fromEntries(byKind))}`);
  assert.ok(worst.excess <= 0, `${worst.j - worst.i + 1} requests in ${((reqs[worst.j]!.atMs - reqs[worst.i]!.atMs) / 1000).toFixed(2)} s exceed burst ${BURST} + ${QPS}/s`);
  assert.ok((reqs.length - BURST) / spanS <= QPS + 0.05, `beyond the burst, ${((reqs.length - BURST) / spanS).toFixed(2)} req/s averaged`);
});
