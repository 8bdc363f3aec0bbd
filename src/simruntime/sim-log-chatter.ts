/**
 * Log volume for simulated workloads (annotation `sim.shardlet.io/log-lines-per-second`, with
 * `log-line-bytes`, default 100): while the process runs, it writes numbered stdout lines at that
 * rate — `chatter <seq> xxxx…`, each `lineBytes` long with its newline — on a 100 ms tick of the
 * injected clock, catching up on what the elapsed time owes (so a slow tick never lowers the
 * rate). Sequence numbers start at 1 and never repeat within one process, so a reader can tell
 * exactly which lines it got. Rate and size are clamped (hostile annotations): at most
 * MAX_LINES_PER_SECOND lines/s, line size within [MIN_LINE_BYTES, MAX_LINE_BYTES].
 */
import type { Clock, TimerHandle } from '../shared/clock/clock.js';

export const CHATTER_TICK_MS = 100;
export const MAX_LINES_PER_SECOND = 20_000;
export const MIN_LINE_BYTES = 24;
export const MAX_LINE_BYTES = 16 * 1024;
/** Bound on one tick's catch-up (a clock jump must not write a huge burst at once). */
const MAX_LINES_PER_TICK = 5_000;

export interface ChatterSpec {
  linesPerSecond: number;
  lineBytes: number;
}

export function clampChatter(linesPerSecond: number, lineBytes: number | undefined): ChatterSpec | undefined {
  if (!(linesPerSecond > 0)) return undefined;
  const bytes = Math.floor(lineBytes ?? 100);
  return {
    linesPerSecond: Math.min(MAX_LINES_PER_SECOND, linesPerSecond),
    lineBytes: Math.min(MAX_LINE_BYTES, Math.max(MIN_LINE_BYTES, Number.isFinite(bytes) ? bytes : 100)),
  };
}

/** The text of line `seq` (newline included), exactly `lineBytes` bytes. */
export function chatterLine(seq: number, lineBytes: number): string {
  const head = `chatter ${seq} `;
  return head + 'x'.repeat(Math.max(0, lineBytes - head.length - 1)) + '\n';
}

export class Chatter {
  readonly #clock: Clock;
  readonly #spec: ChatterSpec;
  readonly #startMs: number;
  readonly #emit: (text: string, atMs: number) => void;
  #written = 0;
  #timer: TimerHandle | undefined;

  constructor(o: { clock: Clock; spec: ChatterSpec; emit: (text: string, atMs: number) => void }) {
    this.#clock = o.clock;
    this.#spec = o.spec;
    this.#emit = o.emit;
    this.#startMs = o.clock.monotonic();
    this.#arm();
  }

  #arm(): void {
    this.#timer = this.#clock.setTimer(CHATTER_TICK_MS, () => {
      this.#tick();
      if (this.#timer !== undefined) this.#arm();
    });
  }

  #tick(): void {
    const owed = Math.floor(((this.#clock.monotonic() - this.#startMs) / 1000) * this.#spec.linesPerSecond) - this.#written;
    const n = Math.min(owed, MAX_LINES_PER_TICK);
    if (n <= 0) return;
    let text = '';
    for (let i = 0; i < n; i++) text += chatterLine(this.#written + i + 1, this.#spec.lineBytes);
    // Lines the tick could not write are dropped, not owed forever.
    this.#written += owed;
    this.#emit(text, this.#clock.now());
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }
}
