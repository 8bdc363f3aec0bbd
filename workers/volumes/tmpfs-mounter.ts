/**
 * tmpfs mounts for memory-backed volumes (emptyDir `medium: Memory`, secret and projected
 * volumes: secrets never touch a disk), behind a small seam so the volume code can be tested
 * without root.
 *
 * The real implementation runs `mount -t tmpfs` / `umount` (util-linux; Node has no mount(2))
 * and reads /proc/self/mountinfo to find mount points, so it also sees mounts a previous agent
 * made (an agent restart adopts them instead of mounting twice).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';

export interface TmpfsMounter {
  /** Whether `dir` (absolute, resolved) is a mount point. */
  isMountPoint(dir: string): Promise<boolean>;
  /** Mount a tmpfs on `dir` (mode 0755 for the root), `sizeBytes` bounding it when given. */
  mount(dir: string, sizeBytes?: number): Promise<void>;
  /** Unmount `dir`. */
  unmount(dir: string): Promise<void>;
  /** Mount points strictly below `dir`, deepest first (for teardown). */
  mountsUnder(dir: string): Promise<string[]>;
}

/** Bound on how long one mount/umount may take (a hung NFS elsewhere must not wedge the worker). */
const MOUNT_TIMEOUT_MS = 10_000;

function run(cmd: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: MOUNT_TIMEOUT_MS, maxBuffer: 64 * 1024 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${String(stderr).trim().slice(0, 500) || err.message}`));
      else resolve();
    });
  });
}

/** mountinfo's octal escapes (`\040` for a space) decoded. */
function unescapeMountPath(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
}

async function mountPoints(): Promise<string[]> {
  const text = await fs.readFile('/proc/self/mountinfo', 'utf8');
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const mp = line.split(' ')[4];
    if (mp !== undefined) out.push(unescapeMountPath(mp));
  }
  return out;
}

export const systemTmpfsMounter: TmpfsMounter = Object.freeze({
  async isMountPoint(dir: string): Promise<boolean> {
    return (await mountPoints()).includes(dir);
  },
  async mount(dir: string, sizeBytes?: number): Promise<void> {
    const opts = ['mode=0755', ...(sizeBytes !== undefined && sizeBytes > 0 ? [`size=${Math.ceil(sizeBytes)}`] : [])].join(',');
    await run('mount', ['-t', 'tmpfs', '-o', opts, 'tmpfs', dir]);
  },
  async unmount(dir: string): Promise<void> {
    await run('umount', [dir]);
  },
  async mountsUnder(dir: string): Promise<string[]> {
    const prefix = dir.endsWith('/') ? dir : `${dir}/`;
    return (await mountPoints()).filter((m) => m.startsWith(prefix)).sort((a, b) => b.length - a.length);
  },
});
