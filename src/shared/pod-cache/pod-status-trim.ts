/**
 * Making an oversize pod status fit its cache slot without changing any decision made from it.
 *
 * What readers use of a RuntimePodStatus (lists are newest first):
 *   - per container name, the newest instance (state, restart count, hash) and the one before it
 *     (the API status's lastState) — container-statuses.ts, compute-pod-actions.ts;
 *   - every container not yet exited (a running or created one must be killed, never forgotten);
 *   - sandboxes[0] (the current sandbox) and every sandbox still ready (extra ready sandboxes are
 *     killed, so they must stay visible).
 * Older exited instances are history: the kubelet's container GC keeps one dead instance per
 * container (MaxPerPodContainer = 1) and removes the rest, so a kubelet never sees more either.
 *
 * The steps, each tried only when the previous result still does not fit:
 *   1. drop exited containers beyond the newest two instances per name;
 *   2. also drop sandboxes that are neither sandboxes[0], ready, nor a kept container's sandbox;
 *   3. also drop the second instance per name when exited (lastState goes, the state stays).
 *   4. also cut every container message longer than a cap, the largest cap that fits (found by
 *      bisection). Messages are only shown (the termination message a container wrote, up to
 *      4 KiB each: workers/runtime-status/termination-message.ts), never decided on, so a
 *      container cannot make its pod's status unstorable by writing a long message.
 * A status that does not fit after step 4 is reported as not fitting (the cache stores an
 * ERR_CACHE_ENTRY_TOO_LARGE error entry then). Pure; the input is never modified.
 */
import type { RuntimeContainerStatus, RuntimePodStatus } from './runtime-pod-status.js';
import { truncateUtf8 } from '../text/utf8-bytes.js';

/** Newest-first candidates, each smaller than the one before; the last is the most trimmed. */
export function trimmedCandidates(status: RuntimePodStatus): RuntimePodStatus[] {
  const two = keepPerName(status.containers, 2);
  const step1: RuntimePodStatus = { ...status, containers: two };
  const step2: RuntimePodStatus = { ...step1, sandboxes: keptSandboxes(status, two) };
  const one = keepPerName(status.containers, 1);
  const step3: RuntimePodStatus = { ...status, containers: one, sandboxes: keptSandboxes(status, one) };
  return [step1, step2, step3];
}

/**
 * The first candidate whose encoding fits `fits`, with its encoding; undefined when even the most
 * trimmed one does not. `encode` is the cache's encoder (called at most three times, plus about log2(longest message) times when messages must be cut).
 */
export function trimToFit<T extends { length: number }>(
  status: RuntimePodStatus,
  encode: (s: RuntimePodStatus) => T,
  maxBytes: number,
): { status: RuntimePodStatus; encoded: T } | undefined {
  let previous: RuntimePodStatus = status; // the caller found this one too large
  for (const candidate of trimmedCandidates(status)) {
    // Each candidate is a subset of the one before: equal lengths mean this step removed nothing.
    if (candidate.containers.length === previous.containers.length && candidate.sandboxes.length === previous.sandboxes.length) continue;
    previous = candidate;
    const encoded = encode(candidate);
    if (encoded.length <= maxBytes) return { status: candidate, encoded };
  }
  return cutMessagesToFit(previous, encode, maxBytes);
}

/** Step 4: `status` with every message cut to the largest cap (bytes) whose encoding fits. */
function cutMessagesToFit<T extends { length: number }>(
  status: RuntimePodStatus,
  encode: (s: RuntimePodStatus) => T,
  maxBytes: number,
): { status: RuntimePodStatus; encoded: T } | undefined {
  const withCap = (cap: number): RuntimePodStatus => ({
    ...status,
    containers: status.containers.map((c) => (Buffer.byteLength(c.message) > cap ? { ...c, message: truncateUtf8(c.message, cap) } : c)),
  });
  const longest = Math.max(0, ...status.containers.map((c) => Buffer.byteLength(c.message)));
  if (longest === 0 || encode(withCap(0)).length > maxBytes) return undefined;
  // Invariant: cap `lo` fits, `hi` does not (the uncut status did not).
  let lo = 0;
  let hi = longest;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (encode(withCap(mid)).length <= maxBytes) lo = mid;
    else hi = mid;
  }
  // Encoded last: the encoder may reuse its buffer, so an earlier encoding is not kept.
  const best = withCap(lo);
  return { status: best, encoded: encode(best) };
}

/** Every non-exited container, plus the newest `perName` instances of each name (order kept). */
function keepPerName(containers: readonly RuntimeContainerStatus[], perName: number): RuntimeContainerStatus[] {
  const seen = new Map<string, number>();
  const out: RuntimeContainerStatus[] = [];
  for (const c of containers) {
    const n = seen.get(c.name) ?? 0;
    seen.set(c.name, n + 1);
    if (n < perName || c.state !== 'CONTAINER_EXITED') out.push(c);
  }
  return out;
}

function keptSandboxes(status: RuntimePodStatus, containers: readonly RuntimeContainerStatus[]): RuntimePodStatus['sandboxes'] {
  const used = new Set(containers.map((c) => c.podSandboxId));
  return status.sandboxes.filter((s, i) => i === 0 || s.state === 'SANDBOX_READY' || used.has(s.id));
}
