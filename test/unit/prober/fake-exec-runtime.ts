/**
 * A scripted ExecSync runtime for prober tests, on a FakeClock. Per container id, a queue of
 * steps is consumed in order; when it is empty the container's default step is used (exit 0).
 * A step with `delayMs` completes after that much fake time, or fails with DEADLINE_EXCEEDED at
 * the request's timeout when the delay exceeds it, as containerd does.
 */
import type { CallOptions } from '../../../src/shared/cri/runtime-service.js';
import { CriError, type CriErrorCode } from '../../../src/shared/cri/cri-errors.js';
import type { ExecSyncRequest, ExecSyncResponse } from '../../../src/shared/cri/cri-types.js';
import type { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import type { ExecRuntime } from '../../../workers/prober/probers/exec-probe.js';

export type ExecStep =
  | { exitCode: number; stdout?: string; stderr?: string; delayMs?: number }
  | { error: CriErrorCode; delayMs?: number };

export interface ExecCall {
  containerId: string;
  cmd: string[];
  timeout: number;
  /** Fake-clock time of the call. */
  at: number;
}

export class FakeExecRuntime implements ExecRuntime {
  readonly calls: ExecCall[] = [];
  readonly #clock: FakeClock;
  readonly #queues = new Map<string, ExecStep[]>();
  readonly #defaults = new Map<string, ExecStep>();
  /** Calls not yet answered. */
  inFlight = 0;
  /**
   * Calls waiting on the fake clock (a step's delay): counted down synchronously when their
   * timer fires or they are cancelled, so right after a clock step the count already says which
   * calls are about to answer. `onSleepingChange` observes it (ProbeActivity).
   */
  sleeping = 0;
  onSleepingChange: (() => void) | undefined;
  #idleWaiters: (() => void)[] = [];

  constructor(clock: FakeClock) {
    this.#clock = clock;
  }

  /** Append steps for the container. */
  script(containerId: string, ...steps: ExecStep[]): this {
    const q = this.#queues.get(containerId) ?? [];
    q.push(...steps);
    this.#queues.set(containerId, q);
    return this;
  }

  /** What the container answers once its queue is empty. */
  setDefault(containerId: string, step: ExecStep): this {
    this.#defaults.set(containerId, step);
    return this;
  }

  callsFor(containerId: string): ExecCall[] {
    return this.calls.filter((c) => c.containerId === containerId);
  }

  async execSync(req: ExecSyncRequest, opts?: CallOptions): Promise<ExecSyncResponse> {
    const timeout = Number(req.timeout ?? 0);
    this.calls.push({ containerId: req.containerId, cmd: [...req.cmd], timeout, at: this.#clock.now() });
    const step = this.#queues.get(req.containerId)?.shift() ?? this.#defaults.get(req.containerId) ?? { exitCode: 0 };
    this.inFlight++;
    try {
      const delay = step.delayMs ?? 0;
      if (delay > 0) {
        const limit = timeout > 0 ? Math.min(delay, timeout * 1000) : delay;
        await this.#sleep(limit, opts?.signal);
        if (limit < delay) throw new CriError('ERR_CRI_DEADLINE_EXCEEDED', 'ExecSync', 'ExecSync: timeout');
      }
      if ('error' in step) throw new CriError(step.error, 'ExecSync', `ExecSync: scripted ${step.error}`);
      return { stdout: Buffer.from(step.stdout ?? ''), stderr: Buffer.from(step.stderr ?? ''), exitCode: step.exitCode };
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) {
        const w = this.#idleWaiters;
        this.#idleWaiters = [];
        for (const f of w) f();
      }
    }
  }

  #sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const cancelled = (): CriError => new CriError('ERR_CRI_CANCELLED', 'ExecSync', 'ExecSync: cancelled');
      if (signal?.aborted) return reject(cancelled());
      this.#sleepingDelta(1);
      const onAbort = (): void => {
        timer.cancel();
        this.#sleepingDelta(-1);
        reject(cancelled());
      };
      const timer = this.#clock.setTimer(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        this.#sleepingDelta(-1);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #sleepingDelta(d: 1 | -1): void {
    this.sleeping += d;
    this.onSleepingChange?.();
  }

  /** Resolves once no call is in flight (at once if none is): every call answered or cancelled. */
  whenIdle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }
}
