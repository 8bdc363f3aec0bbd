/**
 * The Node's conditions as the kubelet's status setters write them (pkg/kubelet/nodestatus/
 * setters.go ReadyCondition, MemoryPressureCondition, DiskPressureCondition, PIDPressureCondition),
 * computed purely from readiness inputs and the previous conditions:
 *
 *   Ready          True  KubeletReady     "kubelet is posting ready status"
 *                  False KubeletNotReady  the runtime, network and node-shutdown errors, aggregated as Go's
 *                                         errors.NewAggregate prints them ("msg", or "[a, b]")
 *   MemoryPressure False KubeletHasSufficientMemory "kubelet has sufficient memory available"
 *   DiskPressure   False KubeletHasNoDiskPressure   "kubelet has no disk pressure"
 *   PIDPressure    False KubeletHasSufficientPID    "kubelet has sufficient PID available"
 *
 *   (True, from the eviction manager's last pass: KubeletHasInsufficientMemory "kubelet has
 *   insufficient memory available", KubeletHasDiskPressure "kubelet has disk pressure",
 *   KubeletHasInsufficientPID "kubelet has insufficient PID available")
 * Invariant: lastTransitionTime changes only when a condition's status changes; lastHeartbeatTime
 * is `now` on every computation (change detection ignores it: see node-status.ts).
 */

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface NodeCondition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastHeartbeatTime: string;
  lastTransitionTime: string;
}

export interface ReadinessInputs {
  /** RuntimeHealth.errors(): runtime down/not ready, failing checks (PLEG). */
  runtimeErrors: readonly string[];
  /** RuntimeHealth.networkErrors(): NetworkReady=false. */
  networkErrors: readonly string[];
  /** The eviction manager's pressure conditions (MemoryPressure, DiskPressure, PIDPressure); absent: none. */
  pressure?: readonly string[];
  /** The graceful node shutdown manager's ShutdownStatus ("node is shutting down"), last as in the kubelet. */
  shutdownErrors?: readonly string[];
}

/** Go's utilerrors.NewAggregate(...).Error(): deduplicated; one message alone, several in brackets. */
export function aggregateMessage(errors: readonly string[]): string {
  const seen = [...new Set(errors)];
  return seen.length === 1 ? seen[0]! : `[${seen.join(', ')}]`;
}

/** API timestamps: RFC 3339 at second precision, as metav1.Time serialises. */
export function apiTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export function readyCondition(inputs: ReadinessInputs): Pick<NodeCondition, 'status' | 'reason' | 'message'> {
  const errs = [...inputs.runtimeErrors, ...inputs.networkErrors, ...(inputs.shutdownErrors ?? [])];
  if (errs.length === 0) return { status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' };
  return { status: 'False', reason: 'KubeletNotReady', message: aggregateMessage(errs) };
}

const PRESSURE: ReadonlyArray<Pick<NodeCondition, 'type' | 'status' | 'reason' | 'message'>> = [
  { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
  { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
  { type: 'PIDPressure', status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
];

const PRESSURE_TRUE: Readonly<Record<string, Pick<NodeCondition, 'status' | 'reason' | 'message'>>> = Object.freeze({
  MemoryPressure: { status: 'True', reason: 'KubeletHasInsufficientMemory', message: 'kubelet has insufficient memory available' },
  DiskPressure: { status: 'True', reason: 'KubeletHasDiskPressure', message: 'kubelet has disk pressure' },
  PIDPressure: { status: 'True', reason: 'KubeletHasInsufficientPID', message: 'kubelet has insufficient PID available' },
});

/** The four conditions, in the kubelet's order (pressure conditions first, Ready last). */
export function nodeConditions(previous: readonly NodeCondition[] | undefined, inputs: ReadinessInputs, nowMs: number): NodeCondition[] {
  const now = apiTime(nowMs);
  const pressure = PRESSURE.map((c) => (inputs.pressure?.includes(c.type) === true ? { ...c, ...PRESSURE_TRUE[c.type] } : c));
  const wanted = [...pressure, { type: 'Ready', ...readyCondition(inputs) }];
  return wanted.map((c) => {
    const prev = previous?.find((p) => p.type === c.type);
    return { ...c, lastHeartbeatTime: now, lastTransitionTime: prev !== undefined && prev.status === c.status ? prev.lastTransitionTime : now };
  });
}
