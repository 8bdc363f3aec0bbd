/**
 * Opening untrusted paths as regular files only, the one policy of the static-pod file reader
 * (manifest-file-read.ts, synchronous on the decoder thread) and the container log reader
 * (container-logs-open.ts, asynchronous on the main thread): stat the path first and never open
 * anything but a regular file (opening a device can act); open with O_NONBLOCK so a FIFO swapped
 * in after the stat cannot block open(2) (and with it a thread); then check the descriptor's
 * fstat, which describes exactly what will be read.
 */
import fs from 'node:fs';

/** open(2) flags for a path that must be a regular file (see the module comment). */
export const REGULAR_FILE_OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY;

/** The file type of `st` in words, for "not a regular file (…)" messages. */
export function fileTypeName(st: fs.Stats): string {
  if (st.isFile()) return 'regular file';
  if (st.isFIFO()) return 'fifo';
  if (st.isCharacterDevice()) return 'character device';
  if (st.isBlockDevice()) return 'block device';
  if (st.isSocket()) return 'socket';
  if (st.isDirectory()) return 'directory';
  if (st.isSymbolicLink()) return 'symbolic link';
  return 'unknown file type';
}
