/**
 * Live taps on running containers' output, for CRI Attach: a container's process output goes
 * to its log file (sim-logs.ts) and to every tap on that container; its exit ends the taps.
 * Invariant: after `exited(id)` no tap of `id` is called again (they are dropped).
 */
export interface OutputTap {
  output(stream: 'stdout' | 'stderr', text: string): void;
  exited(code: number): void;
}

export class SimOutputTaps {
  readonly #taps = new Map<string, Set<OutputTap>>();

  /** Adds a tap; the returned function removes it (idempotent). */
  add(containerId: string, tap: OutputTap): () => void {
    let set = this.#taps.get(containerId);
    if (set === undefined) this.#taps.set(containerId, (set = new Set()));
    set.add(tap);
    return () => {
      const s = this.#taps.get(containerId);
      s?.delete(tap);
      if (s?.size === 0) this.#taps.delete(containerId);
    };
  }

  output(containerId: string, stream: 'stdout' | 'stderr', text: string): void {
    const set = this.#taps.get(containerId);
    if (set === undefined) return;
    for (const t of [...set]) t.output(stream, text);
  }

  exited(containerId: string, code: number): void {
    const set = this.#taps.get(containerId);
    if (set === undefined) return;
    this.#taps.delete(containerId);
    for (const t of set) t.exited(code);
  }

  /** Taps open now (all containers). */
  get size(): number {
    let n = 0;
    for (const s of this.#taps.values()) n += s.size;
    return n;
  }
}
