/**
 * Removing a container's log files when the container is removed, as the kubelet's
 * removeContainerLog → ContainerLogManager.Clean does (`os.Remove` of every `<logPath>*`): the
 * live file and what log rotation left beside it (`<logPath>.<timestamp>`, `.gz`, `.tmp`).
 * containerd never removes them; without this a crash-looping container leaves one file per
 * restart until its pod goes.
 *
 * Only names equal to the log file's or extending it with '.' are removed (the kubelet's glob
 * would also take `0.log1`; no layout writes such a name), only in the log file's own directory,
 * and only plain files (lstat: never a directory, never through a symlink). A missing file or
 * directory is not an error. The caller derives `logPath` from trusted parts (pod-log-paths.ts).
 */
import fsp from 'node:fs/promises';
import path from 'node:path';

/** Removes the files; returns how many were removed. Rejects on the first error other than ENOENT. */
export async function removeContainerLogFiles(logPath: string): Promise<number> {
  const dir = path.dirname(logPath);
  const base = path.basename(logPath);
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  let removed = 0;
  for (const n of names) {
    if (n !== base && !n.startsWith(`${base}.`)) continue;
    const full = path.join(dir, n);
    try {
      const st = await fsp.lstat(full);
      if (!st.isFile()) continue;
      await fsp.unlink(full);
      removed++;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return removed;
}
