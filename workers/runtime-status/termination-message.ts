/**
 * A container's termination message (the kubelet's convertToKubeContainerStatus,
 * getTerminationMessage and readLastStringFromContainerLogs, kuberuntime_container.go), read
 * when an EXITED container is inspected: by the PLEG's relist (bulk-pod-status.ts, once per
 * exited container: its inspection is kept while the state stays) and by a pod worker's own
 * status read (get-pod-status.ts).
 *
 * - The file is the host side of the mount at the container's terminationMessagePath (both from
 *   the container's CRI status: its mounts and the kubelet's annotation). Only a mount whose
 *   host path lies under `<rootDir>/pods/` is read: the agent made that one
 *   (kubelet-managed-mounts.ts); a volume the pod mounts at the same path is not read by the
 *   agent (the kubelet would read the first match, e.g. a hostPath into the node).
 * - The container wrote it and is untrusted: opened O_NOFOLLOW|O_NONBLOCK, only a regular file
 *   is read, and only its last 4096 bytes (MaxContainerTerminationMessageLength; the kubelet's
 *   tail.ReadAtMost). A missing file is an empty message; another failure becomes the message
 *   "Error on reading termination log <path>: <error>", as in the kubelet.
 * - FallbackToLogsOnError, a non-zero exit that is not ContainerCannotRun, and an empty file
 *   (or none): the last 80 lines of the container's log, of which the last 2048 bytes.
 * - The message is appended to the runtime's own message after ": ".
 * The per-pod bound (12 KiB over all containers) is applied to the API status
 * (termination-message-bounds.ts).
 */
import fs from 'node:fs/promises';
import { constants as C } from 'node:fs';
import path from 'node:path';
import type { ContainerStatus } from '../../src/shared/cri/cri-types.js';
import { ContainerTerminationMessagePathLabel, ContainerTerminationMessagePolicyLabel } from '../../src/shared/kubetypes/kubelet-labels.js';
import { parseCriLine, tailStartOffset } from '../../src/shared/logs/cri-log-lines.js';
import { isWithin } from '../path-containment.js';
import { containerDetails, type ContainerDetails } from './cri-status-convert.js';

/** kubecontainer.MaxContainerTerminationMessageLength. */
export const MAX_CONTAINER_TERMINATION_MESSAGE_LENGTH = 4 * 1024;
/** kubecontainer.MaxContainerTerminationMessageLogLength. */
export const MAX_CONTAINER_TERMINATION_MESSAGE_LOG_LENGTH = 2048;
/** kubecontainer.MaxContainerTerminationMessageLogLines. */
export const MAX_CONTAINER_TERMINATION_MESSAGE_LOG_LINES = 80;
/** A log tail never reads more than this many bytes of the file (80 lines of containerd's 16 KiB, with headers). */
const MAX_LOG_TAIL_READ_BYTES = MAX_CONTAINER_TERMINATION_MESSAGE_LOG_LINES * 17 * 1024;

export interface TerminationMessageReader {
  /** The message of an EXITED container's status (with the runtime's own message), else `st.message`. */
  messageOf(st: ContainerStatus): Promise<string>;
}

/** Reads at most the last `max` bytes of a regular file; ENOENT → undefined. */
async function readTailOfRegularFile(file: string, max: number): Promise<Buffer | undefined> {
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(file, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new Error(`${file} is not a regular file`);
    const len = Math.min(st.size, max);
    const buf = Buffer.alloc(len);
    const { bytesRead } = await fh.read(buf, 0, len, st.size - len);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The last `MAX_..._LOG_LINES` lines' content of a CRI log file, of which the last 2048 bytes. */
export async function readLastStringFromContainerLogs(logPath: string): Promise<string> {
  try {
    const fh = await fs.open(logPath, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw new Error(`${logPath} is not a regular file`);
      const start = Math.max(await tailStartOffset(fh, st.size, MAX_CONTAINER_TERMINATION_MESSAGE_LOG_LINES), st.size - MAX_LOG_TAIL_READ_BYTES);
      const buf = Buffer.alloc(st.size - start);
      const { bytesRead } = await fh.read(buf, 0, buf.length, start);
      const parts: Buffer[] = [];
      for (const line of buf.subarray(0, bytesRead).toString('latin1').split('\n')) {
        if (line === '') continue;
        const msg = parseCriLine(Buffer.from(line, 'latin1'));
        if (!msg) continue;
        parts.push(msg.content);
        if (!msg.partial) parts.push(Buffer.from('\n'));
      }
      const all = Buffer.concat(parts);
      return all.subarray(Math.max(0, all.length - MAX_CONTAINER_TERMINATION_MESSAGE_LOG_LENGTH)).toString();
    } finally {
      await fh.close();
    }
  } catch (err) {
    return `Error on reading termination message from logs: ${errText(err)}`;
  }
}

export function terminationMessageReader(opts: { rootDir: string }): TerminationMessageReader {
  const podsRoot = path.join(path.resolve(opts.rootDir), 'pods');
  /** getTerminationMessage: [message, whether to read the log instead]. */
  const fromFile = async (st: ContainerStatus, messagePath: string, fallbackToLogs: boolean): Promise<[string, boolean]> => {
    if (messagePath === '') return ['', fallbackToLogs];
    for (const m of st.mounts ?? []) {
      if (m.containerPath !== messagePath) continue;
      const host = path.resolve(m.hostPath);
      if (host !== m.hostPath || !isWithin(podsRoot, host) || host === podsRoot) continue;
      try {
        const data = await readTailOfRegularFile(host, MAX_CONTAINER_TERMINATION_MESSAGE_LENGTH);
        if (data === undefined) return ['', fallbackToLogs];
        return [data.toString(), fallbackToLogs && data.length === 0];
      } catch (err) {
        return [`Error on reading termination log ${host}: ${errText(err)}`, false];
      }
    }
    return ['', fallbackToLogs];
  };
  return {
    async messageOf(st) {
      if (st.state !== 'CONTAINER_EXITED') return st.message;
      const policy = st.annotations[ContainerTerminationMessagePolicyLabel] ?? '';
      const fallbackToLogs = policy === 'FallbackToLogsOnError' && st.exitCode !== 0 && st.reason !== 'ContainerCannotRun';
      let [message, checkLogs] = await fromFile(st, st.annotations[ContainerTerminationMessagePathLabel] ?? '', fallbackToLogs);
      if (checkLogs && st.logPath !== '') message = await readLastStringFromContainerLogs(st.logPath);
      if (message === '') return st.message;
      return st.message !== '' ? `${st.message}: ${message}` : message;
    },
  };
}

/** An inspected container's details, its message read by `messages` when there is a reader. */
export async function inspectedDetails(st: ContainerStatus, messages: TerminationMessageReader | undefined): Promise<ContainerDetails> {
  const d = containerDetails(st);
  if (messages && st.state === 'CONTAINER_EXITED') d.message = await messages.messageOf(st);
  return d;
}
