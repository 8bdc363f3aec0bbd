/** Pod, status and clock helpers shared by the prober tests (advance waits on completion signals, see ProbeActivity). */
import type { V1Container, V1Pod, V1Probe } from '@kubernetes/client-node';
import type { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { within } from '../../harness/poll.js';
import type { FakeExecRuntime } from './fake-exec-runtime.js';
import type { ContainerState } from '../../../src/shared/cri/cri-types.js';
import type { RuntimePodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';

export function execProbe(over: Partial<V1Probe> = {}, command: string[] = ['/bin/check']): V1Probe {
  return { exec: { command }, ...over };
}

export function makePod(uid: string, containers: V1Container[], spec: Partial<NonNullable<V1Pod['spec']>> = {}): V1Pod {
  return { metadata: { uid, name: `pod-${uid}`, namespace: 'default' }, spec: { containers, ...spec } };
}

export interface InstanceSpec {
  name: string;
  id: string;
  state?: ContainerState;
  /** Wall-clock ms the instance started; default: created but not started. */
  startedAtMs?: number;
}

export function makeStatus(uid: string, instances: InstanceSpec[], opts: { ip?: string; hostNetwork?: boolean } = {}): RuntimePodStatus {
  const ip = opts.ip ?? '10.1.0.7';
  return {
    uid,
    name: `pod-${uid}`,
    namespace: 'default',
    ips: ip === '' ? [] : [ip],
    sandboxes: [{ id: `sb-${uid}`, state: 'SANDBOX_READY', createdAtNs: '1', attempt: 0, ip, ips: ip === '' ? [] : [ip], hostNetwork: opts.hostNetwork ?? false }],
    containers: instances.map((i) => ({
      id: i.id,
      podSandboxId: `sb-${uid}`,
      name: i.name,
      state: i.state ?? 'CONTAINER_RUNNING',
      createdAtNs: '1',
      startedAtNs: i.startedAtMs === undefined ? '0' : String(Math.round(i.startedAtMs * 1e6)),
      finishedAtNs: '0',
      exitCode: 0,
      reason: '',
      message: '',
      image: 'img',
      imageRef: 'img',
      hash: 'h',
      restartCount: 0,
      attempt: 0,
    })),
  };
}

/**
 * Tells when the probers of a manager are quiet: every probe run in flight is either done (its
 * result, update and event applied — the manager's onProbesInFlight observer) or parked on the
 * fake clock inside the fake runtime (FakeExecRuntime.sleeping). A completion signal, not a count
 * of event-loop turns. Wire it with `trackProbes`.
 */
export class ProbeActivity {
  readonly #rt: FakeExecRuntime | undefined;
  #running = 0;
  #waiters: (() => void)[] = [];

  constructor(rt: FakeExecRuntime | undefined) {
    this.#rt = rt;
    if (rt) rt.onSleepingChange = () => this.#check();
  }

  /** Pass as ProberManagerDeps.onProbesInFlight. */
  readonly onProbesInFlight = (running: number): void => {
    this.#running = running;
    this.#check();
  };

  /** Resolves (bounded) once every run in flight is done or parked on the clock. */
  quiet(what: string): Promise<void> {
    if (this.#isQuiet()) return Promise.resolve();
    return within(new Promise<void>((r) => this.#waiters.push(r)), `the probers to be quiet (${what}); in flight ${this.#running}, parked ${this.#rt?.sleeping ?? 0}`);
  }

  #isQuiet(): boolean {
    return this.#running === (this.#rt?.sleeping ?? 0);
  }

  #check(): void {
    if (!this.#isQuiet() || this.#waiters.length === 0) return;
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }
}

const activities = new WeakMap<FakeClock, ProbeActivity>();

/**
 * The ProbeActivity for a manager on `clock` whose ExecSync calls go to `rt` (none with a
 * replaced prober): pass its onProbesInFlight to the manager. `advance(clock, …)` then waits on it.
 */
export function trackProbes(clock: FakeClock, rt?: FakeExecRuntime): ProbeActivity {
  const a = new ProbeActivity(rt);
  activities.set(clock, a);
  return a;
}

/**
 * Advance fake time by `ms` in `stepMs` increments; after each step (and before the first), wait
 * until the probers are quiet (see ProbeActivity; the clock must have one from trackProbes).
 */
export async function advance(clock: FakeClock, ms: number, stepMs = 100): Promise<void> {
  const activity = activities.get(clock);
  if (!activity) throw new Error('advance: call trackProbes(clock, runtime) and wire its onProbesInFlight first');
  const end = clock.now() + ms;
  await activity.quiet('before advancing');
  clock.step(0);
  await activity.quiet('after the due timers');
  while (clock.now() < end) {
    clock.step(Math.min(stepMs, end - clock.now()));
    await activity.quiet(`at +${ms - (end - clock.now())} ms`);
  }
}
