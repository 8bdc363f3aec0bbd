/**
 * Sidecar containers (restartable init containers, KEP-753, issue 30), run by the agent process
 * against a CRI runtime: the same steps on the simulated runtime (agent-sidecar-sim.test.ts) and
 * on containerd (agent-sidecar-containerd.test.ts). The pods are static pods (a manifest dir):
 * the only API server here, v1.20.2, prunes initContainers[].restartPolicy (a 1.28 field), so an
 * API-server pod cannot carry a sidecar (README).
 *
 * Pods (each with shareProcessNamespace, so busybox `sleep` is not PID 1 and SIGTERM ends it):
 *  - sc-start: the sidecar has a startupProbe with initialDelaySeconds 3 and a passing
 *    readinessProbe: the regular container starts only after the probe passed (≥ 3 s after the
 *    sidecar), then the pod is Ready with the sidecar started and ready;
 *  - sc-unready: the sidecar's readinessProbe fails: the pod runs but is not Ready, naming it;
 *  - sc-crash: restartPolicy Never, the sidecar exits 1 after a second: it is restarted (with
 *    crash backoff) while the regular container keeps running;
 *  - sc-job: restartPolicy Never, the regular container exits 0 after 3 s while the sidecar
 *    would run forever: the sidecar is stopped and the pod Succeeded;
 *  - sc-term: removing the manifest stops the regular container (preStop sleep 3) first, then
 *    the sidecars in reverse order, all within the grace period. Without ordering s2 (preStop
 *    sleep 1) and s1 (none) would stop before main; with sidecars after regular containers but
 *    not in reverse order, s1 could stop before s2. The order is read from the runtime: each
 *    container's finishedAt (CRI ContainerStatus) once the 100 ms poll sees it exited.
 * Every wait is a bounded poll.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { isNotFound } from '../../src/shared/cri/cri-errors.js';
import { pollUntil, runtimeView, type AgentProcess } from './agent-harness.js';

export const TERM_GRACE_SECONDS = 10;
const STARTUP_DELAY_SECONDS = 3;

function c(name: string, image: string, command: string[], extra: string[] = []): string[] {
  return [`  - name: ${name}`, `    image: ${image}`, '    imagePullPolicy: IfNotPresent', `    command: ${JSON.stringify(command)}`, ...extra];
}
const SIDECAR = ['    restartPolicy: Always'];
const exec = (kind: string, command: string[], more = ''): string[] => [`    ${kind}:`, `      exec: {command: ${JSON.stringify(command)}}`, `      periodSeconds: 1${more}`];

function write(dir: string, name: string, spec: { restartPolicy?: string; grace?: number; init: string[]; containers: string[] }): void {
  const lines = [
    'apiVersion: v1', 'kind: Pod', 'metadata:', `  name: ${name}`, '  namespace: default', 'spec:',
    '  hostNetwork: true', '  shareProcessNamespace: true', `  restartPolicy: ${spec.restartPolicy ?? 'Always'}`,
    `  terminationGracePeriodSeconds: ${spec.grace ?? 5}`, '  initContainers:', ...spec.init, '  containers:', ...spec.containers,
  ];
  fs.writeFileSync(path.join(dir, `${name}.yaml`), lines.join('\n') + '\n');
}

export function writeSidecarPods(dir: string, image: string): void {
  const sleep = ['sleep', '100000'];
  write(dir, 'sc-start', {
    init: c('side', image, sleep, [...SIDECAR, ...exec('startupProbe', ['true'], `\n      initialDelaySeconds: ${STARTUP_DELAY_SECONDS}`), ...exec('readinessProbe', ['true'])]),
    containers: c('main', image, sleep),
  });
  write(dir, 'sc-unready', { init: c('side', image, sleep, [...SIDECAR, ...exec('readinessProbe', ['false'])]), containers: c('main', image, sleep) });
  write(dir, 'sc-crash', { restartPolicy: 'Never', init: c('side', image, ['sh', '-c', 'sleep 1; exit 1'], SIDECAR), containers: c('main', image, sleep) });
  write(dir, 'sc-job', { restartPolicy: 'Never', init: c('side', image, sleep, SIDECAR), containers: c('main', image, ['sh', '-c', 'sleep 3; exit 0']) });
  const preStop = (seconds: number): string[] => ['    lifecycle:', `      preStop: {exec: {command: ["sleep", "${seconds}"]}}`];
  write(dir, 'sc-term', {
    grace: TERM_GRACE_SECONDS,
    init: [...c('s1', image, sleep, SIDECAR), ...c('s2', image, sleep, [...SIDECAR, ...preStop(1)])],
    containers: c('main', image, sleep, preStop(3)),
  });
}

const ms = (t: Date | string | undefined): number => (t === undefined ? NaN : new Date(t).getTime());

async function podNamed(agent: AgentProcess, name: string, node: string): Promise<V1Pod | undefined> {
  return (await agent.pods()).find((p) => p.metadata?.name === `${name}-${node}`);
}

/** Polls the pod until `check` returns a value (or throws a description of what is missing). */
async function waitPod<T>(agent: AgentProcess, name: string, node: string, what: string, timeoutMs: number, check: (p: V1Pod) => T | undefined): Promise<T> {
  return pollUntil(async () => {
    const p = await podNamed(agent, name, node);
    if (!p) throw new Error(`${name} not in /pods`);
    const out = check(p);
    // Thrown (not returned): pollUntil keeps polling and reports the last state on timeout.
    if (out === undefined) throw new Error(`${name} not yet: ${brief(p)}`);
    return out;
  }, { what: `${name}: ${what}`, timeoutMs, intervalMs: 250 });
}

