/**
 * The correctness audit: after every workload the bench compares what it asked for with what
 * the runtime (ListPodSandbox + ListContainers over CRI) and the agent (/pods) really hold. A
 * lost pod, a duplicated pod (two sandboxes or two containers for one UID), a pod nobody asked
 * for, or a deleted pod still present is a failure, reported as one line naming the pod.
 *
 * `inventory` does the two CRI list calls; everything else is pure.
 */
import type { RuntimeService } from '../src/shared/cri/runtime-service.js';
import type { Container, PodSandbox } from '../src/shared/cri/cri-types.js';
import { KubernetesPodUIDLabel } from '../src/shared/kubetypes/kubelet-labels.js';
import type { AgentPodView } from './agent-observer.js';

export interface ExpectedPod {
  uid: string;
  name: string;
  /** Containers the pod has (absent: 1). */
  containers?: number;
}

export interface RuntimeInventory {
  sandboxesByUid: Map<string, PodSandbox[]>;
  containersByUid: Map<string, Container[]>;
}

function podUidOf(labels: Readonly<Record<string, string>>, metadataUid: string | undefined): string {
  return labels[KubernetesPodUIDLabel] ?? metadataUid ?? '';
}

export function buildInventory(sandboxes: readonly PodSandbox[], containers: readonly Container[]): RuntimeInventory {
  const sandboxesByUid = new Map<string, PodSandbox[]>();
  const sandboxUid = new Map<string, string>();
  for (const s of sandboxes) {
    const uid = podUidOf(s.labels, s.metadata?.uid);
    sandboxUid.set(s.id, uid);
    sandboxesByUid.set(uid, [...(sandboxesByUid.get(uid) ?? []), s]);
  }
  const containersByUid = new Map<string, Container[]>();
  for (const c of containers) {
    const uid = c.labels[KubernetesPodUIDLabel] ?? sandboxUid.get(c.podSandboxId) ?? '';
    containersByUid.set(uid, [...(containersByUid.get(uid) ?? []), c]);
  }
  return { sandboxesByUid, containersByUid };
}

export async function inventory(rt: Pick<RuntimeService, 'listPodSandbox' | 'listContainers'>): Promise<RuntimeInventory> {
  const [sandboxes, containers] = await Promise.all([rt.listPodSandbox(), rt.listContainers()]);
  return buildInventory(sandboxes, containers);
}

/**
 * Every expected pod has exactly one sandbox (READY) and exactly one instance of each of its
 * containers (RUNNING) in
 * the runtime, and the runtime holds no pod outside `expected` except UIDs in `tolerated`
 * (pods deleted moments ago, still being torn down).
 */
export function auditRuntimeRunning(inv: RuntimeInventory, expected: readonly ExpectedPod[], tolerated: ReadonlySet<string> = new Set()): string[] {
  const failures: string[] = [];
  const want = new Set(expected.map((p) => p.uid));
  for (const p of expected) {
    const sbs = inv.sandboxesByUid.get(p.uid) ?? [];
    const cts = inv.containersByUid.get(p.uid) ?? [];
    if (sbs.length === 0) failures.push(`pod ${p.name} (${p.uid}) is missing from the runtime: no sandbox`);
    else if (sbs.length > 1) failures.push(`pod ${p.name} (${p.uid}) is duplicated in the runtime: ${sbs.length} sandboxes (${sbs.map((s) => `${s.id.slice(0, 12)}:${s.state}`).join(', ')})`);
    else if (sbs[0]?.state !== 'SANDBOX_READY') failures.push(`pod ${p.name} (${p.uid}): sandbox is ${sbs[0]?.state}, not SANDBOX_READY`);
    const wantContainers = p.containers ?? 1;
    const notRunning = cts.filter((c) => c.state !== 'CONTAINER_RUNNING');
    if (cts.length === 0 && sbs.length > 0) failures.push(`pod ${p.name} (${p.uid}) has no container in the runtime`);
    else if (cts.length > wantContainers) failures.push(`pod ${p.name} (${p.uid}) is duplicated in the runtime: ${cts.length} containers${wantContainers > 1 ? ` for ${wantContainers}` : ''} (${cts.slice(0, 4).map((c) => `${c.id.slice(0, 12)}:${c.state}`).join(', ')}${cts.length > 4 ? ', …' : ''})`);
    else if (cts.length > 0 && cts.length < wantContainers) failures.push(`pod ${p.name} (${p.uid}) has ${cts.length} of its ${wantContainers} containers in the runtime`);
    else if (notRunning.length > 0) failures.push(`pod ${p.name} (${p.uid}): container${wantContainers > 1 ? ` ${notRunning[0]?.metadata?.name ?? '?'}` : ''} is ${notRunning[0]?.state}, not CONTAINER_RUNNING`);
  }
  for (const uid of new Set([...inv.sandboxesByUid.keys(), ...inv.containersByUid.keys()])) {
    if (!want.has(uid) && !tolerated.has(uid)) failures.push(`the runtime holds a pod nobody asked for: uid ${JSON.stringify(uid)}`);
  }
  return failures;
}

