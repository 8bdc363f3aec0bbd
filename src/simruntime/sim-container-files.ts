/**
 * What simulated containers have of a filesystem: files written into them (by `tar -x`, i.e.
 * `kubectl cp` into the pod) and read back (`tar c`, `cat`, `test`), kept in memory per
 * container. The image's own directories (/, /bin, /tmp, …) exist; image files themselves do
 * not (the applets are interpreted, sim-shell.ts). Bounded per container: `maxBytes` of file
 * data and `maxEntries` paths (a write past either fails with ENOSPC). A container that is gone
 * (`live(id)` false) loses its files at the next `of()` call for another container.
 */
import path from 'node:path';
import type { TarEntry } from './sim-tar.js';

export type FsNode = { type: 'file'; data: Buffer; mode: number; mtimeSec: number } | { type: 'dir'; mode: number; mtimeSec: number };

const IMAGE_DIRS = ['/', '/bin', '/dev', '/etc', '/home', '/proc', '/root', '/sys', '/tmp', '/usr', '/usr/bin', '/usr/sbin', '/var', '/var/log'];

export const CONTAINER_FILES_DEFAULTS = Object.freeze({ maxBytes: 64 * 1024 * 1024, maxEntries: 10_000 });

/** Normalizes `p` against `cwd` to an absolute path without `..` above the root. */
export function resolvePath(cwd: string, p: string): string {
  return path.posix.resolve('/', cwd, p);
}

export class ContainerFs {
  readonly #nodes = new Map<string, FsNode>();
  readonly #maxBytes: number;
  readonly #maxEntries: number;
  #bytes = 0;

  constructor(limits: { maxBytes: number; maxEntries: number }, nowSec: number) {
    this.#maxBytes = limits.maxBytes;
    this.#maxEntries = limits.maxEntries;
    for (const d of IMAGE_DIRS) this.#nodes.set(d, { type: 'dir', mode: 0o755, mtimeSec: nowSec });
  }

  stat(p: string): FsNode | undefined {
    return this.#nodes.get(resolvePath('/', p));
  }

  /** Creates `p` (and missing parents) as a directory; an error message on failure. */
  mkdirp(p: string, mode: number, mtimeSec: number): string | undefined {
    const abs = resolvePath('/', p);
    const parts = abs.split('/').filter((x) => x !== '');
    let cur = '';
    for (const part of parts) {
      cur += `/${part}`;
      const n = this.#nodes.get(cur);
      if (n?.type === 'file') return `${cur}: Not a directory`;
      if (n === undefined) {
        if (this.#nodes.size >= this.#maxEntries) return `${cur}: No space left on device`;
        this.#nodes.set(cur, { type: 'dir', mode: cur === abs ? mode : 0o755, mtimeSec });
      }
    }
    return undefined;
  }

  /** Writes a file (creating its parents); an error message on failure. */
  writeFile(p: string, data: Buffer, mode: number, mtimeSec: number): string | undefined {
    const abs = resolvePath('/', p);
    if (abs === '/') return '/: Is a directory';
    const dirErr = this.mkdirp(path.posix.dirname(abs), 0o755, mtimeSec);
    if (dirErr !== undefined) return dirErr;
    const old = this.#nodes.get(abs);
    if (old?.type === 'dir') return `${abs}: Is a directory`;
    const delta = data.length - (old?.type === 'file' ? old.data.length : 0);
    if (this.#bytes + delta > this.#maxBytes || (old === undefined && this.#nodes.size >= this.#maxEntries)) return `${abs}: No space left on device`;
    this.#bytes += delta;
    this.#nodes.set(abs, { type: 'file', data, mode, mtimeSec });
    return undefined;
  }

  /** `p` and everything below it, as tar entries named `nameOf(abs)`, parents first. */
  walk(p: string, nameOf: (abs: string) => string): TarEntry[] {
    const abs = resolvePath('/', p);
    const root = this.#nodes.get(abs);
    if (root === undefined) return [];
    const paths = root.type === 'dir' ? [...this.#nodes.keys()].filter((k) => k === abs || k.startsWith(abs === '/' ? '/' : `${abs}/`)).sort() : [abs];
    return paths.map((k) => {
      const n = this.#nodes.get(k)!;
      return n.type === 'dir' ? { type: 'dir', name: nameOf(k), mode: n.mode, mtimeSec: n.mtimeSec } : { type: 'file', name: nameOf(k), mode: n.mode, mtimeSec: n.mtimeSec, data: n.data };
    });
  }
}

export class SimContainerFiles {
  readonly #byContainer = new Map<string, ContainerFs>();
  readonly #live: (containerId: string) => boolean;
  readonly #limits: { maxBytes: number; maxEntries: number };

  constructor(o: { live: (containerId: string) => boolean; maxBytes?: number; maxEntries?: number }) {
    this.#live = o.live;
    this.#limits = { maxBytes: o.maxBytes ?? CONTAINER_FILES_DEFAULTS.maxBytes, maxEntries: o.maxEntries ?? CONTAINER_FILES_DEFAULTS.maxEntries };
  }

  /** The container's files (created empty on first use). */
  of(containerId: string, nowSec: number): ContainerFs {
    let fs = this.#byContainer.get(containerId);
    if (fs === undefined) {
      for (const id of [...this.#byContainer.keys()]) if (!this.#live(id)) this.#byContainer.delete(id);
      fs = new ContainerFs(this.#limits, nowSec);
      this.#byContainer.set(containerId, fs);
    }
    return fs;
  }

  get containers(): number {
    return this.#byContainer.size;
  }
}
