/**
 * The ExecSync log of the simulated runtime (`shardlet sim-runtime --exec-log FILE`): one line per
 * ExecSync call as it arrives, `<epoch ms> <container id> <command as a JSON array>`, so a bench
 * can count the exec probes each container received and when (probe density, issue 28) without
 * trusting the agent's own account. Lines are appended through one buffered stream; `close()`
 * flushes it (idempotent). The command is JSON-encoded, so no argument can break a line.
 */
import fs from 'node:fs';
import type { Clock } from '../shared/clock/clock.js';

export class SimExecLog {
  readonly #out: fs.WriteStream;
  readonly #clock: Clock;
  #closing: Promise<void> | undefined;

  constructor(file: string, clock: Clock) {
    this.#out = fs.createWriteStream(file, { flags: 'a' });
    this.#clock = clock;
  }

  record(containerId: string, cmd: readonly string[]): void {
    if (this.#closing) return;
    this.#out.write(`${this.#clock.now()} ${containerId} ${JSON.stringify(cmd)}\n`);
  }

  close(): Promise<void> {
    this.#closing ??= new Promise((resolve) => this.#out.end(() => resolve()));
    return this.#closing;
  }
}

/** One parsed line of the log, or null for a malformed one. */
export function parseExecLogLine(line: string): { atMs: number; containerId: string; cmd: string[] } | null {
  const a = line.indexOf(' ');
  const b = a < 0 ? -1 : line.indexOf(' ', a + 1);
  if (b < 0) return null;
  const atMs = Number(line.slice(0, a));
  let cmd: unknown;
  try {
    cmd = JSON.parse(line.slice(b + 1));
  } catch {
    return null;
  }
  if (!Number.isFinite(atMs) || !Array.isArray(cmd) || !cmd.every((x) => typeof x === 'string')) return null;
  return { atMs, containerId: line.slice(a + 1, b), cmd: cmd as string[] };
}
