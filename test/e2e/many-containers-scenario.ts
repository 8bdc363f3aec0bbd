/**
 * Pods of many containers (issue 30), run by the agent process against a CRI runtime: the same
 * steps on the simulated runtime (agent-many-containers-sim.test.ts) and on containerd
 * (agent-many-containers-containerd.test.ts). A pod of 14+ containers used to have a runtime
 * status larger than its pod cache slot: it was never synced again (no crash restarts) and
 * never killed. Here each pod has `crashers` containers that exit 1 after a second (they
 * restart with the kubelet's backoff, so their dead instances pile up in the status) and the
 * rest sleep.
 *
 * Bounds: a kill is complete (no running container, no ready sandbox of the pod left in the
 * runtime) within the manifest dir's check period + the pod's grace period + two PLEG relists
 * + KILL_SLACK_MS for a loaded 2-core test machine; every wait is a bounded poll.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { pollUntil, runtimeView, type AgentProcess } from './agent-harness.js';

export const GRACE_SECONDS = 2;
export const RELIST_MS = 1000;
export const FILE_CHECK_MS = 2000;
export const KILL_SLACK_MS = 6000;
/** Manifest removal → every object of the pod stopped. */
export const KILL_BOUND_MS = FILE_CHECK_MS + GRACE_SECONDS * 1000 + 2 * RELIST_MS + KILL_SLACK_MS;

export function podName(containers: number): string {
  return `wide-${containers}`;
}

/** A static pod of `containers` containers, the first `crashers` exiting 1 after a second. */
export function writeWidePod(dir: string, containers: number, crashers: number, image: string): void {
  const lines = [
    'apiVersion: v1', 'kind: Pod', 'metadata:', `  name: ${podName(containers)}`, '  namespace: default', 'spec:',
    '  hostNetwork: true', `  terminationGracePeriodSeconds: ${GRACE_SECONDS}`, '  containers:',
  ];
  for (let k = 0; k < containers; k++) {
    const command = k < crashers ? '["sh", "-c", "sleep 1; exit 1"]' : '["sleep", "100000"]';
    lines.push(`  - name: c${k}`, `    image: ${image}`, '    imagePullPolicy: IfNotPresent', `    command: ${command}`);
  }
  fs.writeFileSync(path.join(dir, `${podName(containers)}.yaml`), lines.join('\n') + '\n');
}

export function removeWidePod(dir: string, containers: number): void {
  fs.rmSync(path.join(dir, `${podName(containers)}.yaml`));
}

const mirrorName = (containers: number, node: string): string => `${podName(containers)}-${node}`;

/**
 * Every pod listed with all its containers: the sleepers running, each crasher restarted at
 * least `restarts` times (so the agent synced the pod again and again after its status grew).
 */
export async function waitStartedAndRestarting(agent: AgentProcess, sizes: readonly number[], crashers: number, restarts: number, node: string, timeoutMs: number): Promise<Map<number, V1Pod>> {
  return pollUntil(async () => {
    const pods = await agent.pods();
    const out = new Map<number, V1Pod>();
    for (const n of sizes) {
      const p = pods.find((x) => x.metadata?.name === mirrorName(n, node));
      const st = p?.status?.containerStatuses ?? [];
      // Thrown (not returned): pollUntil keeps polling and reports the last state on timeout.
      if (!p || st.length !== n) throw new Error(`pod of ${n}: ${p ? `${st.length} container statuses` : 'not in /pods'}`);
      const sleepers = st.filter((c) => Number(c.name.slice(1)) >= crashers);
      const running = sleepers.filter((c) => c.state?.running !== undefined).length;
      const restartsSeen = st.filter((c) => Number(c.name.slice(1)) < crashers).map((c) => c.restartCount ?? 0);
      if (running < sleepers.length || restartsSeen.some((r) => r < restarts)) {
        throw new Error(`pod of ${n}: ${running}/${sleepers.length} sleepers running, crasher restarts ${restartsSeen.join(',')}`);
      }
      out.set(n, p);
    }
    return out;
  }, { what: `pods of ${sizes.join(', ')} containers started, crashers restarted ${restarts}×`, timeoutMs, intervalMs: 500 });
}

/** The runtime holds exactly one ready sandbox and every sleeper running for each pod. */
export async function assertRuntimeHolds(endpoint: string, pods: ReadonlyMap<number, V1Pod>, crashers: number): Promise<void> {
  const view = await runtimeView(endpoint);
  for (const [n, p] of pods) {
    const v = view.get(p.metadata?.uid ?? '');
    assert.ok(v, `pod of ${n} containers is in the runtime`);
    assert.equal(v.sandboxes.filter((s) => s.state === 'SANDBOX_READY').length, 1, `pod of ${n}: one ready sandbox`);
    const running = new Set(v.containers.filter((c) => c.state === 'CONTAINER_RUNNING').map((c) => c.name));
    for (let k = crashers; k < n; k++) assert.ok(running.has(`c${k}`), `pod of ${n}: c${k} running`);
  }
}

/** Polls until the runtime holds no running container and no ready sandbox of `uid`; returns the ms it took from `sinceMs`. */
export async function waitKilled(endpoint: string, uid: string, sinceMs: number, what: string): Promise<number> {
  await pollUntil(async () => {
    const v = (await runtimeView(endpoint)).get(uid);
    if (!v) return true;
    return v.containers.every((c) => c.state !== 'CONTAINER_RUNNING') && v.sandboxes.every((s) => s.state !== 'SANDBOX_READY') ? true : undefined;
  }, { what, timeoutMs: 120_000, intervalMs: 200 });
  return Date.now() - sinceMs;
}

/** /healthz/podcache and shardlet_pod_cache_unstored_pods as the agent reports them. */
export async function podCacheHealth(agent: AgentProcess): Promise<{ status: number; body: string; unstored: number | undefined; oversizeTotal: number | undefined }> {
  const h = await agent.get('/healthz/podcache');
  const m = await agent.get('/metrics');
  const sample = (name: string): number | undefined => {
    const hit = new RegExp(`^${name}(?:\\{\\})? (\\S+)$`, 'm').exec(m.body);
    return hit ? Number(hit[1]) : undefined;
  };
  return { status: h.status, body: h.body, unstored: sample('shardlet_pod_cache_unstored_pods'), oversizeTotal: sample('shardlet_pod_cache_oversize_total') };
}
