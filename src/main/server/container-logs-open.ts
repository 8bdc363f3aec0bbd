/**
 * Opens a container log file for /containerLogs: regular files only, never blocking a libuv
 * file thread. The path comes from the runtime, but what lies there is the container's doing
 * (a runtime may let a container replace its log file): a FIFO would block open(2) on one of
 * libuv's four threads until a writer came (after four such requests, zlib and every fs call of
 * the process queue behind them), and a device such as /dev/zero would stream forever.
 *
 * The policy is src/shared/fs/regular-file.ts's, shared with the static-pod file reader.
 *
 * Order: stat(2) the path first (follows links) and refuse anything but a regular file without
 * opening it (opening some devices has effects); then open O_RDONLY|O_NONBLOCK|O_NOCTTY, which
 * returns at once even for a FIFO swapped in after the stat; then fstat(2) the descriptor, the
 * authoritative check (no race: it is the file we will read), and close it if it is not regular.
 * O_NONBLOCK has no effect on reads of a regular file.
 */
import fs from 'node:fs';
import { fileTypeName, REGULAR_FILE_OPEN_FLAGS } from '../../shared/fs/regular-file.js';

export type OpenLogResult =
  | { ok: true; file: fs.promises.FileHandle; ino: number; size: number }
  | { ok: false; code: 'ERR_LOG_NOT_REGULAR' | 'ERR_LOG_OPEN'; message: string };

function notRegular(logPath: string, st: fs.Stats): OpenLogResult {
  return { ok: false, code: 'ERR_LOG_NOT_REGULAR', message: `failed to open log file ${JSON.stringify(logPath)}: not a regular file (${fileTypeName(st)})` };
}

/** Opens `logPath` if it is a regular file (see the module comment); never throws. */
export async function openRegularLogFile(logPath: string): Promise<OpenLogResult> {
  try {
    const pre = await fs.promises.stat(logPath);
    if (!pre.isFile()) return notRegular(logPath, pre);
    const file = await fs.promises.open(logPath, REGULAR_FILE_OPEN_FLAGS);
    let st: fs.Stats;
    try {
      st = await file.stat();
    } catch (err) {
      await file.close().catch(() => {});
      throw err;
    }
    if (!st.isFile()) {
      await file.close().catch(() => {});
      return notRegular(logPath, st);
    }
    return { ok: true, file, ino: st.ino, size: st.size };
  } catch (err) {
    return { ok: false, code: 'ERR_LOG_OPEN', message: `failed to open log file ${JSON.stringify(logPath)}: ${err instanceof Error ? err.message : String(err)}` };
  }
}
