/**
 * The `--state FILE` format: sandboxes, containers and images as JSON, written on shutdown
 * and periodically, read at start. A restart that keeps state is then like a containerd
 * restart whose shims survived: sandboxes keep their ids, names, IPs and states; a RUNNING
 * container comes back RUNNING and its workload resumes where its timeline is now (a
 * `sleep 100` started 30 s before comes back with 70 s left; one whose exit time passed while
 * the runtime was down exits at once with its original finish time). Dropping state = not
 * passing the file (or deleting it).
 *
 * Writes are atomic (temp file + rename) so a crash mid-write leaves the previous state.
 * The file holds container env, secrets included: it is 0600 in a 0700 directory. The temp file
 * is opened and fchmod'ed 0600 before a byte is written (a leftover temp file keeps its old mode
 * on open, and rename carries the temp file's mode over); a directory or file left wider by an
 * older version is tightened on load and on every save. A shared sticky directory (e.g. /tmp)
 * or one owned by another user is never chmod'ed: the file's own 0600 is what protects it there.
 * Schema (version 1):
 *   { "version": 1, "savedAtMs": number, "ipCursor": number,
 *     "images": [{ "ref": string, "pulled": boolean }],
 *     "sandboxes": [SandboxJson], "containers": [ContainerJson] }
 * where SandboxJson / ContainerJson are the records of sim-state.ts minus live handles.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ImageRecordJson } from './sim-images.js';
import type { ContainerRecord, SandboxRecord } from './sim-state.js';

export const STATE_VERSION = 1;

export type ContainerJson = Omit<ContainerRecord, 'process' | 'log'>;

export interface StateDocument {
  version: number;
  savedAtMs: number;
  ipCursor: number;
  images: ImageRecordJson[];
  sandboxes: SandboxRecord[];
  containers: ContainerJson[];
}

export class StateFileError extends Error {
  readonly code = 'ERR_SIM_STATE_FILE';
}

export function containerToJson(c: ContainerRecord): ContainerJson {
  const { process: _p, log: _l, ...rest } = c;
  return rest;
}

export const STATE_FILE_MODE = 0o600;
export const STATE_DIR_MODE = 0o700;

export function writeStateFile(file: string, doc: StateDocument): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: STATE_DIR_MODE });
  tightenStateDir(dir);
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w', STATE_FILE_MODE);
  try {
    fs.fchmodSync(fd, STATE_FILE_MODE);
    fs.writeSync(fd, JSON.stringify(doc));
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}

/** chmod 0700 the state file's directory when we own it and it is not a shared sticky one. */
function tightenStateDir(dir: string): void {
  const st = fs.statSync(dir);
  const sticky = (st.mode & 0o1000) !== 0;
  const ours = typeof process.getuid !== 'function' || st.uid === process.getuid();
  if ((st.mode & 0o777) !== STATE_DIR_MODE && ours && !sticky) fs.chmodSync(dir, STATE_DIR_MODE);
}

/** An existing state file (and its directory) left wider than 0600/0700 is tightened. */
function tightenExisting(file: string): void {
  tightenStateDir(path.dirname(file));
  if ((fs.statSync(file).mode & 0o777) !== STATE_FILE_MODE) fs.chmodSync(file, STATE_FILE_MODE);
}

/** Reads the state file; undefined when it does not exist. Throws StateFileError when malformed. */
export function readStateFile(file: string): StateDocument | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StateFileError(`cannot read state file ${file}: ${(e as Error).message}`);
  }
  try {
    tightenExisting(file);
  } catch (e) {
    throw new StateFileError(`cannot make state file ${file} private (0600 in a 0700 directory): ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new StateFileError(`state file ${file} is not JSON: ${(e as Error).message}`);
  }
  const d = doc as Partial<StateDocument> | null;
  if (!d || d.version !== STATE_VERSION || !Array.isArray(d.sandboxes) || !Array.isArray(d.containers) || !Array.isArray(d.images)) {
    throw new StateFileError(`state file ${file} is not a version ${STATE_VERSION} shardlet sim-runtime state`);
  }
  return { version: STATE_VERSION, savedAtMs: Number(d.savedAtMs ?? 0), ipCursor: Number(d.ipCursor ?? 0), images: d.images, sandboxes: d.sandboxes, containers: d.containers };
}
