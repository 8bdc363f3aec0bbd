/**
 * containerd's own task events (`ctr events`), for facts the CRI cannot be polled for reliably:
 * a deleted pod's containers are removed by the agent moments after they exit, so their exit
 * status is usually gone before a ContainerStatus poll can see it. `/tasks/start` and
 * `/tasks/exit` are pushed by containerd as they happen, so nothing is missed.
 *
 * Lifecycle: subscribe() → recording → close(). close() is idempotent and kills only the `ctr`
 * process started here.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** A `/tasks/exit` event of a container's init process. */
export interface TaskExit {
  readonly containerId: string;
  readonly exitStatus: number;
  /** `exited_at` from containerd, ms since the epoch. */
  readonly exitedAtMs: number;
}

/** One line of `ctr events`: `<date> <time> <zone> UTC <namespace> <topic> <json>`. */
const EVENT_LINE = /^\S+ \S+ \S+ \S+ (\S+) (\/\S+) (\{.*\})$/;

export class TaskEvents {
  readonly #child: ChildProcess;
  readonly #started = new Set<string>();
  readonly #exits = new Map<string, TaskExit>();
  readonly #unparsed: string[] = [];
  #closed = false;

  private constructor(child: ChildProcess) {
    this.#child = child;
    let buf = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        this.#line(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => this.#unparsed.push(`stderr: ${chunk.trim()}`));
  }

  /** Starts `ctr -a <socket> events` (all namespaces). */
  static subscribe(socketPath: string): TaskEvents {
    return new TaskEvents(spawn('ctr', ['-a', socketPath, 'events'], { stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  #line(line: string): void {
    const m = EVENT_LINE.exec(line.trim());
    if (!m) {
      if (line.trim()) this.#unparsed.push(line);
      return;
    }
    const [, , topic, json] = m;
    if (topic !== '/tasks/start' && topic !== '/tasks/exit') return;
    const ev = JSON.parse(json!) as { container_id?: string; id?: string; exit_status?: number; exited_at?: string };
    const id = ev.container_id ?? '';
    if (topic === '/tasks/start') this.#started.add(id);
    // An exec's exit has id ≠ container_id; only the container's init process counts.
    else if (ev.id === undefined || ev.id === id) this.#exits.set(id, { containerId: id, exitStatus: ev.exit_status ?? 0, exitedAtMs: Date.parse(ev.exited_at ?? '') });
  }

  /** Whether containerd reported the container's task started since subscribe(). */
  sawStart(containerId: string): boolean {
    return this.#started.has(containerId);
  }

  exitOf(containerId: string): TaskExit | undefined {
    return this.#exits.get(containerId);
  }

  /** Lines that were not events (ctr errors), for failure messages. */
  get unparsed(): readonly string[] {
    return this.#unparsed;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill('SIGTERM');
  }
}
