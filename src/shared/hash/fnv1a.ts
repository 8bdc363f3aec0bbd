/**
 * FNV-1a, 32 bits (offset basis 0x811c9dc5, prime 0x01000193): the one copy, used for
 *  - the pod cache's uid index (pod-cache-layout.ts / pod-cache-shared.ts, over the uid bytes
 *    already copied into a scratch buffer: no allocation on the hot path),
 *  - the pod → shard mapping (main/dispatch/shard-table.ts),
 *  - the container spec hash (workers/kuberuntime/container-hash.ts; the kubelet's
 *    kubecontainer.HashContainer is FNV-32a too).
 * Both entry points hash UTF-8 bytes, so a string and its UTF-8 encoding hash the same.
 * Results are unsigned 32-bit integers.
 */

const FNV32_OFFSET = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

/** FNV-1a over `bytes[0..len)` (len defaults to the whole array). */
export function fnv1a32Bytes(bytes: Uint8Array, len: number = bytes.length): number {
  let h = FNV32_OFFSET;
  for (let k = 0; k < len; k++) {
    h ^= bytes[k] ?? 0;
    h = Math.imul(h, FNV32_PRIME);
  }
  return h >>> 0;
}

/**
 * FNV-1a over the UTF-8 bytes of `s`. ASCII strings (every validated pod uid) are hashed
 * straight from their char codes without allocating; others are encoded first (lone
 * surrogates become U+FFFD, as Buffer.from does).
 */
export function fnv1a32(s: string): number {
  let h = FNV32_OFFSET;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return fnv1a32Bytes(Buffer.from(s, 'utf8'));
    h ^= c;
    h = Math.imul(h, FNV32_PRIME);
  }
  return h >>> 0;
}
