/**
 * One simulated container process: plays a {@link Timeline} on the injected clock and reacts
 * to signals. Owned by the container record that created it; the owner learns everything
 * through the two callbacks.
 *
 * State machine (timeline):
 *
 *   running ──(timeline exit at T)──────────────────────────▶ exited(code)
 *      │──(SIGTERM, not ignoring)─────────────────────────────▶ exited(143)
 *      │──(SIGTERM, ignoring: `trap "" TERM` / ignore-sigterm)─▶ running (unchanged)
 *      │──(SIGKILL)───────────────────────────────────────────▶ exited(137)
 *      └──(oom at T)──────────────────────────────────────────▶ exited(137, OOMKilled)
 *
 * Invariants: `onExit` is called exactly once; no callback fires after it; every timer the
 * process armed is cancelled by then.
 */
import type { Clock, TimerHandle } from '../shared/clock/clock.js';
import { Chatter, type ChatterSpec } from './sim-log-chatter.js';
import type { OutputStream, Timeline } from './sim-shell.js';

export type ProcessState = 'running' | 'exited';

export type Signal = 'SIGTERM' | 'SIGKILL';

export interface ProcessExit {
  code: number;
  /** True when the exit was an OOM kill (containerd reason "OOMKilled"). */
  oomKilled: boolean;
  /** Wall-clock ms of the exit. */
  atMs: number;
}

export interface ProcessOverrides {
  /** Ignore SIGTERM from the start (annotation `sim.shardlet.io/ignore-sigterm`). */
  ignoreSigterm?: boolean;
  /** Crash with `code` at `afterMs` unless it exited before (`crash-after-ms` + `exit-code`). */
  crash?: { afterMs: number; code: number };
  /** OOM-killed at `afterMs` (`oom-after-ms`). */
  oomAfterMs?: number;
  /** Writes log volume while running (`log-lines-per-second`, `log-line-bytes`). */
  chatter?: ChatterSpec;
}

export interface SimProcessDeps {
  clock: Clock;
  timeline: Timeline;
  overrides?: ProcessOverrides;
  /** Wall-clock ms the process started. */
  startedAtMs: number;
  /**
   * How far into its timeline the process already is: 0 for a fresh start; for one resumed
   * after a runtime restart, the time since `startedAtMs` (earlier outputs are not repeated).
   */
  elapsedMs: number;
  onOutput(stream: OutputStream, text: string, atMs: number): void;
  onExit(exit: ProcessExit): void;
}

export class SimProcess {
  #state: ProcessState = 'running';
  readonly #deps: SimProcessDeps;
  readonly #timers: TimerHandle[] = [];
  readonly #ignoreTermFromMs: number | null;
  #chatter: Chatter | undefined;

  constructor(deps: SimProcessDeps) {
    this.#deps = deps;
    const { timeline, overrides = {} } = deps;
    this.#ignoreTermFromMs = overrides.ignoreSigterm ? 0 : timeline.ignoreTermFromMs;
    // The earliest of the timeline's own exit, a configured crash and an OOM kill wins.
    type End = { atMs: number; code: number; oom: boolean };
    const ends: End[] = [];
    if (timeline.exit) ends.push({ atMs: timeline.exit.atMs, code: timeline.exit.code, oom: false });
    if (overrides.crash) ends.push({ atMs: overrides.crash.afterMs, code: overrides.crash.code, oom: false });
    if (overrides.oomAfterMs !== undefined) ends.push({ atMs: overrides.oomAfterMs, code: 137, oom: true });
    ends.sort((a, b) => a.atMs - b.atMs);
    const end = ends[0];
    const elapsed = Math.max(0, deps.elapsedMs);
    for (const out of timeline.outputs) {
      if (end && out.atMs > end.atMs) break;
      if (out.atMs < elapsed) continue; // already happened before a restart
      this.#at(out.atMs - elapsed, () => deps.onOutput(out.stream, out.text, deps.startedAtMs + out.atMs));
    }
    if (end) this.#at(Math.max(0, end.atMs - elapsed), () => this.#exit(end.code, end.oom, deps.startedAtMs + end.atMs));
    if (overrides.chatter) {
      this.#chatter = new Chatter({ clock: deps.clock, spec: overrides.chatter, emit: (text, atMs) => {
        if (this.#state === 'running') deps.onOutput('stdout', text, atMs);
      } });
    }
  }

  get state(): ProcessState {
    return this.#state;
  }

  /** Whether SIGTERM would be ignored right now. */
  get ignoresSigterm(): boolean {
    if (this.#ignoreTermFromMs === null) return false;
    return this.#deps.clock.now() - this.#deps.startedAtMs >= this.#ignoreTermFromMs;
  }

  /** Delivers a signal. A no-op once exited. */
  signal(sig: Signal): void {
    if (this.#state !== 'running') return;
    switch (sig) {
      case 'SIGTERM':
        if (!this.ignoresSigterm) this.#exit(143, false, this.#deps.clock.now());
        return;
      case 'SIGKILL':
        this.#exit(137, false, this.#deps.clock.now());
        return;
      default: {
        const never: never = sig;
        throw new Error(`unknown signal ${String(never)}`);
      }
    }
  }

  /** The program exits by itself now with `code` (a stdin-driven shell ran `exit N` or read EOF). */
  end(code: number): void {
    this.#exit(code, false, this.#deps.clock.now());
  }

  /** Stops the process's timers without an exit (runtime shutdown: the state file keeps it running). */
  detach(): void {
    this.#chatter?.stop();
    for (const t of this.#timers) t.cancel();
    this.#timers.length = 0;
    this.#state = 'exited';
  }

  #at(delayMs: number, fn: () => void): void {
    // Zero-delay work still goes through the clock so no callback runs inside the constructor.
    this.#timers.push(this.#deps.clock.setTimer(delayMs, () => {
      if (this.#state === 'running') fn();
    }));
  }

  #exit(code: number, oomKilled: boolean, atMs: number): void {
    if (this.#state !== 'running') return;
    this.#state = 'exited';
    this.#chatter?.stop();
    for (const t of this.#timers) t.cancel();
    this.#timers.length = 0;
    this.#deps.onExit({ code, oomKilled, atMs });
  }
}
