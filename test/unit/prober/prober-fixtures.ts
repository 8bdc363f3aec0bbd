/** Pod, status and clock helpers shared by the prober tests. */
import type { V1Container, V1Pod, V1Probe } from '@kubernetes/client-node';
import type { FakeClock } from '../../../src/shared/clock/fake-clock.js';
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

/** Let promise continuations and setImmediate callbacks run (no time passes). */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((r) => setImmediate(r));
}

/** Advance fake time by `ms` in `stepMs` increments, settling between steps. */
export async function advance(clock: FakeClock, ms: number, stepMs = 100): Promise<void> {
  const end = clock.now() + ms;
  await settle();
  clock.step(0);
  await settle();
  while (clock.now() < end) {
    clock.step(Math.min(stepMs, end - clock.now()));
    await settle();
  }
}