/** Teardown state of deleted pods: `stopped` = no READY sandbox and no RUNNING/CREATED container; `removed` = nothing left. */
export function teardownState(inv: RuntimeInventory, uid: string): 'running' | 'stopped' | 'removed' {
  const sbs = inv.sandboxesByUid.get(uid) ?? [];
  const cts = inv.containersByUid.get(uid) ?? [];
  if (sbs.length === 0 && cts.length === 0) return 'removed';
  const live = sbs.some((s) => s.state === 'SANDBOX_READY') || cts.some((c) => c.state === 'CONTAINER_RUNNING' || c.state === 'CONTAINER_CREATED');
  return live ? 'running' : 'stopped';
}

/** Deleted pods that are still present in the runtime at `level` or worse. */
export function auditRuntimeGone(inv: RuntimeInventory, deleted: readonly ExpectedPod[], level: 'stopped' | 'removed'): string[] {
  const failures: string[] = [];
  for (const p of deleted) {
    const st = teardownState(inv, p.uid);
    if (st === 'running' || (level === 'removed' && st === 'stopped')) {
      failures.push(`deleted pod ${p.name} (${p.uid}) is still in the runtime (${st}: ${inv.sandboxesByUid.get(p.uid)?.length ?? 0} sandboxes, ${inv.containersByUid.get(p.uid)?.length ?? 0} containers)`);
    }
  }
  return failures;
}

/** The agent's /pods lists each expected pod exactly once, Running with every container running, and nothing else. */
export function auditAgentPods(views: readonly AgentPodView[], expected: readonly ExpectedPod[], tolerated: ReadonlySet<string> = new Set()): string[] {
  const failures: string[] = [];
  const byUid = new Map<string, AgentPodView[]>();
  for (const v of views) byUid.set(v.uid, [...(byUid.get(v.uid) ?? []), v]);
  const want = new Set(expected.map((p) => p.uid));
  for (const p of expected) {
    const vs = byUid.get(p.uid) ?? [];
    if (vs.length === 0) failures.push(`pod ${p.name} (${p.uid}) is missing from the agent's /pods`);
    else if (vs.length > 1) failures.push(`pod ${p.name} (${p.uid}) appears ${vs.length} times in the agent's /pods`);
    else if (vs[0]?.phase !== 'Running' || !vs[0].allRunning) failures.push(`pod ${p.name} (${p.uid}) is not running in /pods (phase ${JSON.stringify(vs[0]?.phase)}, ${vs[0]?.containers} container statuses)`);
  }
  for (const v of views) {
    if (!want.has(v.uid) && !tolerated.has(v.uid)) failures.push(`the agent's /pods lists a pod nobody asked for: ${v.namespace}/${v.name} (${v.uid})`);
  }
  return failures;
}

/** Deleted pods the agent still lists in /pods. */
export function auditAgentGone(views: readonly AgentPodView[], deleted: readonly ExpectedPod[]): string[] {
  const present = new Set(views.map((v) => v.uid));
  return deleted.filter((p) => present.has(p.uid)).map((p) => `deleted pod ${p.name} (${p.uid}) is still listed in the agent's /pods`);
}

/** At most `max` failure lines, then a count of the rest: a broken run must stay readable. */
export function capFailures(lines: readonly string[], max = 10): string[] {
  return lines.length <= max ? [...lines] : [...lines.slice(0, max), `… and ${lines.length - max} more`];
}
