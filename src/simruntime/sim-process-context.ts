/**
 * What a simulated process can see of its identity and filesystem, and the busybox applets that
 * depend on it (sim-shell.ts interprets the rest):
 *
 *   id             `uid=0(root) gid=0(root) groups=0(root)`: names from the image's /etc/passwd
 *                  and /etc/group where they have one, groups as getgroups returns them;
 *                  `id -u`, `-g`, `-G` (with `-n`: names);
 *   touch FILE...  creates (or fails: "touch: FILE: Read-only file system" / "Permission denied",
 *                  exit 1);
 *   > FILE         (a shell redirection) the same check, as ash reports it:
 *                  "sh: can't create FILE: Read-only file system", status 1.
 *
 * Writes: a path under a CRI mount goes to the mount's host file (a read-only mount: EROFS; else
 * the host file's mode against the process's uid/gid/groups, root passing with CAP_DAC_OVERRIDE;
 * a new file gets the process's uid, and the directory's group when it is setgid, else the
 * process's gid). Any other path is the image's root filesystem: EROFS when readonly_rootfs;
 * else /tmp (1777) and /dev (tmpfs) are writable by all and the rest by root only (the image's
 * directories are root's, 0755); nothing is kept there (the simulated image has no files).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Mount } from '../shared/cri/cri-types.js';
import { hostPathOf } from './sim-mounts.js';
import { capMaskOf, simSecurityOf, type SimSecurity } from './sim-security.js';
import { imageUserDbOf, type SimImageUserDb } from './sim-image-users.js';

export interface SimProcessContext {
  security: SimSecurity;
  users: SimImageUserDb;
  mounts: readonly Mount[];
}

let defaultContext: SimProcessContext | undefined;

/** Root in a busybox image with containerd's defaults and no mounts (a process without a container). */
export function defaultProcessContext(): SimProcessContext {
  if (!defaultContext) {
    const users = imageUserDbOf('busybox');
    const r = simSecurityOf({ metadata: { name: '', attempt: 0 }, image: { image: 'busybox' } }, users, (1n << 41n) - 1n);
    if (!r.ok) throw new Error(r.message);
    defaultContext = { security: r.security, users, mounts: [] };
  }
  return defaultContext;
}

/** Group names of the simulated images' /etc/group (sim-image-users.ts). */
const GROUP_NAMES = new Map<number, string>([[0, 'root'], [65534, 'nogroup']]);

export type WriteOutcome = 'ok' | 'EROFS' | 'EACCES';
const ERRNO_TEXT: Record<Exclude<WriteOutcome, 'ok'>, string> = { EROFS: 'Read-only file system', EACCES: 'Permission denied' };

const DAC_OVERRIDE = capMaskOf(['DAC_OVERRIDE']);

function mayWrite(sec: SimSecurity, st: fs.Stats): boolean {
  if ((BigInt(`0x${sec.capEff}`) & DAC_OVERRIDE) !== 0n) return true;
  if (st.uid === sec.uid) return (st.mode & 0o200) !== 0;
  if (sec.gid === st.gid || sec.groups.includes(st.gid)) return (st.mode & 0o020) !== 0;
  return (st.mode & 0o002) !== 0;
}

function mountOf(mounts: readonly Mount[], p: string): Mount | undefined {
  let best: Mount | undefined;
  for (const m of mounts) {
    const mp = path.posix.normalize(m.containerPath).replace(/\/+$/, '') || '/';
    if ((p === mp || p.startsWith(mp === '/' ? '/' : `${mp}/`)) && (!best || mp.length > best.containerPath.length)) best = { ...m, containerPath: mp };
  }
  return best;
}

