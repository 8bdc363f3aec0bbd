/**
 * The tar the simulated `tar` built-in reads and writes (what `kubectl cp` pipes through
 * `tar -xmf -` and `tar cf - PATH`): POSIX ustar with the prefix field, PAX extended headers
 * (`path`, `size`) and GNU long names ('L') on reading; ustar, or a PAX `path` record for names
 * past 255 bytes, on writing. Regular files and directories are kept; other entry types
 * (links, devices) are skipped with their data.
 *
 * The reader is incremental (`push` chunks, entries come out as they complete) and bounded:
 * an entry larger than `maxEntryBytes`, a PAX/long-name record over 64 KiB, a size field that is
 * not octal, or a header whose checksum is wrong is a TarError, and nothing past it is read.
 */
export class TarError extends Error {
  readonly code = 'ERR_SIM_TAR';
}

export type TarEntry =
  | { readonly type: 'file'; readonly name: string; readonly mode: number; readonly mtimeSec: number; readonly data: Buffer }
  | { readonly type: 'dir'; readonly name: string; readonly mode: number; readonly mtimeSec: number };

const BLOCK = 512;
const MAX_META_BYTES = 64 * 1024;

function cstr(b: Buffer, off: number, len: number): string {
  const s = b.subarray(off, off + len);
  const z = s.indexOf(0);
  return s.subarray(0, z === -1 ? len : z).toString('utf8');
}

function octal(b: Buffer, off: number, len: number, field: string): number {
  const f = b.subarray(off, off + len);
  if ((f[0]! & 0x80) !== 0) throw new TarError(`tar: base-256 ${field} is not supported`);
  const s = cstr(b, off, len).trim();
  if (s === '') return 0;
  if (!/^[0-7]+$/.test(s)) throw new TarError(`tar: invalid ${field} field ${JSON.stringify(s)}`);
  return parseInt(s, 8);
}

function checksumOk(h: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
  return sum === octal(h, 148, 8, 'checksum');
}

/** PAX records "LEN key=value\n". */
function parsePax(data: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  let o = 0;
  while (o < data.length) {
    const sp = data.indexOf(0x20, o);
    if (sp === -1) throw new TarError('tar: malformed PAX record');
    const len = Number(data.toString('latin1', o, sp));
    if (!Number.isInteger(len) || len <= sp - o || o + len > data.length) throw new TarError('tar: malformed PAX record length');
    const rec = data.toString('utf8', sp + 1, o + len - 1);
    const eq = rec.indexOf('=');
    if (eq > 0) out.set(rec.slice(0, eq), rec.slice(eq + 1));
    o += len;
  }
  return out;
}

type State =
  | { kind: 'header' }
  | { kind: 'data'; type: string; name: string; mode: number; mtimeSec: number; size: number; got: Buffer[]; gotBytes: number; keep: boolean }
  | { kind: 'end' };

export class TarReader {
  readonly #maxEntryBytes: number;
  #buf: Buffer = Buffer.alloc(0);
  #state: State = { kind: 'header' };
  #zeroBlocks = 0;
  #pax: Map<string, string> | undefined;
  #longName: string | undefined;

  constructor(opts: { maxEntryBytes: number }) {
    this.#maxEntryBytes = opts.maxEntryBytes;
  }

  /** True once the end-of-archive blocks were read. */
  get ended(): boolean {
    return this.#state.kind === 'end';
  }