const byName = (list: V1ContainerStatus[] | undefined, name: string): V1ContainerStatus | undefined => list?.find((s) => s.name === name);
const cond = (p: V1Pod, type: string): string => {
  const x = p.status?.conditions?.find((k) => k.type === type);
  return x ? `${x.status}${x.reason ? `:${x.reason}` : ''}${x.message ? `:${x.message}` : ''}` : 'missing';
};
const brief = (p: V1Pod): string => JSON.stringify({ phase: p.status?.phase, init: p.status?.initContainerStatuses, ctrs: p.status?.containerStatuses, conds: p.status?.conditions?.map((k) => `${k.type}=${k.status}`) });

export async function startOrderAndReadiness(agent: AgentProcess, node: string, timeoutMs: number): Promise<{ gapMs: number }> {
  const p = await waitPod(agent, 'sc-start', node, 'Running and Ready', timeoutMs, (x) => (cond(x, 'Ready') === 'True' ? x : undefined));
  const side = byName(p.status?.initContainerStatuses, 'side');
  const main = byName(p.status?.containerStatuses, 'main');
  assert.ok(side?.state?.running && main?.state?.running, brief(p));
  assert.deepEqual([side.started, side.ready, side.restartCount], [true, true, 0], brief(p));
  assert.equal(p.status?.phase, 'Running');
  assert.equal(cond(p, 'Initialized'), 'True');
  // The regular container started only once the sidecar's startup probe passed (it first runs
  // STARTUP_DELAY_SECONDS after the sidecar started; startedAt has whole-second precision).
  const gapMs = ms(main.state.running.startedAt) - ms(side.state.running.startedAt);
  assert.ok(gapMs >= (STARTUP_DELAY_SECONDS - 1) * 1000, `main started ${gapMs} ms after the sidecar: ${brief(p)}`);

  const u = await waitPod(agent, 'sc-unready', node, 'running, not Ready because of the sidecar', timeoutMs, (x) => {
    const m = byName(x.status?.containerStatuses, 'main');
    return m?.ready === true && x.status?.phase === 'Running' ? x : undefined;
  });
  assert.equal(cond(u, 'Ready'), 'False:ContainersNotReady:containers with unready status: [side]', brief(u));
  assert.equal(cond(u, 'ContainersReady'), 'False:ContainersNotReady:containers with unready status: [side]');
  assert.deepEqual([byName(u.status?.initContainerStatuses, 'side')?.started, byName(u.status?.initContainerStatuses, 'side')?.ready], [true, false]);
  return { gapMs };
}

export async function crashRestartUnderNever(agent: AgentProcess, node: string, timeoutMs: number): Promise<void> {
  const p = await waitPod(agent, 'sc-crash', node, 'sidecar restarted twice under restartPolicy Never', timeoutMs, (x) => {
    const side = byName(x.status?.initContainerStatuses, 'side');
    return (side?.restartCount ?? 0) >= 2 ? x : undefined;
  });
  const main = byName(p.status?.containerStatuses, 'main');
  assert.ok(main?.state?.running, brief(p));
  assert.equal(main.restartCount, 0);
  assert.equal(p.status?.phase, 'Running', brief(p));
  // Its last exit: the current state while it waits out its backoff, else the previous one.
  const side = byName(p.status?.initContainerStatuses, 'side');
  assert.equal(side?.state?.terminated?.exitCode ?? side?.lastState?.terminated?.exitCode, 1, brief(p));
}

