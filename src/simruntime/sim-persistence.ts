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

export function writeStateFile(file: string, doc: StateDocument): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, JSON.stringify(doc));
  fs.renameSync(tmp, file);
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