/** Opens `file` for writing (creating it) as the process would; creates it on the mount's host side. */
export function writeFile(ctx: SimProcessContext, file: string): WriteOutcome {
  const p = path.posix.normalize(file.startsWith('/') ? file : `/${file}`);
  const m = mountOf(ctx.mounts, p);
  const sec = ctx.security;
  if (m) {
    if (m.readonly) return 'EROFS';
    const host = hostPathOf(ctx.mounts, p);
    if (host === undefined) return 'EACCES';
    try {
      if (fs.existsSync(host)) return mayWrite(sec, fs.statSync(host)) ? 'ok' : 'EACCES';
      const dir = fs.statSync(path.dirname(host));
      if (!mayWrite(sec, dir)) return 'EACCES';
      fs.closeSync(fs.openSync(host, 'a', 0o644));
      const gid = (dir.mode & 0o2000) !== 0 ? dir.gid : sec.gid;
      try {
        fs.chownSync(host, sec.uid, gid);
      } catch {
        // the runtime may not own the files (an unprivileged test run): the content still exists
      }
      return 'ok';
    } catch {
      return 'EACCES';
    }
  }
  if (sec.readonlyRootfs && !p.startsWith('/dev/')) return 'EROFS';
  if (p.startsWith('/tmp/') || p.startsWith('/dev/')) return 'ok';
  return sec.uid === 0 ? 'ok' : 'EACCES';
}

export interface AppletResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** Applets interpreted here (all exist as /bin/<name> in the image). */
export const CONTEXT_APPLETS: ReadonlySet<string> = new Set(['id', 'touch']);

function idLine(ctx: SimProcessContext): string {
  const sec = ctx.security;
  const user = (u: number): string => {
    const n = ctx.users.byUid(u)?.name;
    return n === undefined ? String(u) : `${u}(${n})`;
  };
  const group = (g: number): string => {
    const n = GROUP_NAMES.get(g);
    return n === undefined ? String(g) : `${g}(${n})`;
  };
  const groups = sec.groups.length > 0 ? ` groups=${sec.groups.map(group).join(',')}` : '';
  return `uid=${user(sec.uid)} gid=${group(sec.gid)}${groups}\n`;
}

/** Runs one of {@link CONTEXT_APPLETS}. */
export function runContextApplet(name: string, args: readonly string[], ctx: SimProcessContext): AppletResult {
  switch (name) {
    case 'id': {
      // -u / -g / -G (numbers), with -n names where the image has them; else the full line.
      const flags = args.join('');
      const sec = ctx.security;
      const names = flags.includes('n');
      const user = (u: number): string => (names ? ctx.users.byUid(u)?.name ?? String(u) : String(u));
      const group = (g: number): string => (names ? GROUP_NAMES.get(g) ?? String(g) : String(g));
      if (flags.includes('u')) return { stdout: `${user(sec.uid)}\n`, stderr: '', code: 0 };
      if (flags.includes('G')) return { stdout: `${sec.groups.map(group).join(' ')}\n`, stderr: '', code: 0 };
      if (flags.includes('g')) return { stdout: `${group(sec.gid)}\n`, stderr: '', code: 0 };
      return { stdout: idLine(ctx), stderr: '', code: 0 };
    }
    case 'touch': {
      const files = args.filter((a) => !a.startsWith('-'));
      if (files.length === 0) return { stdout: '', stderr: 'touch: missing operand\n', code: 1 };
      let stderr = '';
      for (const f of files) {
        const r = writeFile(ctx, f);
        if (r !== 'ok') stderr += `touch: ${f}: ${ERRNO_TEXT[r]}\n`;
      }
      return { stdout: '', stderr, code: stderr === '' ? 0 : 1 };
    }
    default:
      return { stdout: '', stderr: `sh: ${name}: not found\n`, code: 127 };
  }
}

/** ash's message when a `> FILE` redirection cannot be opened, or undefined when it can. */
export function redirectError(ctx: SimProcessContext, file: string): string | undefined {
  const r = writeFile(ctx, file);
  return r === 'ok' ? undefined : `sh: can't create ${file}: ${ERRNO_TEXT[r]}\n`;
}
