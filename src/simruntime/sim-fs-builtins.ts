/**
 * The simulated image's file applets over a container's in-memory files (sim-container-files.ts),
 * enough for `kubectl cp`: `tar -xmf - [-C DIR]` (extract stdin), `tar cf - PATH…` (archive to
 * stdout, member names without the leading '/', as busybox), and `test -d|-e|-f PATH` (kubectl
 * asks whether the destination is a directory). Messages and exit codes are busybox's.
 */
import type { Readable } from 'node:stream';
import { resolvePath, type ContainerFs } from './sim-container-files.js';
import { TarError, TarReader, writeTar } from './sim-tar.js';

export type FsResult = { code: number; stdout?: Buffer; stderr?: string };

/** `test` with one unary file operator; undefined when `args` is another form. */
export function simTest(fs: ContainerFs, args: readonly string[]): FsResult | undefined {
  if (args.length !== 2) return undefined;
  const [op, p] = args as [string, string];
  const n = fs.stat(p);
  switch (op) {
    case '-e':
      return { code: n !== undefined ? 0 : 1 };
    case '-d':
      return { code: n?.type === 'dir' ? 0 : 1 };
    case '-f':
      return { code: n?.type === 'file' ? 0 : 1 };
    default:
      return undefined;
  }
}

interface TarArgs {
  mode: 'c' | 'x';
  file: string;
  dir: string;
  paths: string[];
}

/** Parses busybox tar arguments (`-xmf - -C DIR`, `xf -`, `cf - PATH`, `--no-same-*`). */
export function parseTarArgs(args: readonly string[]): TarArgs | string {
  let mode: 'c' | 'x' | undefined;
  let file: string | undefined;
  let dir = '/';
  const paths: string[] = [];
  const rest = [...args];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a.startsWith('--')) {
      if (a === '--no-same-owner' || a === '--no-same-permissions' || a === '--touch') continue;
      return `unrecognized option '${a}'`;
    }
    const bundled = i === 0 && !a.startsWith('-') ? a : a.startsWith('-') && a.length > 1 ? a.slice(1) : undefined;
    if (bundled === undefined) {
      paths.push(a);
      continue;
    }
    for (let j = 0; j < bundled.length; j++) {
      const f = bundled[j]!;
      if (f === 'c' || f === 'x') mode = f;
      else if (f === 'f') {
        file = rest[++i];
        if (file === undefined) return "option requires an argument -- 'f'";
      } else if (f === 'C') {
        const d = rest[++i];
        if (d === undefined) return "option requires an argument -- 'C'";
        dir = d;
      } else if (f === 'm' || f === 'v' || f === 'o' || f === 'p') continue;
      else return `invalid option -- '${f}'`;
    }
  }
  if (mode === undefined) return 'need at least one of -c or -x';
  if (file !== '-') return 'only -f - (stdin/stdout) is simulated';
  return { mode, file, dir, paths };
}

/** `tar c`: the archive of `paths` (relative to -C). */
export function simTarCreate(fs: ContainerFs, t: TarArgs): FsResult {
  if (t.paths.length === 0) return { code: 1, stderr: 'tar: empty archive\n' };
  const entries = [];
  let stderr = '';
  for (const p of t.paths) {
    const abs = resolvePath(t.dir, p);
    const found = fs.walk(abs, (k) => (p.startsWith('/') ? k.slice(1) : k.slice(resolvePath('/', t.dir).length).replace(/^\//, '')));
    if (found.length === 0) {
      stderr += `tar: ${p}: No such file or directory\n`;
      continue;
    }
    entries.push(...found);
  }
  if (stderr !== '' && entries.length === 0) return { code: 1, stderr };
  const code = stderr === '' ? 0 : 1;
  // busybox says this once, and it is not an error.
  if (t.paths.some((p) => p.startsWith('/'))) stderr = `tar: removing leading '/' from member names\n${stderr}`;
  return { code, stdout: writeTar(entries), stderr };
}

/** `tar x` from `stdin` into -C DIR; resolves with the exit. */
export function simTarExtract(fs: ContainerFs, t: TarArgs, stdin: Readable | null, nowSec: number, signal: AbortSignal): Promise<FsResult> {
  const dir = resolvePath('/', t.dir);
  if (fs.stat(dir)?.type !== 'dir') return Promise.resolve({ code: 1, stderr: `tar: can't change directory to '${t.dir}': No such file or directory\n` });
  if (stdin === null) return Promise.resolve({ code: 1, stderr: 'tar: short read\n' });
  const reader = new TarReader({ maxEntryBytes: 64 * 1024 * 1024 });
  return new Promise((resolve) => {
    let done = false;
    const finish = (r: FsResult): void => {
      if (done) return;
      done = true;
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      signal.removeEventListener('abort', onAbort);
      if (r.code !== 0) stdin.resume(); // drain what is left
      resolve(r);
    };
    const onData = (c: Buffer): void => {
      try {
        for (const e of reader.push(c)) {
          const target = resolvePath(dir, e.name);
          const err = e.type === 'dir' ? fs.mkdirp(target, e.mode, e.mtimeSec || nowSec) : fs.writeFile(target, e.data, e.mode, e.mtimeSec || nowSec);
          if (err !== undefined) return finish({ code: 1, stderr: `tar: ${err}\n` });
        }
      } catch (err) {
        if (!(err instanceof TarError)) throw err;
        finish({ code: 1, stderr: `${err.message}\n` });
      }
    };
    const onEnd = (): void => finish({ code: 0 });
    const onAbort = (): void => finish({ code: 137 });
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
