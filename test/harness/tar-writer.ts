/**
 * A minimal, deterministic POSIX ustar writer: regular files, directories and symlinks, all owned
 * by 0:0 with a fixed mtime, so the same inputs always give byte-identical archives (and so the
 * same OCI digests). Enough for OCI image layers and image-layout tars; nothing more.
 *
 * Limits (checked, thrown as TarWriterError): names up to 100 bytes (no prefix field use), link
 * targets up to 100 bytes, sizes below 8 GiB.
 */

export type TarEntry =
  | { readonly type: 'file'; readonly name: string; readonly data: Buffer; readonly mode?: number }
  | { readonly type: 'dir'; readonly name: string; readonly mode?: number }
  | { readonly type: 'symlink'; readonly name: string; readonly target: string };

export class TarWriterError extends Error {
  override readonly name = 'TarWriterError';
  readonly code = 'ERR_TAR_ENTRY';
}

const BLOCK = 512;
/** 2020-01-01T00:00:00Z: a fixed mtime keeps archives reproducible. */
const FIXED_MTIME = 1_577_836_800;

function writeString(buf: Buffer, offset: number, length: number, value: string, field: string): void {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length > length) throw new TarWriterError(`tar ${field} too long (${bytes.length} > ${length}): ${value}`);
  bytes.copy(buf, offset);
}

/** Octal, zero-padded to `length - 1` digits, NUL-terminated. */
function writeOctal(buf: Buffer, offset: number, length: number, value: number): void {
  const s = value.toString(8).padStart(length - 1, '0');
  if (s.length > length - 1) throw new TarWriterError(`tar numeric field overflow: ${value}`);
  buf.write(s + '\0', offset, length, 'ascii');
}

function header(entry: TarEntry, size: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  const name = entry.type === 'dir' && !entry.name.endsWith('/') ? entry.name + '/' : entry.name;
  writeString(h, 0, 100, name, 'name');
  const mode = entry.type === 'symlink' ? 0o777 : (entry.mode ?? (entry.type === 'dir' ? 0o755 : 0o644));
  writeOctal(h, 100, 8, mode);
  writeOctal(h, 108, 8, 0); // uid
  writeOctal(h, 116, 8, 0); // gid
  writeOctal(h, 124, 12, size);
  writeOctal(h, 136, 12, FIXED_MTIME);
  h.fill(0x20, 148, 156); // checksum field counts as spaces while summing
  h.write(entry.type === 'file' ? '0' : entry.type === 'dir' ? '5' : '2', 156, 1, 'ascii');
  if (entry.type === 'symlink') writeString(h, 157, 100, entry.target, 'linkname');
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  writeString(h, 265, 32, 'root', 'uname');
  writeString(h, 297, 32, 'root', 'gname');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii');
  return h;
}

/** Serialises `entries` in order into one tar archive (with the two zero end blocks). */
export function writeTar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const size = e.type === 'file' ? e.data.length : 0;
    parts.push(header(e, size));
    if (e.type === 'file') {
      parts.push(e.data);
      const pad = (BLOCK - (size % BLOCK)) % BLOCK;
      if (pad > 0) parts.push(Buffer.alloc(pad));
    }
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}
