/** Byte-bounded text: cuts that never split a UTF-8 sequence. */

/** `s` cut to at most `maxBytes` UTF-8 bytes, on a character boundary. */
export function truncateUtf8(s: string, maxBytes: number): string {
  if (s.length * 3 <= maxBytes) return s;
  const buf = Buffer.from(s);
  if (buf.length <= maxBytes) return s;
  let end = Math.max(0, maxBytes);
  // Back off continuation bytes (10xxxxxx) so the cut falls before a character's first byte.
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString();
}