export async function jobCompletion(agent: AgentProcess, endpoint: string, node: string, timeoutMs: number): Promise<void> {
  const p = await waitPod(agent, 'sc-job', node, 'Succeeded', timeoutMs, (x) => (x.status?.phase === 'Succeeded' ? x : undefined));
  const main = byName(p.status?.containerStatuses, 'main');
  assert.equal(main?.state?.terminated?.exitCode, 0, brief(p));
  assert.ok(byName(p.status?.initContainerStatuses, 'side')?.state?.terminated, `the sidecar was stopped: ${brief(p)}`);
  assert.equal(cond(p, 'Ready'), 'False:PodCompleted');
  const uid = p.metadata?.uid ?? '';
  await pollUntil(async () => {
    const v = (await runtimeView(endpoint)).get(uid);
    return !v || v.containers.every((x) => x.state !== 'CONTAINER_RUNNING') ? true : undefined;
  }, { what: 'sc-job: nothing of it running in the runtime', timeoutMs: 30_000, intervalMs: 250 });
}

/**
 * Removes sc-term's manifest and watches the runtime: returns when each container finished (ms
 * after the first one, from the runtime's finishedAt) and how long the whole kill took (until
 * the last one was seen stopped).
 */
export async function terminationOrder(agent: AgentProcess, endpoint: string, dir: string, node: string, timeoutMs: number): Promise<{ stoppedAt: Record<string, number>; tookMs: number }> {
  const p = await waitPod(agent, 'sc-term', node, 'all running', timeoutMs, (x) => (x.status?.phase === 'Running' && cond(x, 'Ready') === 'True' ? x : undefined));
  const uid = p.metadata?.uid ?? '';
  // The running instances' ids, taken before the kill: once all three have stopped, cleanup
  // removes them within about a second, so each is read by id (ContainerStatus, every 50 ms)
  // rather than found again in a listing that may no longer hold it.
  const running = (await runtimeView(endpoint)).get(uid)?.containers.filter((k) => k.state === 'CONTAINER_RUNNING') ?? [];
  const ids: Record<string, string> = {};
  for (const name of ['main', 's1', 's2']) {
    const x = running.find((k) => k.name === name);
    assert.ok(x, `sc-term: ${name} running in the runtime before the kill`);
    ids[name] = x.id;
  }
  const t0 = Date.now();
  fs.rmSync(path.join(dir, 'sc-term.yaml'));
  const finishedNs: Record<string, bigint> = {};
  const removedUnseen: string[] = [];
  let lastSeen = t0;
  const cri = new CriClient({ endpoint, timeoutMs: 30_000 });
  try {
    await pollUntil(async () => {
      for (const name of ['main', 's1', 's2']) {
        if (finishedNs[name] !== undefined || removedUnseen.includes(name)) continue;
        let st;
        try {
          st = (await cri.containerStatus(ids[name]!)).status;
        } catch (err) {
          if (!isNotFound(err)) throw err;
          removedUnseen.push(name);
          continue;
        }
        if (st?.state !== 'CONTAINER_EXITED') continue;
        finishedNs[name] = BigInt(st.finishedAt ?? '0');
        lastSeen = Date.now();
      }
      assert.deepEqual(removedUnseen, [], `removed before it was seen exited (poll too slow): ${removedUnseen.join(', ')}`);
      if (Object.keys(finishedNs).length === 3) return true;
      throw new Error(`stopped so far: ${Object.keys(finishedNs).join(', ') || 'none'}`);
    }, { what: 'sc-term: every container stopped', timeoutMs: 60_000, intervalMs: 50 });
  } finally {
    cri.close();
  }
  const first = [...Object.values(finishedNs)].reduce((a, b) => (b < a ? b : a));
  const rel = Object.fromEntries(Object.entries(finishedNs).map(([k, v]) => [k, Number((v - first) / 1_000_000n)]));
  const tookMs = lastSeen - t0;
  // main (preStop 3 s) first although the sidecars' preStop hooks end sooner; then s2, then s1.
  assert.equal(rel['main'], 0, `main stopped first: ${JSON.stringify(rel)}`);
  assert.ok(finishedNs['s1']! >= finishedNs['s2']!, `s1 stopped no earlier than s2: ${JSON.stringify(rel)}`);
  assert.ok(finishedNs['s2']! >= finishedNs['main']!, `s2 stopped after main: ${JSON.stringify(rel)}`);
  return { stoppedAt: rel, tookMs };
}
