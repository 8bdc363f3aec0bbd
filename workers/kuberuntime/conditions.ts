/**
 * The pod conditions the kubelet owns (status/generate.go and generateAPIPodStatus), in the
 * kubelet's order: PodReadyToStartContainers, Initialized, Ready, ContainersReady, PodScheduled.
 * Messages list container names as Go prints a []string ("[a b]").
 *
 * Sidecars (restartable init containers): Initialized waits for each to have started (not
 * exited); ContainersReady (and so Ready) needs each to be ready, as the regular containers.
 *
 * Conditions the kubelet does not own (readiness gates' conditions, other controllers') are the
 * API pod's, as the pod reflector last delivered them (generateAPIPodStatus copies them from
 * pod.Status, never from the kubelet's own previous status, which may be older); Ready reads the
 * readiness gates from them. lastTransitionTime of an owned condition is carried over from the
 * previous status when its status did not change, else it is now (the kubelet's status manager,
 * updateLastTransitionTime).
 */
import type { V1Container, V1ContainerStatus, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { podConditionByKubelet } from '../../src/shared/kubetypes/pod-conditions.js';
import { appContainers, initContainers, isRestartableInitContainer, toDate } from './pod-spec.js';
import type { PodPhase } from './pod-phase.js';

type Cond = Pick<V1PodCondition, 'type' | 'status' | 'reason' | 'message'>;

const goList = (names: readonly string[]): string => `[${names.join(' ')}]`;

function cond(type: string, ok: boolean, reason?: string, message?: string): Cond {
  const c: Cond = { type, status: ok ? 'True' : 'False' };
  if (reason !== undefined) c.reason = reason;
  if (message !== undefined) c.message = message;
  return c;
}

/** The kubelet's isInitContainerInitialized: a sidecar has started; a regular init container succeeded. */
function isInitContainerInitialized(c: V1Container, s: V1ContainerStatus): boolean {
  if (isRestartableInitContainer(c)) return s.started === true;
  return s.state?.terminated !== undefined && s.state.terminated !== null && s.state.terminated.exitCode === 0;
}

export function initializedCondition(pod: V1Pod, statuses: readonly V1ContainerStatus[], phase: PodPhase): Cond {
  const inits = initContainers(pod);
  if (inits.length === 0) return cond('Initialized', true);
  const byName = new Map(statuses.map((s) => [s.name, s]));
  const unknown: string[] = [];
  const incomplete: string[] = [];
  for (const c of inits) {
    const s = byName.get(c.name);
    if (!s) unknown.push(c.name);
    else if (!isInitContainerInitialized(c, s)) incomplete.push(c.name);
  }
  if (phase === 'Succeeded' && unknown.length === 0) return cond('Initialized', true, 'PodCompleted');
  const apps = new Set(appContainers(pod).map((c) => c.name));
  if (statuses.some((s) => apps.has(s.name) && (s.state?.running || s.state?.terminated))) return cond('Initialized', true);
  const msgs: string[] = [];
  if (unknown.length > 0) msgs.push(`containers with unknown status: ${goList(unknown)}`);
  if (incomplete.length > 0) msgs.push(`containers with incomplete status: ${goList(incomplete)}`);
  return msgs.length > 0 ? cond('Initialized', false, 'ContainersNotInitialized', msgs.join(', ')) : cond('Initialized', true);
}

export function containersReadyCondition(pod: V1Pod, statuses: readonly V1ContainerStatus[], phase: PodPhase): Cond {
  const byName = new Map(statuses.map((s) => [s.name, s]));
  const unknown: string[] = [];
  const unready: string[] = [];
  for (const c of [...initContainers(pod).filter(isRestartableInitContainer), ...appContainers(pod)]) {
    const s = byName.get(c.name);
    if (!s) unknown.push(c.name);
    else if (!s.ready) unready.push(c.name);
  }
  if (phase === 'Succeeded' && unknown.length === 0) return cond('ContainersReady', false, 'PodCompleted');
  if (phase === 'Failed') return cond('ContainersReady', false, 'PodFailed');
  const msgs: string[] = [];
  if (unknown.length > 0) msgs.push(`containers with unknown status: ${goList(unknown)}`);
  if (unready.length > 0) msgs.push(`containers with unready status: ${goList(unready)}`);
  return msgs.length > 0 ? cond('ContainersReady', false, 'ContainersNotReady', msgs.join(', ')) : cond('ContainersReady', true);
}

/**
 * The kubelet's GeneratePodReadyCondition: ContainersReady's status, reason and message while it
 * is not True; then every readiness gate's condition in `existing` (the API pod's) must be True,
 * else ReadinessGatesNotReady with one message per gate.
 */
export function readyCondition(pod: V1Pod, containersReady: Cond, existing: readonly V1PodCondition[]): Cond {
  if (containersReady.status !== 'True') return { ...containersReady, type: 'Ready' };
  const msgs: string[] = [];
  for (const gate of pod.spec?.readinessGates ?? []) {
    const c = existing.find((x) => x.type === gate.conditionType);
    if (!c) msgs.push(`corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`);
    else if (c.status !== 'True') msgs.push(`the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`);
  }
  return msgs.length > 0 ? cond('Ready', false, 'ReadinessGatesNotReady', msgs.join(', ')) : cond('Ready', true);
}

export interface ConditionsInput {
  pod: V1Pod;
  /** Init and app container statuses together. */
  statuses: readonly V1ContainerStatus[];
  phase: PodPhase;
  sandboxReady: boolean;
  /** The conditions of the previous status (for lastTransitionTime only). */
  previous: readonly V1PodCondition[];
  now: Date;
}

/** Owned conditions generated; the others copied from the API pod (see the module comment). */
export function generateConditions(input: ConditionsInput): V1PodCondition[] {
  const { pod, statuses, phase, previous } = input;
  const foreign = (pod.status?.conditions ?? []).filter((c) => !podConditionByKubelet(c.type));
  const containersReady = containersReadyCondition(pod, statuses, phase);
  const generated: Cond[] = [
    cond('PodReadyToStartContainers', input.sandboxReady),
    initializedCondition(pod, statuses, phase),
    readyCondition(pod, containersReady, foreign),
    containersReady,
    cond('PodScheduled', true),
  ];
  return [
    ...foreign,
    ...generated.map((c) => {
      const old = previous.find((p) => p.type === c.type);
      const carried = old && old.status === c.status ? toDate(old.lastTransitionTime as Date | string | undefined) : undefined;
      return { ...c, lastTransitionTime: carried ?? input.now };
    }),
  ];
}
