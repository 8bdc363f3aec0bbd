/**
 * Pod starts through a v1.20 kubelet's eyes, read from its klog stderr at -v=2, the counterpart of
 * agent-observer.ts's `RunningLog` for shardlet's `pod running` lines.
 *
 * The kubelet logs each PLEG event it syncs a pod for (kubelet.go syncLoopIteration):
 *   `SyncLoop (PLEG): "<pod>_<ns>(<uid>)", event: &pleg.PodLifecycleEvent{ID:"<uid>", Type:"ContainerStarted", Data:"<id>"}`
 * Its generic PLEG reports the sandbox as a container too (pleg/generic.go getContainersFromPods),
 * so a one-container pod has been seen Running by the kubelet at its SECOND distinct
 * ContainerStarted id: sandbox and app container. The bench's pods have one container each.
 * The time is the bench's clock when the line arrived, as for shardlet.
 */
import type { RunningView } from './side-by-side-types.js';

const PLEG_STARTED = /SyncLoop \(PLEG\): .*event: &pleg\.PodLifecycleEvent\{ID:"([^"]+)", Type:"ContainerStarted", Data:"([^"]*)"\}/;

/** The pod UID and started container (or sandbox) id of a PLEG ContainerStarted line, else null. */
export function parsePlegStarted(line: string): { podUID: string; id: string } | null {
  const m = PLEG_STARTED.exec(line);
  return m?.[1] !== undefined && m[2] !== undefined ? { podUID: m[1], id: m[2] } : null;
}

export class KubeletRunningLog implements RunningView {
  readonly #started = new Map<string, Set<string>>();
  readonly #running = new Map<string, { atMs: number }>();
  readonly #now: () => number;
  readonly #idsPerPod: number;
  /** ContainerStarted ids beyond the pod's first `idsPerPod` (a restart). */
  restarts = 0;

  /** `idsPerPod`: sandbox + containers of each pod (2 for the bench's pods). */
  constructor(now: () => number, idsPerPod = 2) {
    this.#now = now;
    this.#idsPerPod = idsPerPod;
  }

  onLine = (line: string): void => {
    const ev = parsePlegStarted(line);
    if (!ev) return;
    let ids = this.#started.get(ev.podUID);
    if (!ids) this.#started.set(ev.podUID, (ids = new Set()));
    if (ids.has(ev.id)) return;
    ids.add(ev.id);
    if (ids.size === this.#idsPerPod) this.#running.set(ev.podUID, { atMs: this.#now() });
    else if (ids.size > this.#idsPerPod) this.restarts++;
  };

  get(uid: string): { atMs: number } | undefined {
    return this.#running.get(uid);
  }

  get size(): number {
    return this.#running.size;
  }
}
