/**
 * The quiet relist (GenericPleg, generic-pleg.ts): when a relist can be skipped as a whole — the
 * steady state of an idle node, every second thousands of pods listed exactly as before. Pure.
 *
 * A relist is quiet when the previous one settled (everything it saw delivered and written,
 * nothing deferred, pending, rechecked or unstored) and since then:
 *   - both lists are item for item the same objects: the CRI client's list memo
 *     (src/shared/cri/cri-list-memo.ts) returns the same object for an item whose bytes did not
 *     change, so identity means the runtime reported exactly the same bytes (a runtime service
 *     without the memo returns new objects and is never quiet);
 *   - no other thread changed a cache entry (a worker's publish, a delete, a recovery: the
 *     cache's ENTRY_WRITES count, PlegCacheSync.foreignWrites) since before that relist's
 *     timestamp, so every entry is as that relist's checks left it;
 *   - no dead-writer recovery happened.
 * Then the full relist would find no events, no pod to build, no entry to check or sweep: its
 * only result is the new global timestamp (and the same runtime counts).
 */
import type { Container, PodSandbox } from '../../src/shared/cri/cri-types.js';
import type { RuntimeCounts } from '../../src/shared/protocol/pleg-protocol.js';

/** One relist's listing and the cache readings taken with it. */
export interface Listing {
  sandboxes: readonly PodSandbox[];
  containers: readonly Container[];
  /** PlegCacheSync.foreignWrites() read before the relist's timestamp; undefined: cannot tell. */
  foreignWrites: number | undefined;
  recoveries: number;
}

/** A settled relist's listing, with what it counted (reported again by quiet relists). */
export type SettledListing = Listing & { counts: RuntimeCounts };

export function isQuiet(now: Listing, last: SettledListing | undefined): last is SettledListing {
  return last !== undefined && now.foreignWrites !== undefined && now.foreignWrites === last.foreignWrites &&
    now.recoveries === last.recoveries && sameItems(now.sandboxes, last.sandboxes) && sameItems(now.containers, last.containers);
}

/** Same length and the same object at every index. */
function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
