/**
 * The simulated runtime's view of a container's CRI mounts: what runc would check when the
 * container starts, and the host file behind a path inside the container (for ExecSync `cat`),
 * so tests read what a container on containerd would read.
 *
 * - CreateContainer: a bind source that does not exist is created as a directory (0755), as
 *   containerd 1.6's CRI plugin does (WithMounts: stat, then MkdirAll; checked on this machine:
 *   a container with a missing source is created and starts, the directory now exists). A
 *   source that cannot be created fails CreateContainer with containerd's "failed to mkdir".
 * - StartContainer: every bind source must still exist; one removed after CreateContainer fails
 *   the start with runc's mount error (containerd reports it as a StartError).
 * - Path resolution: the mount with the longest containerPath that is a prefix (by path
 *   component) of the path wins, as with stacked bind mounts; symlinks inside the source are
 *   followed on the host (configMap `..data` links are relative, so they resolve the same).
 *   A path under no mount does not exist (the simulated image has no files).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Mount } from '../shared/cri/cri-types.js';

/** containerd's WithMounts: creates missing sources; the failure message, or undefined. */
export function createMissingSources(containerId: string, mounts: readonly Mount[]): string | undefined {
  for (const m of mounts) {
    if (m.hostPath === '' || fs.existsSync(m.hostPath)) continue;
    try {
      fs.mkdirSync(m.hostPath, { recursive: true, mode: 0o755 });
    } catch (err) {
      return `failed to generate container "${containerId}" spec: failed to generate spec: failed to mkdir "${m.hostPath}": ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  return undefined;
}

/** runc's message for the first mount whose source is missing, or undefined. */
export function checkMountSources(mounts: readonly Mount[]): string | undefined {
  for (const m of mounts) {
    if (m.hostPath === '' || !fs.existsSync(m.hostPath)) {
      return `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error mounting "${m.hostPath}" to rootfs at "${m.containerPath}": stat ${m.hostPath}: no such file or directory: unknown`;
    }
  }
  return undefined;
}

/** The host path behind `containerPath`, or undefined when no mount covers it. */
export function hostPathOf(mounts: readonly Mount[], containerPath: string): string | undefined {
  const p = path.posix.normalize(containerPath);
  let best: Mount | undefined;
  for (const m of mounts) {
    const mp = path.posix.normalize(m.containerPath).replace(/\/+$/, '') || '/';
    const covers = p === mp || p.startsWith(mp === '/' ? '/' : `${mp}/`);
    if (covers && (!best || mp.length > best.containerPath.length)) best = { ...m, containerPath: mp };
  }
  if (!best) return undefined;
  const rest = p.slice(best.containerPath.length).replace(/^\/+/, '');
  return rest === '' ? best.hostPath : path.join(best.hostPath, rest);
}

/** Bound on what one simulated `cat` reads (ExecSync output is capped at 16 MiB anyway). */
const MAX_CAT_BYTES = 16 * 1024 * 1024;

/**
 * busybox `cat FILE...` inside the container: the files' bytes on stdout, or busybox's message
 * on stderr and exit 1 for a file that does not exist (or is a directory).
 */
export function simCat(mounts: readonly Mount[], files: readonly string[], virtual?: (path: string) => string | undefined): { stdout: Buffer; stderr: Buffer; exitCode: number } {
  const out: Buffer[] = [];
  let err = '';
  let code = 0;
  for (const f of files) {
    // Files no mount provides (e.g. /proc/self/cgroup, sim-cgroup.ts), when the caller has them.
    const text = virtual?.(f);
    if (text !== undefined) {
      out.push(Buffer.from(text));
      continue;
    }
    const host = f.startsWith('/') ? hostPathOf(mounts, f) : undefined;
    try {
      if (host === undefined) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      const st = fs.statSync(host);
      if (st.isDirectory()) {
        err += `cat: read error: Is a directory\n`;
        code = 1;
        continue;
      }
      const fd = fs.openSync(host, 'r');
      try {
        const buf = Buffer.alloc(Math.min(st.size, MAX_CAT_BYTES));
        const n = fs.readSync(fd, buf, 0, buf.length, 0);
        out.push(buf.subarray(0, n));
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      err += `cat: can't open '${f}': No such file or directory\n`;
      code = 1;
    }
  }
  return { stdout: Buffer.concat(out), stderr: Buffer.from(err), exitCode: code };
}

/** The files of a `cat` command line (`cat`, `/bin/cat`, `busybox cat`), or undefined when it is not one. */
export function catArgs(cmd: readonly string[]): string[] | undefined {
  const base = (s: string | undefined): string => (s === undefined ? '' : s.slice(s.lastIndexOf('/') + 1));
  if (base(cmd[0]) === 'cat' && cmd.length > 1) return cmd.slice(1);
  if (base(cmd[0]) === 'busybox' && cmd[1] === 'cat' && cmd.length > 2) return cmd.slice(2);
  return undefined;
}
