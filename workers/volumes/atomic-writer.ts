/**
 * The kubelet's AtomicWriter (pkg/volume/util/atomic_writer.go): publishes a set of files into
 * a volume directory so that a container never sees a half-written update.
 *
 * Layout of a target directory:
 *   ..2026_11_23_04_40_21.123456789/   the payload of one version (files with their modes)
 *   ..data -> ..2026_11_23_...          the current version (a relative symlink)
 *   KEY -> ..data/KEY                    one user-visible symlink per top-level payload entry
 *
 * Write protocol (ordering is what makes it atomic):
 *   1. if the current version holds exactly this payload (paths, bytes, modes): nothing to do;
 *   2. write the new version into a fresh `..<timestamp>` directory;
 *   2b. the caller's `beforePublish` (fsGroup ownership of the volume);
 *   3. create `..data_tmp` -> the new directory, then rename it over `..data` (rename(2) is
 *      atomic: readers see the old or the new version, never a mix);
 *   4. create user-visible symlinks for new top-level entries, remove those no longer in the
 *      payload, then remove the old version's directory.
 * Payload paths were checked by {@link checkRelativePath} (relative, no `..`, no `..`-prefix):
 * nothing is written outside the version directory.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../../src/shared/clock/clock.js';
import { checkRelativePath } from './volume-paths.js';

export interface PayloadFile {
  data: Buffer;
  /** File mode bits (e.g. 0o644). */
  mode: number;
}

/** Relative path → file. */
export type Payload = Map<string, PayloadFile>;

const DATA_DIR = '..data';
const DATA_DIR_TMP = '..data_tmp';

function tsDirName(nowMs: number, seq: number): string {
  const d = new Date(nowMs);
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `..${d.getUTCFullYear()}_${p(d.getUTCMonth() + 1)}_${p(d.getUTCDate())}_${p(d.getUTCHours())}_${p(d.getUTCMinutes())}_${p(d.getUTCSeconds())}.${p(d.getUTCMilliseconds(), 3)}${p(seq % 1_000_000, 6)}`;
}

let seq = 0;

/** Why a payload is refused (a bad path), or undefined. */
export function checkPayload(payload: Payload): string | undefined {
  for (const p of payload.keys()) {
    const bad = checkRelativePath(p);
    if (bad !== undefined) return `invalid path ${bad}`;
  }
  return undefined;
}

async function readlinkOrUndefined(p: string): Promise<string | undefined> {
  try {
    return await fs.readlink(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Whether `dir` holds exactly `payload` (every file's bytes and mode; no other file). */
async function holds(dir: string, payload: Payload): Promise<boolean> {
  let count = 0;
  const walk = async (rel: string): Promise<boolean> => {
    for (const e of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (!(await walk(r))) return false;
        continue;
      }
      const want = payload.get(r);
      if (!want || !e.isFile()) return false;
      const st = await fs.stat(path.join(dir, r));
      if ((st.mode & 0o7777) !== want.mode || st.size !== want.data.length) return false;
      if (!(await fs.readFile(path.join(dir, r))).equals(want.data)) return false;
      count++;
    }
    return true;
  };
  try {
    return (await walk('')) && count === payload.size;
  } catch {
    return false;
  }
}

/**
 * Publishes `payload` into `targetDir` (which must exist). Returns whether anything was written.
 * Throws on I/O errors (the caller turns them into a FailedMount message).
 */
export async function writeAtomically(targetDir: string, payload: Payload, clock: Pick<Clock, 'now'>, beforePublish?: () => Promise<void>): Promise<boolean> {
  const bad = checkPayload(payload);
  if (bad !== undefined) throw new Error(bad);
  const oldTs = await readlinkOrUndefined(path.join(targetDir, DATA_DIR));
  if (oldTs !== undefined && (await holds(path.join(targetDir, oldTs), payload))) return false;

  const tsName = tsDirName(clock.now(), seq++);
  const tsDir = path.join(targetDir, tsName);
  await fs.mkdir(tsDir, { mode: 0o755 });
  for (const [rel, f] of payload) {
    const file = path.join(tsDir, rel);
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o755 });
    await fs.writeFile(file, f.data, { mode: f.mode });
    await fs.chmod(file, f.mode); // writeFile's mode is masked by the umask
  }
  // The kubelet's setPerms hook: ownership of the volume with the new version, before readers see it.
  if (beforePublish) await beforePublish();
  const tmpLink = path.join(targetDir, DATA_DIR_TMP);
  await fs.rm(tmpLink, { force: true });
  await fs.symlink(tsName, tmpLink);
  await fs.rename(tmpLink, path.join(targetDir, DATA_DIR));

  const top = new Set([...payload.keys()].map((p) => p.split('/')[0]!));
  for (const name of top) {
    const link = path.join(targetDir, name);
    const cur = await readlinkOrUndefined(link).catch(() => undefined);
    if (cur === `${DATA_DIR}/${name}`) continue;
    await fs.rm(link, { force: true, recursive: true });
    await fs.symlink(`${DATA_DIR}/${name}`, link);
  }
  for (const e of await fs.readdir(targetDir)) {
    if (e.startsWith('..') || top.has(e)) continue;
    await fs.rm(path.join(targetDir, e), { force: true, recursive: true });
  }
  if (oldTs !== undefined && oldTs !== tsName && oldTs.startsWith('..') && !oldTs.includes('/')) {
    await fs.rm(path.join(targetDir, oldTs), { recursive: true, force: true });
  }
  return true;
}
