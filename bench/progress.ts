/**
 * Live progress on stderr. On a TTY: one line redrawn in place (at most 10 times a second)
 * showing the step, the phase and a bar. Elsewhere (CI logs, pipes): one plain line per step
 * and per phase change, plus a heartbeat at most every 10 s, so logs stay short.
 *
 * `render` is pure (tested); the class only decides when to write.
 */
import type { Clock } from '../src/shared/clock/clock.js';

export interface ProgressSink {
  isTTY?: boolean;
  columns?: number;
  write(s: string): unknown;
}

export interface ProgressState {
  step: number;
  steps: number;
  label: string;
  phase: string;
  done: number;
  total: number;
  elapsedS: number;
}

export function render(s: ProgressState, width = 24): string {
  const frac = s.total > 0 ? Math.min(1, s.done / s.total) : 0;
  const filled = Math.round(frac * width);
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
  return `[${s.step}/${s.steps}] ${s.label} | ${s.phase} ${bar} ${s.done}/${s.total} | ${Math.round(s.elapsedS)}s`;
}

export class Progress {
  readonly #out: ProgressSink;
  readonly #clock: Clock;
  readonly #start: number;
  #state: ProgressState;
  #lastDraw = Number.NEGATIVE_INFINITY;
  #drawn = false;

  constructor(out: ProgressSink, clock: Clock, steps: number) {
    this.#out = out;
    this.#clock = clock;
    this.#start = clock.monotonic();
    this.#state = { step: 0, steps, label: '', phase: '', done: 0, total: 0, elapsedS: 0 };
  }

  get #tty(): boolean {
    return this.#out.isTTY === true;
  }

  /** Starts the next step. */
  step(label: string): void {
    this.#state = { ...this.#state, step: this.#state.step + 1, label, phase: 'starting', done: 0, total: 0 };
    this.#draw(true);
  }

  update(phase: string, done: number, total: number): void {
    const changed = phase !== this.#state.phase;
    this.#state = { ...this.#state, phase, done, total };
    this.#draw(changed);
  }

  /** A permanent line (results, warnings), printed above the live line. */
  log(line: string): void {
    this.#clear();
    this.#out.write(line + '\n');
    if (this.#tty) this.#draw(true);
  }

  /** Clears the live line; call once at the end. */
  finish(): void {
    this.#clear();
  }

  #clear(): void {
    if (this.#tty && this.#drawn) this.#out.write('\r\x1b[2K');
    this.#drawn = false;
  }

  #draw(important: boolean): void {
    const now = this.#clock.monotonic();
    const minGap = this.#tty ? 100 : 10_000;
    if (!important && now - this.#lastDraw < minGap) return;
    if (this.#state.step === 0) return;
    this.#lastDraw = now;
    this.#state.elapsedS = (now - this.#start) / 1000;
    const line = render(this.#state);
    if (this.#tty) {
      const cols = this.#out.columns ?? 120;
      this.#out.write(`\r\x1b[2K${line.slice(0, Math.max(20, cols - 1))}`);
      this.#drawn = true;
    } else {
      this.#out.write(line + '\n');
    }
  }
}
