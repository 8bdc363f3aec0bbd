/** How large the agent makes the shared pod cache for its --max-pods. */
import { POD_CACHE_DEFAULTS } from '../../shared/pod-cache/pod-cache-layout.js';

/** 1 GiB of 4 KiB slots (pod-cache-layout.ts's limit). */
const MAX_CACHE_SLOTS = (1 << 30) / POD_CACHE_DEFAULTS.bytesPerSlot;

/**
 * The pod cache's size for a node admitting `maxPods`: slots for every admitted pod twice over
 * (pods being torn down, orphans found at start), growable 16× (at least 16,384 slots) within
 * the cache's 1 GiB limit: only address space is reserved for the maximum.
 */
export function podCacheSize(maxPods: number): { capacity: number; maxCapacity: number } {
  const capacity = Math.min(Math.max(1024, maxPods * 2 + 64), MAX_CACHE_SLOTS);
  return { capacity, maxCapacity: Math.min(Math.max(capacity * 16, 16_384), MAX_CACHE_SLOTS) };
}
