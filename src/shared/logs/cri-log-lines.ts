/**
 * The CRI container log format (`<RFC3339Nano> <stdout|stderr> <P|F>[:tags] <text>` lines, as
 * containerd writes them) and a tail search over such a file: shared by the main thread's log
 * streaming (src/main/server/container-logs-reader.ts) and the pod workers' termination-message
 * fallback (workers/runtime-status/termination-message.ts). No state; reads only through the
 * handle it is given.
 */
import type fs from 'node:fs';

/** Block size of the backwards tail search. */
export const TAIL_BLOCK_BYTES = 64 * 1024;

export interface CriLine {
  timestamp: string;
  ms: number;
  partial: boolean;
  content: Buffer;
}

/** Decodes one CRI log line (without its newline); undefined if malformed. */
export function parseCriLine(line: Buffer): CriLine | undefined {
  const s1 = line.indexOf(0x20);
  if (s1 <= 0) return undefined;
  const s2 = line.indexOf(0x20, s1 + 1);
  if (s2 < 0) return undefined;
  const stream = line.subarray(s1 + 1, s2).toString('latin1');
  if (stream !== 'stdout' && stream !== 'stderr') return undefined;
  const tagEnd = line.indexOf(0x20, s2 + 1);
  const tag = line.subarray(s2 + 1, tagEnd < 0 ? line.length : tagEnd).toString('latin1');
  // The tag may carry more fields after ':' (P:… / F:…); the first is partial or full.
  const kind = tag.split(':')[0];
  if (kind !== 'P' && kind !== 'F') return undefined;
  const timestamp = line.subarray(0, s1).toString('latin1');
  const ms = Date.parse(timestamp);
  if (!Number.isFinite(ms)) return undefined;
  const content = tagEnd < 0 ? Buffer.alloc(0) : line.subarray(tagEnd + 1);
  return { timestamp, ms, partial: kind === 'P', content };
}

/** Offset where the last `n` lines of the file start (reading backwards, one block at a time). */
export async function tailStartOffset(fh: fs.promises.FileHandle, size: number, n: number, blockBytes = TAIL_BLOCK_BYTES): Promise<number> {
  if (n === 0) return size;
  const buf = Buffer.allocUnsafe(blockBytes);
  let newlines = 0;
  let end = size;
  // A final newline ends the last line; it does not start another.
  let skipLast = true;
  while (end > 0) {
    const start = Math.max(0, end - blockBytes);
    const len = end - start;
    const { bytesRead } = await fh.read(buf, 0, len, start);
    for (let i = bytesRead - 1; i >= 0; i--) {
      if (buf[i] !== 0x0a) {
        skipLast = false;
        continue;
      }
      if (skipLast) {
        skipLast = false;
        continue;
      }
      newlines++;
      if (newlines === n) return start + i + 1;
    }
    end = start;
  }
  return 0;
}
