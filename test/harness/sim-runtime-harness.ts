/**
 * Starts the simulated CRI runtime (`shardlet sim-runtime --socket PATH`) as a child process from
 * the compiled CLI (dist/src/cli/main.js) and resolves once CRI `Version` answers on its socket.
 *
 * stop(): SIGTERM, SIGKILL after 5 s, then the temp dir is removed. Idempotent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { pollUntil } from './poll.js';

export interface StartSimRuntimeOptions {
  /** `--profile` (e.g. `zero`, `containerd`); omitted: the sim's default. */
  readonly profile?: string;
  /** Extra CLI flags passed through verbatim. */
  readonly extraArgs?: readonly string[];
  readonly startTimeoutMs?: number;
}

export interface SimRuntimeInstance {
  readonly endpoint: string;
  readonly socketPath: string;
  readonly tmpDir: string;
  /** The sim's stdout+stderr. */
  readonly logPath: string;
  readonly pid: number;
  stop(): Promise<void>;
}

export class SimRuntimeHarnessError extends Error {
  override readonly name = 'SimRuntimeHarnessError';
  readonly code = 'ERR_HARNESS_SIM_START';
}

/** dist/test/harness/ → dist/src/cli/main.js */
export function shardletMainPath(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli', 'main.js');
}

function tail(p: string): string {
  try {
    return fs.readFileSync(p, 'utf8').trimEnd().split('\n').slice(-20).join('\n');
  } catch {
    return '(no output)';
  }
}

function exitedPromise(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

export async function startSimRuntime(opts: StartSimRuntimeOptions = {}): Promise<SimRuntimeInstance> {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-sim-'));
  const socketPath = path.join(tmpDir, 'sim.sock');
  const logPath = path.join(tmpDir, 'sim.log');
  const args = [shardletMainPath(), 'sim-runtime', '--socket', socketPath];
  if (opts.profile !== undefined) args.push('--profile', opts.profile);
  args.push(...(opts.extraArgs ?? []));
  const logFd = fs.openSync(logPath, 'a');
  const child = spawn(process.execPath, args, { stdio: ['ignore', logFd, logFd] });
  fs.closeSync(logFd);
  child.once('error', () => undefined); // reported below as an early exit
  const exited = exitedPromise(child);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 5_000)))]);
        clearTimeout(timer);
        if (!gone) {
          child.kill('SIGKILL');
          await exited;
        }
      }
      fs.rmSync(tmpDir, { recursive: true, force: true });
    })();
    return stopping;
  };

  const client = new CriClient({ endpoint: socketPath, timeoutMs: 2_000 });
  try {
    await pollUntil(
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new SimRuntimeHarnessError(`sim-runtime exited (${child.exitCode ?? child.signalCode}) before ready:\n${tail(logPath)}`);
        }
        if (!fs.existsSync(socketPath)) return undefined;
        await client.version();
        return true;
      },
      { what: `sim-runtime on ${socketPath}`, timeoutMs: opts.startTimeoutMs ?? 20_000 },
    );
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    const output = tail(logPath); // read before stop() removes the temp dir
    await stop();
    throw new SimRuntimeHarnessError(`${why}\n--- sim-runtime output ---\n${output}`);
  } finally {
    client.close();
  }
  return { endpoint: `unix://${socketPath}`, socketPath, tmpDir, logPath, pid: child.pid ?? -1, stop };
}
