/**
 * CPU pinning for the thread-scaling curve (`npm run bench -- --pin RUNTIME:AGENT`): the runtime
 * runs on one CPU set and the agent on another, so the agent's own scaling with worker threads
 * shows instead of the agent and the runtime fighting over the same cores.
 *
 * Pinning is done with util-linux `taskset`, which sets the affinity and then execs the command:
 * the child keeps the pid `spawn` reports, and every thread it creates inherits the mask. The raw-
 * CRI ceiling's client runs inside the bench process, so during a ceiling the bench pins ITSELF
 * (all its threads, `taskset -a -p`) to the agent's set and restores its own mask afterwards: the
 * ceiling's client gets the same cores an agent gets.
 * A CPU list is the kernel's syntax (`0`, `1-3`, `0,2`), checked here before it reaches a command.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

export class CpuPinningError extends Error {
  readonly code = 'ERR_BENCH_CPU_PINNING';
}

export interface CpuPinning {
  /** CPU list for the runtime (sim-runtime) processes. */
  runtime: string;
  /** CPU list for the agent processes and for the ceiling's client. */
  agent: string;
}

const CPU_LIST = /^\d{1,4}(-\d{1,4})?(,\d{1,4}(-\d{1,4})?)*$/;

/** The CPUs of a list, e.g. `0,2-3` → [0, 2, 3]. Throws on a malformed list or a CPU this machine lacks. */
export function cpusOf(list: string, cpuCount: number): number[] {
  if (!CPU_LIST.test(list)) throw new CpuPinningError(`not a CPU list: ${JSON.stringify(list)} (e.g. 0, 1-3, 0,2)`);
  const out = new Set<number>();
  for (const part of list.split(',')) {
    const [a, b] = part.split('-').map(Number) as [number, number | undefined];
    const hi = b ?? a;
    if (hi < a) throw new CpuPinningError(`CPU range ${part} is backwards`);
    if (hi >= cpuCount) throw new CpuPinningError(`CPU ${hi} does not exist (this machine has CPUs 0-${cpuCount - 1})`);
    for (let c = a; c <= hi; c++) out.add(c);
  }
  return [...out].sort((x, y) => x - y);
}

/** `--pin RUNTIME:AGENT`, e.g. `0:1`; the two sets must not overlap. */
export function parsePin(v: string, cpuCount = os.availableParallelism()): CpuPinning {
  const m = /^([^:]+):([^:]+)$/.exec(v);
  if (!m) throw new CpuPinningError(`--pin must be RUNTIME_CPUS:AGENT_CPUS (e.g. 0:1), got ${JSON.stringify(v)}`);
  const [runtime, agent] = [m[1] as string, m[2] as string];
  const r = cpusOf(runtime, cpuCount);
  const a = cpusOf(agent, cpuCount);
  const both = r.filter((c) => a.includes(c));
  if (both.length > 0) throw new CpuPinningError(`--pin: CPU ${both.join(',')} is in both the runtime's and the agent's set`);
  return { runtime, agent };
}

/** The command and arguments that run `cmd args` on `cpus` (unchanged when `cpus` is undefined). */
export function pinnedCommand(cpus: string | undefined, cmd: string, args: readonly string[]): [string, string[]] {
  return cpus === undefined ? [cmd, [...args]] : ['taskset', ['-c', cpus, cmd, ...args]];
}

/** The CPUs a process (or the bench itself) may run on now, from /proc (`Cpus_allowed_list`). */
export function allowedCpus(pid: number = process.pid): string {
  const m = /^Cpus_allowed_list:\s*(\S+)$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new CpuPinningError(`/proc/${pid}/status has no Cpus_allowed_list`);
  return m[1] as string;
}

function setOwnAffinity(cpus: string): void {
  const r = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(process.pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new CpuPinningError(`taskset -a -p -c ${cpus} ${process.pid} failed: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`);
}

/** Runs `fn` with every thread of this process pinned to `cpus`, then restores the previous mask. */
export async function withOwnAffinity<T>(cpus: string | undefined, fn: () => Promise<T>): Promise<T> {
  if (cpus === undefined) return fn();
  const before = allowedCpus();
  setOwnAffinity(cpus);
  try {
    return await fn();
  } finally {
    setOwnAffinity(before);
  }
}
