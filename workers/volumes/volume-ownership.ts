/**
 * fsGroup ownership of a pod volume (the kubelet's SetVolumeOwnership, pkg/volume/volume_linux.go):
 * every file and directory below the volume directory gets group fsGroup (lchown, the owner
 * unchanged) and its mode OR-ed with rw for the group (r only for read-only volumes: configMap,
 * secret, downwardAPI, projected), directories also x and setgid, so files a container creates
 * later inherit the group. Symlinks are chowned, never chmod-ed (a chmod would follow them) nor
 * followed. A file that cannot be changed is skipped, as the kubelet only logs it.
 *
 * fsGroupChangePolicy: the kubelet passes none for these volume types (always recursive), and
 * so does shardlet; OnRootMismatch only changes volume types shardlet does not support.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

const RW_MASK = 0o660;
const RO_MASK = 0o440;
const EXEC_MASK = 0o110;
const SETGID = 0o2000;

/** The pod's fsGroup, when it sets one. */
export function fsGroupOf(pod: { spec?: { securityContext?: { fsGroup?: number } } }): number | undefined {
  const g = pod.spec?.securityContext?.fsGroup;
  return typeof g === 'number' && Number.isInteger(g) && g >= 0 && g <= 2147483647 ? g : undefined;
}

async function changeOne(p: string, st: import('node:fs').Stats, fsGroup: number, readOnly: boolean): Promise<void> {
  await fs.lchown(p, -1, fsGroup).catch(() => undefined);
  if (st.isSymbolicLink()) return;
  let mask = readOnly ? RO_MASK : RW_MASK;
  if (st.isDirectory()) mask |= SETGID | EXEC_MASK;
  await fs.chmod(p, (st.mode & 0o7777) | mask).catch(() => undefined);
}

/** Walks `dir` (not following symlinks) and applies fsGroup; a no-op without one. */
export async function setVolumeOwnership(dir: string, fsGroup: number | undefined, readOnly: boolean): Promise<void> {
  if (fsGroup === undefined) return;
  const walk = async (p: string): Promise<void> => {
    const st = await fs.lstat(p);
    await changeOne(p, st, fsGroup, readOnly);
    if (!st.isDirectory()) return;
    for (const name of await fs.readdir(p)) await walk(path.join(p, name));
  };
  await walk(dir);
}
