/**
 * Pod lifecycle semantics on REAL containerd (issue "Pod lifecycle semantics"): the agent runs as
 * a process against a private containerd (test/harness/containerd-harness.ts; root only, never
 * skipped) with busybox workloads, one manifest per scenario, all scenarios concurrently:
 *
 *   1. init containers run one after the other, before the app container
 *      (Init:0/2 → Init:1/2 → PodInitializing → Running; CRI timestamps in order);
 *   2. a crash loop (exit 1, restartPolicy Always): restartCount climbs, the gaps between
 *      restarts grow (10 s, then 20 s backoff), CrashLoopBackOff is reported between restarts;
 *   3. a failing exec liveness probe restarts its container (and only that one);
 *   4. graceful termination: a SIGTERM-ignoring container is SIGKILLed at the grace deadline
 *      (137), a plain one exits on SIGTERM (143) long before its deadline;
 *   5. OnFailure + exit 0 ends Succeeded, Never + exit 2 ends Failed, and they stay so.
 *
 * State is observed by bounded polling of the agent's /pods (each scenario records the distinct
 * (phase, kubectl status, restartCount) it saw and asserts on that sequence) and of the runtime
 * through CRI. The only time bounds asserted are the semantic ones of the issue, with wide
 * margins on the side load can stretch (see scenario 4).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { startContainerd, type ContainerdInstance } from '../harness/containerd-harness.js';
import { pollUntil, startAgent, type AgentProcess } from './agent-harness.js';
import { TaskEvents } from './lifecycle-containerd-events.js';
import { nsToMs, PodTimeline, RuntimeRecorder, writeManifest } from './lifecycle-containerd-observe.js';

const NODE = 'node-lc';
const BUSYBOX = 'docker.io/local/busybox:1';
/** Pace of the /pods and CRI polling: fine enough to see a status that lasts one relist (1 s). */
const POLL_MS = 150;

let ctrd: ContainerdInstance | undefined;
let agent: AgentProcess | undefined;
let cri: CriClient | undefined;
let events: TaskEvents | undefined;
let dir = '';

before(async () => {
  ctrd = await startContainerd();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-lifecycle-'));
  events = TaskEvents.subscribe(ctrd.socketPath);
  agent = await startAgent({ endpoint: ctrd.endpoint, manifestDir: dir, workers: 2, nodeName: NODE });
  cri = new CriClient({ endpoint: ctrd.endpoint, timeoutMs: 30_000 });
}, { timeout: 90_000 });

after(async () => {
  events?.close();
  cri?.close();
  await agent?.stop();
  await ctrd?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}, { timeout: 90_000 });

/** The name the agent gives a static pod from manifest `name`. */
const podName = (name: string): string => `${name}-${NODE}`;

function podYaml(name: string, spec: string): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  hostNetwork: true\n${spec}`;
}

function container(name: string, command: string[], extra = ''): string {
  return `  - name: ${name}\n    image: ${BUSYBOX}\n    imagePullPolicy: Never\n    command: ${JSON.stringify(command)}\n${extra}`;
}

/** Diagnostics for a failed assertion: what the agent and the runtime showed. */
function story(tl: PodTimeline, rt?: RuntimeRecorder): string {
  const t0 = tl.steps[0]?.atMs ?? 0;
  const steps = tl.steps.map((s) => `  +${s.atMs - t0}ms ${s.phase}/${s.display}/restarts=${s.restarts}`).join('\n');
  const containers = rt
    ? [...rt.containers.values()].map((c) => `  ${c.name}#${c.attempt} ${c.state} exit=${c.exitCode} started=${nsToMs(c.startedAt)} finished=${nsToMs(c.finishedAt)}`).join('\n')
    : '';
  return `\n/pods sequence of ${tl.name}:\n${steps}\nruntime:\n${containers}\nagent log tail:\n${(agent?.logs ?? []).filter((l) => l.includes(tl.name)).slice(-15).join('\n')}`;
}

/**
 * Polls /pods (and the runtime, when a recorder is given) until `done` holds, feeding every
 * answer to the timeline; returns what `done` returned.
 */
