/**
 * Protobuf base-128 varints, for the CRI client's wire-level helpers that read or write a few
 * fields without a full decode (cri-list-memo.ts) and the pod cache's
 * entry codec (pod-status-codec.ts, the same encoding). Pure, any thread.
 */

/**
 * Reads a varint at `pos`, not past `end` (default the buffer's end); returns [value, next] or
 * null when malformed (> 32 bits, truncated).
 */
export function readVarint32(buf: Uint8Array, pos: number, end = buf.length): [number, number] | null {
  let value = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    if (pos >= end) return null;
    const b = buf[pos++] as number;
    value += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return value > 0xffffffff ? null : [value, pos];
  }
  return null;
}

/** Appends `value` (0 ≤ value < 2^32) as a varint to `out`. */
export function writeVarint32(out: number[], value: number): void {
  while (value > 0x7f) {
    out.push((value & 0x7f) | 0x80);
    value = Math.floor(value / 128);
  }
  out.push(value);
}