  /** Feeds bytes; returns the entries completed by them. Throws TarError. */
  push(chunk: Buffer): TarEntry[] {
    const out: TarEntry[] = [];
    if (this.#state.kind === 'end') return out;
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    for (;;) {
      const st: State = this.#state;
      if (st.kind === 'end') {
        this.#buf = Buffer.alloc(0);
        return out;
      }
      if (st.kind === 'header') {
        if (this.#buf.length < BLOCK) return out;
        const h = this.#buf.subarray(0, BLOCK);
        this.#buf = this.#buf.subarray(BLOCK);
        if (h.every((x) => x === 0)) {
          if (++this.#zeroBlocks === 2) this.#state = { kind: 'end' };
          continue;
        }
        this.#zeroBlocks = 0;
        if (!checksumOk(h)) throw new TarError('tar: invalid tar header checksum');
        const type = String.fromCharCode(h[156]!) === '\0' ? '0' : String.fromCharCode(h[156]!);
        const magic = cstr(h, 257, 6);
        const prefix = magic.startsWith('ustar') ? cstr(h, 345, 155) : '';
        let name = prefix !== '' ? `${prefix}/${cstr(h, 0, 100)}` : cstr(h, 0, 100);
        let size = octal(h, 124, 12, 'size');
        if (this.#longName !== undefined) name = this.#longName;
        const pax = this.#pax;
        if (pax?.has('path')) name = pax.get('path')!;
        if (pax?.has('size')) size = Number(pax.get('size'));
        if (type !== 'x' && type !== 'g' && type !== 'L') {
          this.#pax = undefined;
          this.#longName = undefined;
        }
        const meta = type === 'x' || type === 'g' || type === 'L';
        if (!Number.isSafeInteger(size) || size < 0) throw new TarError('tar: invalid size');
        if (size > (meta ? MAX_META_BYTES : this.#maxEntryBytes)) throw new TarError(`tar: entry ${JSON.stringify(name)} of ${size} bytes exceeds the limit`);
        const keep = meta || type === '0' || type === '7';
        if (type === '5') {
          out.push({ type: 'dir', name, mode: octal(h, 100, 8, 'mode'), mtimeSec: octal(h, 136, 12, 'mtime') });
          if (size === 0) continue;
        }
        this.#state = { kind: 'data', type, name, mode: octal(h, 100, 8, 'mode'), mtimeSec: octal(h, 136, 12, 'mtime'), size, got: [], gotBytes: 0, keep };
        if (size === 0) this.#finish(out);
        continue;
      }
      // data
      const padded = Math.ceil(st.size / BLOCK) * BLOCK;
      const need = padded - st.gotBytes;
      const take = Math.min(need, this.#buf.length);
      if (take === 0) return out;
      if (st.keep) {
        const dataLeft = Math.max(0, st.size - st.gotBytes);
        if (dataLeft > 0) st.got.push(Buffer.from(this.#buf.subarray(0, Math.min(take, dataLeft))));
      }
      st.gotBytes += take;
      this.#buf = this.#buf.subarray(take);
      if (st.gotBytes === padded) this.#finish(out);
    }
  }

  #finish(out: TarEntry[]): void {
    const st = this.#state;
    if (st.kind !== 'data') return;
    this.#state = { kind: 'header' };
    const data = Buffer.concat(st.got);
    if (st.type === 'x') this.#pax = parsePax(data);
    else if (st.type === 'L') this.#longName = cstr(data, 0, data.length);
    else if (st.type === '0' || st.type === '7') out.push({ type: 'file', name: st.name, mode: st.mode, mtimeSec: st.mtimeSec, data });
  }
}

function header(name: string, type: '0' | '5' | 'x', size: number, mode: number, mtimeSec: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  const nb = Buffer.from(name, 'utf8');
  if (nb.length <= 100) nb.copy(h, 0);
  else {
    // Split into prefix/name at a '/' (the caller guarantees it fits, or used a PAX record).
    const cut = name.lastIndexOf('/', 155);
    Buffer.from(name.slice(cut + 1)).copy(h, 0);
    Buffer.from(name.slice(0, cut)).copy(h, 345);
  }
  h.write((mode & 0o7777).toString(8).padStart(7, '0') + '\0', 100, 'ascii');
  h.write('0000000\0', 108, 'ascii');
  h.write('0000000\0', 116, 'ascii');
  h.write(size.toString(8).padStart(11, '0') + '\0', 124, 'ascii');
  h.write(Math.max(0, Math.floor(mtimeSec)).toString(8).padStart(11, '0') + '\0', 136, 'ascii');
  h.write(type, 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const x of h) sum += x;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'ascii');
  return h;
}

function fitsUstar(name: string): boolean {
  const b = Buffer.byteLength(name);
  if (b <= 100) return true;
  const cut = name.lastIndexOf('/', 155);
  return cut > 0 && Buffer.byteLength(name.slice(cut + 1)) <= 100 && Buffer.byteLength(name.slice(0, cut)) <= 155;
}

function pad(n: number): Buffer {
  const r = n % BLOCK;
  return Buffer.alloc(r === 0 ? 0 : BLOCK - r);
}

/** A whole archive of `entries`, with the two end blocks. */
export function writeTar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const name = e.type === 'dir' && !e.name.endsWith('/') ? `${e.name}/` : e.name;
    let headerName = name;
    if (!fitsUstar(name)) {
      const rec = (len: number): string => `${len} path=${name}\n`;
      let len = Buffer.byteLength(rec(0));
      while (Buffer.byteLength(rec(len)) !== len) len = Buffer.byteLength(rec(len));
      const pax = Buffer.from(rec(len));
      parts.push(header('PaxHeader', 'x', pax.length, 0o644, e.mtimeSec), pax, pad(pax.length));
      headerName = name.slice(-100).replace(/^[^/]*\//, '');
    }
    if (e.type === 'dir') parts.push(header(headerName, '5', 0, e.mode, e.mtimeSec));
    else parts.push(header(headerName, '0', e.data.length, e.mode, e.mtimeSec), e.data, pad(e.data.length));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}
