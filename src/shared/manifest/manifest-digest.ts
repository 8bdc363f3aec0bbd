/**
 * A digest of manifest text, to tell unchanged text without keeping it. The sources never decode
 * the same bytes twice in a row: they compare this digest with the last one decoded.
 */
import { createHash } from 'node:crypto';

export function manifestDigest(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}
