/**
 * Which pod goes to which shard: a pod UID hashes (FNV-1a, 32 bit, over its UTF-8 bytes:
 * shared/hash/fnv1a.ts) onto one of N shards; each shard is served by one pod-worker thread at a
 * time (pool-dispatcher.ts binds them).
 * Invariant: the same UID always maps to the same shard, so per-pod ordering lives in exactly
 * one thread at a time.
 */
import { fnv1a32 } from '../../shared/hash/fnv1a.js';

export function shardOf(uid: string, shards: number): number {
  return fnv1a32(uid) % shards;
}