async function observeUntil<T>(tl: PodTimeline, rt: RuntimeRecorder | undefined, what: string, timeoutMs: number, done: () => T | undefined | Promise<T | undefined>): Promise<T> {
  try {
    return await pollUntil(async () => {
      const pods = await agent!.pods();
      tl.observe(pods, Date.now());
      if (rt) await rt.observe(cri!);
      return done();
    }, { what, timeoutMs, intervalMs: POLL_MS });
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}${story(tl, rt)}`, { cause: err });
  }
}

/** The agent's count of PLEG relists so far (from /metrics). */
async function relistCount(): Promise<number> {
  const body = (await agent!.get('/metrics')).body;
  const m = /^kubelet_pleg_relist_duration_seconds_count(?:\{[^}]*\})? (\d+)/m.exec(body);
  return m ? Number(m[1]) : 0;
}

/** Asserts `seq` is `order` with some entries left out (each element a member of `order`, in order). */
function assertOrderedSubsequence(seq: readonly string[], order: readonly string[], msg: string): void {
  let at = 0;
  for (const s of seq) {
    const i = order.indexOf(s, at);
    assert.ok(i >= 0, `${msg}: "${s}" not expected here (sequence ${JSON.stringify(seq)}, allowed order ${JSON.stringify(order)})`);
    at = i;
  }
}

describe('pod lifecycle on containerd', { concurrency: true }, () => {
  it('init containers run in order before the app container: Init:0/2 → Init:1/2 → PodInitializing → Running', async (t) => {
    const name = 'lc-init';
    // Each init container outlives a couple of relists, so each Init:i/2 state is visible in /pods.
    writeManifest(dir, name, podYaml(name, `  terminationGracePeriodSeconds: 1\n  initContainers:\n${container('init-1', ['sh', '-c', 'sleep 3; echo i1'])}${container('init-2', ['sh', '-c', 'sleep 3; echo i2'])}  containers:\n${container('main', ['sleep', '100000'])}`));
    const tl = new PodTimeline(podName(name));
    const rt = new RuntimeRecorder(podName(name));
    await observeUntil(tl, rt, `${name} running`, 60_000, () => (tl.last?.status?.phase === 'Running' && tl.container('main')?.state?.running ? true : undefined));

    // A leading "Pending" (no container statuses yet) is the pod before its worker's first status.
    const displays = tl.displays().filter((d, i) => !(i === 0 && d === 'Pending'));
    assert.equal(displays[0], 'Init:0/2', `first status${story(tl, rt)}`);
    assert.ok(displays.includes('Init:1/2'), `Init:1/2 seen${story(tl, rt)}`);
    assert.equal(displays.at(-1), 'Running', story(tl, rt));
    assertOrderedSubsequence(displays, ['Init:0/2', 'Init:1/2', 'PodInitializing', 'Running'], `status order${story(tl, rt)}`);
    for (const s of tl.steps) assert.equal(s.phase, s.display === 'Running' ? 'Running' : 'Pending', `phase of ${s.display}${story(tl, rt)}`);

    const [i1, i2, main] = [rt.byName('init-1'), rt.byName('init-2'), rt.byName('main')];
    assert.equal(i1.length, 1, `init-1 ran once${story(tl, rt)}`);
    assert.equal(i2.length, 1, `init-2 ran once${story(tl, rt)}`);
    assert.equal(main.length, 1, story(tl, rt));
    assert.equal(i1[0]!.exitCode, 0);
    assert.equal(i2[0]!.exitCode, 0);
    assert.equal(i1[0]!.state, 'CONTAINER_EXITED');
    assert.ok(i1[0]!.finishedAt > 0n && i1[0]!.finishedAt <= i2[0]!.createdAt, `init-2 created after init-1 finished${story(tl, rt)}`);
    assert.ok(i2[0]!.finishedAt > 0n && i2[0]!.finishedAt <= main[0]!.createdAt, `main created after init-2 finished${story(tl, rt)}`);
    t.diagnostic(`/pods: ${tl.timedTuples().join(' → ')}`);
    const initStatuses = tl.last?.status?.initContainerStatuses ?? [];
    assert.deepEqual(initStatuses.map((c) => [c.name, c.state?.terminated?.exitCode, c.state?.terminated?.reason]), [['init-1', 0, 'Completed'], ['init-2', 0, 'Completed']]);
  });

  it('a crash loop restarts with growing backoff and reports CrashLoopBackOff between restarts', async (t) => {
    const name = 'lc-crash';
    writeManifest(dir, name, podYaml(name, `  restartPolicy: Always\n  terminationGracePeriodSeconds: 1\n  containers:\n${container('crash', ['sh', '-c', 'exit 1'])}`));
    const tl = new PodTimeline(podName(name));
    const rt = new RuntimeRecorder(podName(name));
    // restart 1 at once, 2 after 10 s, 3 after 20 s more (kubelet backoff: 10 s doubling).
    await observeUntil(tl, rt, `${name} restarted 3 times`, 120_000, () => {
      const attempts = rt.byName('crash');
      return (tl.last ? tl.steps.at(-1)!.restarts >= 3 : false) && attempts.some((c) => c.attempt === 3 && c.startedAt > 0n) ? true : undefined;
    });

    const restarts = tl.steps.map((s) => s.restarts);
    for (let i = 1; i < restarts.length; i++) assert.ok(restarts[i]! >= restarts[i - 1]!, `restartCount never decreases${story(tl, rt)}`);
    for (const n of [1, 2]) {
      assert.ok(tl.steps.some((s) => s.display === 'CrashLoopBackOff' && s.restarts === n), `CrashLoopBackOff seen while restartCount was ${n}${story(tl, rt)}`);
    }
    for (const s of tl.steps) assert.ok(s.phase === 'Pending' || s.phase === 'Running', `phase ${s.phase} of a restartPolicy Always pod${story(tl, rt)}`);
    const last = tl.container('crash');
    assert.equal(last?.lastState?.terminated?.exitCode, 1, story(tl, rt));

    // Runtime: the time each attempt waited after its predecessor exited grows with the backoff.
    const byAttempt = new Map(rt.byName('crash').map((c) => [c.attempt, c]));
    const wait = (n: number): number => {
      const prev = byAttempt.get(n - 1);
      const cur = byAttempt.get(n);
      assert.ok(prev && cur && prev.finishedAt > 0n && cur.startedAt > 0n, `attempts ${n - 1} and ${n} both seen with times${story(tl, rt)}`);
      return nsToMs(cur.startedAt - prev.finishedAt);
    };
    const [gap2, gap3] = [wait(2), wait(3)];
    t.diagnostic(`restart waits: attempt 2 after ${gap2} ms, attempt 3 after ${gap3} ms; /pods: ${tl.timedTuples().join(' → ')}`);
    assert.ok(gap2 >= 9_000, `attempt 2 waited out the first backoff (10 s), waited ${gap2} ms${story(tl, rt)}`);
    assert.ok(gap3 > gap2, `backoff grows: ${gap2} ms then ${gap3} ms${story(tl, rt)}`);
    for (const c of byAttempt.values()) if (c.finishedAt > 0n) assert.equal(c.exitCode, 1);
  });

  it('a failing exec liveness probe restarts its container; a passing one does not', async (t) => {
    const name = 'lc-liveness';
    const probe = (cmd: string): string => `    livenessProbe:\n      exec:\n        command: ["sh", "-c", "${cmd}"]\n      periodSeconds: 1\n      failureThreshold: 1\n`;
    writeManifest(dir, name, podYaml(name, `  terminationGracePeriodSeconds: 1\n  containers:\n${container('bad', ['sleep', '100000'], probe('exit 1'))}${container('good', ['sleep', '100000'], probe('exit 0'))}`));
    const tl = new PodTimeline(podName(name));
    const rt = new RuntimeRecorder(podName(name));
    await observeUntil(tl, rt, `${name}: bad restarted by its probe`, 60_000, () => {
      const bad = tl.container('bad');
      return (bad?.restartCount ?? 0) >= 1 && bad?.lastState?.terminated ? true : undefined;
    });
    const bad = tl.container('bad')!;
    t.diagnostic(`/pods: ${tl.timedTuples().join(' → ')}; bad lastState ${JSON.stringify(bad.lastState?.terminated)}`);
    assert.ok(bad.lastState?.terminated, story(tl, rt));
    // sleep never exits by itself: the restart was the agent's kill (SIGTERM → or SIGKILL at the 1 s grace).
    assert.ok([137, 143].includes(bad.lastState.terminated.exitCode), `killed, exit ${bad.lastState.terminated.exitCode}${story(tl, rt)}`);
    assert.ok(rt.byName('bad').length >= 2, `a second bad container in the runtime${story(tl, rt)}`);
    const good = tl.container('good')!;
    assert.equal(good.restartCount, 0, `the container whose probe passes is left alone${story(tl, rt)}`);
    assert.ok(good.state?.running, story(tl, rt));
    assert.equal(rt.byName('good').length, 1, story(tl, rt));
  });

  it('termination honours the grace period: SIGTERM-ignoring container killed at the deadline (137), plain one exits on SIGTERM (143)', async (t) => {
    const trap = 'lc-grace-trap';
    const term = 'lc-grace-term';
    writeManifest(dir, trap, podYaml(trap, `  terminationGracePeriodSeconds: 3\n  containers:\n${container('main', ['sh', '-c', 'trap "" TERM; sleep 1000'])}`));
    // sleep must not be PID 1 of its own PID namespace: the kernel drops a SIGTERM sent to a
    // namespace's init that has no handler for it, so a lone `sleep` would only die at the
    // deadline. With a shared PID namespace the pause process is PID 1 and sleep dies of SIGTERM.
    writeManifest(dir, term, podYaml(term, `  terminationGracePeriodSeconds: 30\n  shareProcessNamespace: true\n  containers:\n${container('main', ['sleep', '1000'])}`));
    const tlTrap = new PodTimeline(podName(trap));
    const tlTerm = new PodTimeline(podName(term));
    const rtTrap = new RuntimeRecorder(podName(trap));
    const rtTerm = new RuntimeRecorder(podName(term));
    const both = async (): Promise<void> => {
      const pods = await agent!.pods();
      const now = Date.now();
      tlTrap.observe(pods, now);
      tlTerm.observe(pods, now);
      await Promise.all([rtTrap.observe(cri!), rtTerm.observe(cri!)]);
    };
    await pollUntil(async () => {
      await both();
      const running = (tl: PodTimeline): boolean => tl.last?.status?.phase === 'Running' && tl.container('main')?.state?.running !== undefined;
      return running(tlTrap) && running(tlTerm) ? true : undefined;
    }, { what: 'both grace pods running', timeoutMs: 60_000, intervalMs: POLL_MS });

    const [trapId] = rtTrap.byName('main').map((c) => c.id);
    const [termId] = rtTerm.byName('main').map((c) => c.id);
    assert.ok(trapId && termId, 'both containers seen in the runtime');
    // The event subscription is live (it saw both tasks start), so it will see both exits.
    await pollUntil(() => (events!.sawStart(trapId) && events!.sawStart(termId) ? true : undefined), {
      what: `containerd task start events of both grace containers (ctr events: ${events!.unparsed.join('; ')})`,
      timeoutMs: 10_000,
    });

    const removedAt = Date.now();
    fs.rmSync(path.join(dir, `${trap}.yaml`));
    fs.rmSync(path.join(dir, `${term}.yaml`));
    await pollUntil(async () => {
      await both();
      return tlTrap.gone && tlTerm.gone && rtTrap.goneAtMs !== undefined && rtTerm.goneAtMs !== undefined && events!.exitOf(trapId) && events!.exitOf(termId) ? true : undefined;
    }, { what: 'both grace pods gone from /pods and from the runtime, their exits seen', timeoutMs: 60_000, intervalMs: POLL_MS }).catch((err: unknown) => {
      throw new Error(`${String(err)}${story(tlTrap, rtTrap)}${story(tlTerm, rtTerm)}`);
    });

    const trapExit = events!.exitOf(trapId)!;
    const termExit = events!.exitOf(termId)!;
    assert.equal(trapExit.exitStatus, 137, `SIGKILL at the deadline${story(tlTrap, rtTrap)}`);
    assert.equal(termExit.exitStatus, 143, `exit on SIGTERM${story(tlTerm, rtTerm)}`);
    // The kill cannot have started before the manifest was removed, so ≥ 3 s after removal is a
    // hard lower bound; the upper bounds are generous (file notice + a loaded 2-core machine).
    const trapMs = trapExit.exitedAtMs - removedAt;
    const termMs = termExit.exitedAtMs - removedAt;
    assert.ok(trapMs >= 3_000, `killed no earlier than the 3 s grace period: ${trapMs} ms after removal${story(tlTrap, rtTrap)}`);
    assert.ok(trapMs < 15_000, `killed at the deadline, not much later: ${trapMs} ms after removal${story(tlTrap, rtTrap)}`);
    assert.ok(termMs < 15_000, `exited on SIGTERM well before its 30 s deadline: ${termMs} ms after removal${story(tlTerm, rtTerm)}`);
    assert.ok(termMs < trapMs, `the SIGTERM-honouring container went first (${termMs} ms vs ${trapMs} ms)`);
    // The pod leaves /pods as soon as its manifest is gone (as the kubelet's pod manager does);
    // it leaves the runtime (sandbox removed) only once its containers are dead.
    const goneMs = (rtTrap.goneAtMs ?? Infinity) - removedAt;
    assert.ok(goneMs >= 3_000 && goneMs < 20_000, `trap pod left the runtime ${goneMs} ms after its manifest was removed${story(tlTrap, rtTrap)}`);
    t.diagnostic(`after removal: term container exited at +${termMs} ms, trap container at +${trapMs} ms, trap pod gone from the runtime at +${goneMs} ms, from /pods at +${(tlTrap.goneAtMs ?? NaN) - removedAt} ms`);
  });

  for (const [policy, code, phase, reason] of [
    ['OnFailure', 0, 'Succeeded', 'Completed'],
    ['Never', 2, 'Failed', 'Error'],
  ] as const) {
    it(`restartPolicy ${policy} with exit ${code} ends ${phase} and stays so`, async (t) => {
      const name = `lc-${policy.toLowerCase()}-exit${code}`;
      writeManifest(dir, name, podYaml(name, `  restartPolicy: ${policy}\n  terminationGracePeriodSeconds: 1\n  containers:\n${container('main', ['sh', '-c', `sleep 1; exit ${code}`])}`));
      const tl = new PodTimeline(podName(name));
      const rt = new RuntimeRecorder(podName(name));
      await observeUntil(tl, rt, `${name} ${phase}`, 60_000, () => (tl.last?.status?.phase === phase ? true : undefined));
      // A few more relists: the phase must not leave the terminal state, nothing restarts.
      const relists = await relistCount();
      await observeUntil(tl, rt, `3 more relists after ${name} became ${phase}`, 30_000, async () => ((await relistCount()) >= relists + 3 ? true : undefined));
      t.diagnostic(`/pods: ${tl.timedTuples().join(' → ')}`);
      assertOrderedSubsequence(tl.steps.map((s) => s.phase), ['Pending', 'Running', phase], `phase sequence${story(tl, rt)}`);
      assert.equal(tl.steps.at(-1)?.phase, phase, story(tl, rt));
      assert.ok(tl.steps.every((s) => s.restarts === 0), `never restarted${story(tl, rt)}`);
      const main = tl.container('main');
      assert.equal(main?.state?.terminated?.exitCode, code, story(tl, rt));
      assert.equal(main?.state?.terminated?.reason, reason, story(tl, rt));
      assert.equal(rt.byName('main').length, 1, `one container attempt${story(tl, rt)}`);
      assert.equal(rt.byName('main')[0]?.exitCode, code);
    });
  }
});
