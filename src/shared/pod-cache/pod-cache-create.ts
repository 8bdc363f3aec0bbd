/**
 * Construction of the shared pod cache. The main thread creates it (sized from --max-pods with
 * headroom, growable far beyond: pod-cache-layout.ts "Growth") and passes `buffer` to every thread (structured clone shares a SharedArrayBuffer);
 * each thread calls attachPodCache(buffer) once and keeps the reader/writer it gets.
 */
import type { PodCacheReader, PodCacheWriter } from './pod-cache.js';
import { POD_CACHE_DEFAULTS, allocateBuffer, computeLayout, initBuffer, readLayout } from './pod-cache-layout.js';
import { SharedPodCacheReader, type ReaderOptions } from './pod-cache-reader.js';
import { SharedPodCache } from './pod-cache-shared.js';

export interface PodCacheOptions extends ReaderOptions {
  /** Slots at creation. */
  capacity: number;
  /**
   * The most slots it may grow to when every slot holds a pod (default: capacity, no growth).
   * Only address space is reserved for it; memory is committed as it grows.
   */
  maxCapacity?: number;
  /** Encoded status bytes per slot (default 4096); a larger status continues in overflow slots. */
  bytesPerSlot?: number;
  /** Most encoded bytes one pod's entry may span (default 16 MiB); larger ones are trimmed, else ERR_CACHE_ENTRY_TOO_LARGE. */
  maxEntryBytes?: number;
}

export interface AttachedPodCache {
  reader: SharedPodCacheReader & PodCacheReader;
  writer: PodCacheWriter;
  /**
   * For the thread that owns the other threads (main): after a thread's 'exit' event, release
   * and repair every cache lock it held (pod-cache-layout.ts, "A writer that dies"). Returns
   * the number of locks taken over.
   */
  recoverThread(threadId: number): number;
}

export function createPodCache(opts: PodCacheOptions): AttachedPodCache & { buffer: SharedArrayBuffer } {
  const bytesPerSlot = opts.bytesPerSlot ?? POD_CACHE_DEFAULTS.bytesPerSlot;
  const layout = computeLayout(opts.capacity, bytesPerSlot, opts.maxCapacity ?? opts.capacity, opts.maxEntryBytes ?? Math.max(bytesPerSlot, POD_CACHE_DEFAULTS.maxEntryBytes));
  const buffer = allocateBuffer(layout);
  initBuffer(buffer, layout);
  return { buffer, ...attachPodCache(buffer, opts) };
}

export function attachPodCache(buffer: SharedArrayBuffer, opts: ReaderOptions = {}): AttachedPodCache {
  const cache = new SharedPodCache(buffer, readLayout(buffer));
  const writer: PodCacheWriter = {
    set: (uid, status, error, ts) => cache.set(uid, status, error, ts),
    delete: (uid) => cache.delete(uid),
    updateTime: (ts, unstored) => cache.updateTime(ts, unstored),
  };
  return { reader: new SharedPodCacheReader(cache, opts), writer, recoverThread: (threadId) => cache.recoverThread(threadId) };
}
