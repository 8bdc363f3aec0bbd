/**
 * The agent's embedded default runtime: when no --container-runtime-endpoint is given, the CLI
 * starts the simulated CRI runtime (`shardlet sim-runtime`) as a child process on a socket under
 * --root-dir, with its state persisted there so a restarted agent finds its pods again. The agent
 * itself only ever sees a CRI endpoint: it never imports the simulated runtime.
 *
 * The child is stopped (SIGTERM → state saved) when the agent stops.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface EmbeddedRuntime {
  endpoint: string;
  stop(): Promise<void>;
}

const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'main.js');

export async function startEmbeddedRuntime(rootDir: string, onLine: (line: string) => void): Promise<EmbeddedRuntime> {
  fs.mkdirSync(rootDir, { recursive: true });
  const socket = path.join(rootDir, 'sim-runtime.sock');
  const child: ChildProcess = spawn(process.execPath, [MAIN, 'sim-runtime', '--socket', socket, '--state', path.join(rootDir, 'sim-runtime-state.json')], {
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  let buffered = '';
  child.stderr?.setEncoding('utf8');
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk: string) => {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        onLine(line);
        if (line.includes('serving unix://')) resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`embedded sim-runtime exited with code ${code} before serving`)));
    child.once('error', reject);
  });
  await ready;
  return {
    endpoint: `unix://${socket}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
