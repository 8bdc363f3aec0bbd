/**
 * Typed errors of the pod cache. Callers test `code`, never messages. Cache errors are
 * programming or sizing errors (a full cache, a bad buffer) except ERR_CACHE_ENTRY_TOO_LARGE,
 * which is stored as data next to an empty status (see SetOutcome 'oversize').
 */
export type CacheErrorCode =
  /** Every slot holds a pod; size the cache from --max-pods with headroom. */
  | 'ERR_CACHE_FULL'
  /** A pod status does not fit in bytesPerSlot (stored as the entry's error, not thrown). */
  | 'ERR_CACHE_ENTRY_TOO_LARGE'
  /** Empty, or longer than 64 UTF-8 bytes. */
  | 'ERR_CACHE_INVALID_UID'
  | 'ERR_CACHE_INVALID_TIMESTAMP'
  | 'ERR_CACHE_INVALID_OPTION'
  /** attachPodCache got a buffer that is not a pod cache of this layout version. */
  | 'ERR_CACHE_BAD_BUFFER'
  /** A slot or lock stayed locked for seconds: a writer thread died inside its critical section. */
  | 'ERR_CACHE_LOCK_STUCK'
  /** Stored as an entry's error: the thread writing it died mid-write (see recoverThread). */
  | 'ERR_CACHE_WRITER_DIED'
  /** A stored payload failed to decode although its sequence word was stable (a bug). */
  | 'ERR_CACHE_CORRUPT';

export class CacheError extends Error {
  override readonly name = 'CacheError';
  readonly code: CacheErrorCode;

  constructor(code: CacheErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
