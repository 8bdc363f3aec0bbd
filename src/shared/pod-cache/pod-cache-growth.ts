/**
 * Growing the pod cache ("Growth" in pod-cache-layout.ts): when a pod needs a slot and FREE is
 * empty, the holder of ALLOC_LOCK grows the SharedArrayBuffer and CAPACITY (doubling, by at
 * least 16) up to MAX_CAPACITY. The capacity follows the runtime, not --max-pods.
 */
import { H, bytesForCapacity } from './pod-cache-layout.js';
import type { PodCacheView } from './pod-cache-view.js';

/**
 * Under ALLOC_LOCK with FREE empty: grow, push the new slots on FREE, then store CAPACITY and
 * FREE_TOP (in that order: other threads learn of a new slot only through an index bucket
 * published after the CAPACITY store). Returns the new FREE_TOP: 0 when it cannot grow (at the
 * maximum, or the OS refused the pages).
 */
export function growLocked(v: PodCacheView): number {
  const cap = v.refresh();
  const max = v.layout.maxCapacity;
  if (cap >= max) return 0;
  const next = Math.min(max, Math.max(cap * 2, cap + 16));
  const need = bytesForCapacity(v.layout, next);
  if (v.buffer.byteLength < need) {
    try {
      (v.buffer as unknown as { grow(n: number): void }).grow(need);
    } catch {
      return 0;
    }
  }
  const free = v.layout.freeByte / 4;
  // Pop order cap, cap+1, …: slot next-1 at the bottom (the new memory is zero: free slots).
  const added = next - cap;
  for (let k = 0; k < added; k++) v.i32[free + k] = next - 1 - k;
  Atomics.store(v.i32, H.CAPACITY, next);
  Atomics.store(v.i32, H.FREE_TOP, added);
  Atomics.add(v.i32, H.GROW_TOTAL, 1);
  v.refresh();
  return added;
}
