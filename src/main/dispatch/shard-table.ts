/**
 * Which pod goes to which shard: a pod UID hashes (FNV-1a, 32 bit) onto one of N shards; each
 * shard is served by one pod-worker thread at a time (pool-dispatcher.ts binds them).
 * Invariant: the same UID always maps to the same shard, so per-pod ordering lives in exactly
 * one thread at a time.
 */
export function shardOf(uid: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < uid.length; i++) {
    h ^= uid.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}
