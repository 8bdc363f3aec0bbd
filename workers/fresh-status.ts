/**
 * Beyond the kubelet: a pod worker publishes its pod's own fresh status into the shared cache
 * right after its CRI calls, so the next sync and the status the main thread reports do not
 * wait for the next relist (README, "Fresh status"). One implementation, used by the thread
 * factory (pod-worker-factory.ts) and by the scenario harness, so tests run the product's.
 *
 * A sync whose calls' answers told the whole new state passes it (`derived`, see
 * kuberuntime/post-sync-status.ts): published without any CRI call.
 *
 * Stamped with cache time (cacheNow: monotonic, never wall-clock) taken before inspecting — the
 * cache's rule that a status was taken at or after its timestamp — and strictly after the end of
 * the work (`afterMs`) so the pod's next sync proceeds on it.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../src/shared/clock/clock.js';
import type { RuntimeService } from '../src/shared/cri/runtime-service.js';
import { cacheNow, type PodCacheReader, type PodCacheWriter } from '../src/shared/pod-cache/pod-cache.js';
import type { StatusRefresher } from './pod-workers.js';
import type { RuntimePodStatus } from '../src/shared/pod-cache/runtime-pod-status.js';
import { getPodStatus } from './runtime-status/get-pod-status.js';
import type { TerminationMessageReader } from './runtime-status/termination-message.js';

export interface FreshStatusDeps {
  runtime: RuntimeService;
  cache: { reader: Pick<PodCacheReader, 'get'>; writer: Pick<PodCacheWriter, 'set'> };
  clock: Pick<Clock, 'monotonic'>;
  /** Reads exited containers' termination messages (runtime-status/termination-message.ts). */
  messages?: TerminationMessageReader;
}

export function freshStatusRefresher(d: FreshStatusDeps): StatusRefresher {
  return async (pod: V1Pod, afterMs: number, signal: AbortSignal, derived?: RuntimePodStatus) => {
    const uid = pod.metadata?.uid ?? '';
    const takenAt = cacheNow(d.clock);
    // A derived status holds as of the sync's last answer, which came before afterMs: it is
    // stamped like a re-read taken then (the PLEG corrects it if the runtime moved on since).
    const status = derived ?? await getPodStatus(d.runtime, uid, pod.metadata?.name ?? '', pod.metadata?.namespace ?? '', signal, d.messages);
    // As the kubelet's PLEG (getPodIPs): once no sandbox is ready the runtime reports no IP;
    // keep the last known IPs so a finished pod still shows its podIP.
    const previous = d.cache.reader.get(uid)?.status;
    if (status.ips.length === 0 && previous && previous.ips.length > 0 && !status.sandboxes.some((s) => s.state === 'SANDBOX_READY')) status.ips = previous.ips;
    const ts = Math.max(takenAt, afterMs + 1);
    const outcome = d.cache.writer.set(uid, status, null, ts);
    return { status, entryTs: outcome === 'stored' ? ts : undefined };
  };
}

/**
 * A mid-sync status (sync-pod.ts `publishProgress`: a sandbox just created, a container just started),
 * stamped now: true as of the answers just received, and older than the post-sync status that
 * follows. Best effort: a full cache or a newer entry leaves the cache as it is (the PLEG then
 * inspects the sandbox as before).
 */
export function publishProgress(writer: Pick<PodCacheWriter, 'set'>, clock: Pick<Clock, 'monotonic'>, status: RuntimePodStatus): void {
  try {
    writer.set(status.uid, status, null, cacheNow(clock));
  } catch {
    // Nothing lost: this entry only spares the PLEG an inspection.
  }
}
