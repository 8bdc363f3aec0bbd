/**
 * ExecSync in a running simulated container, with containerd 1.6's observable behaviour
 * (../shared/notes/containerd.md): the command is not run through a shell, so argv[0] must be
 * an interpreted applet of the image (`sh`, `sleep`, `echo`, `true`, `false`, `busybox`; see
 * sim-shell.ts) — anything else (a missing path, a builtin like `exit`, and — a simplification —
 * any other program) fails with UNKNOWN "executable file not found in $PATH". The exit code and both outputs come back in the response, not as gRPC errors. With
 * `timeout` > 0 seconds, a command still running then fails DEADLINE_EXCEEDED at the timeout;
 * with 0 it may run forever (the caller's deadline ends the call). Output is capped at 16 MiB
 * per stream (CVE-2022-1708), the rest discarded.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../shared/clock/clock.js';
import { CriError } from '../shared/cri/cri-errors.js';
import type { ExecSyncResponse } from '../shared/cri/cri-types.js';
import { resolveArgv, type Env } from './sim-shell.js';
import type { SimProcessContext } from './sim-process-context.js';
import type { FileWriter } from './sim-files.js';

const MAX_EXEC_OUTPUT_BYTES = 16 * 1024 * 1024;

function cap(s: string): Buffer {
  const b = Buffer.from(s);
  return b.length > MAX_EXEC_OUTPUT_BYTES ? b.subarray(0, MAX_EXEC_OUTPUT_BYTES) : b;
}

/**
 * Runs `cmd` with the container's `env` to completion on the clock. `timeoutSec` 0 = no timeout.
 * `ctx`: the container's identity and mounts (an exec runs as the container's process does);
 * `write`: where `> FILE` output lands (sim-files.ts).
 */
export async function simExecSync(clock: Clock, cmd: readonly string[], timeoutSec: number, env: Env, ctx?: SimProcessContext, write?: FileWriter): Promise<ExecSyncResponse> {
  const execId = randomBytes(32).toString('hex');
  const resolved = resolveArgv(cmd, env, ctx, write);
  if (resolved.kind !== 'timeline') {
    const exe = resolved.kind === 'not-found' ? resolved.executable : (cmd[0] ?? '');
    throw new CriError(
      'ERR_CRI_UNKNOWN',
      'ExecSync',
      `failed to exec in container: failed to start exec "${execId}": OCI runtime exec failed: exec failed: unable to start container process: exec: "${exe}": executable file not found in $PATH: unknown`,
    );
  }
  const { outputs, exit } = resolved.timeline;
  const timeoutMs = timeoutSec > 0 ? timeoutSec * 1000 : Infinity;
  if (exit === null || exit.atMs > timeoutMs) {
    if (timeoutMs === Infinity) await new Promise<never>(() => {}); // runs forever: the client's deadline ends the call
    await clock.sleep(timeoutMs);
    throw new CriError('ERR_CRI_DEADLINE_EXCEEDED', 'ExecSync', `failed to exec in container: timeout ${timeoutSec}s exceeded: context deadline exceeded`);
  }
  if (exit.atMs > 0) await clock.sleep(exit.atMs);
  let stdout = '';
  let stderr = '';
  for (const o of outputs) {
    if (o.stream === 'stdout') stdout += o.text;
    else stderr += o.text;
  }
  return { stdout: cap(stdout), stderr: cap(stderr), exitCode: exit.code };
}
