/**
 * Fault injection for the simulated runtime. Per call, one draw from the injected Random
 * decides the outcome (rates are cumulative, their sum must be ≤ 1):
 *   - `unavailable`: answer UNAVAILABLE before doing anything (what a client sees when the
 *     runtime is restarting or its socket refuses);
 *   - `deadline`: do the operation, then answer DEADLINE_EXCEEDED (the runtime was slow: the
 *     effect happened, the caller cannot know — e.g. a retried RunPodSandbox then meets
 *     "name is reserved", as with containerd);
 *   - `hang`: never answer and do nothing (the client's deadline fires; the server drops the
 *     call when the client cancels or the server shuts down);
 *   - `none`: a normal call.
 * `methods` limits faults to those CRI methods (RPC names); empty means every method except
 * GetContainerEvents (streams are never faulted).
 */
import type { Random } from '../shared/clock/clock.js';

export interface FaultConfig {
  unavailableRate: number;
  deadlineRate: number;
  hangRate: number;
  methods: readonly string[];
}

export type FaultDecision = 'none' | 'unavailable' | 'deadline' | 'hang';

export const NO_FAULTS: FaultConfig = Object.freeze({ unavailableRate: 0, deadlineRate: 0, hangRate: 0, methods: Object.freeze([]) });

export class FaultConfigError extends Error {
  readonly code = 'ERR_SIM_FAULT_CONFIG';
}

export function validateFaults(f: Partial<FaultConfig>): FaultConfig {
  const out: FaultConfig = { ...NO_FAULTS, ...f };
  for (const k of ['unavailableRate', 'deadlineRate', 'hangRate'] as const) {
    const v = out[k];
    if (!Number.isFinite(v) || v < 0 || v > 1) throw new FaultConfigError(`${k} must be within [0, 1], got ${v}`);
  }
  if (out.unavailableRate + out.deadlineRate + out.hangRate > 1) throw new FaultConfigError('fault rates must sum to at most 1');
  return Object.freeze({ ...out, methods: Object.freeze([...out.methods]) });
}

/** Holds the current fault configuration; changeable at runtime through the in-process API. */
export class FaultInjector {
  #config: FaultConfig;
  readonly #random: Random;

  constructor(random: Random, config: Partial<FaultConfig> = {}) {
    this.#random = random;
    this.#config = validateFaults(config);
  }

  get config(): FaultConfig {
    return this.#config;
  }

  set(config: Partial<FaultConfig>): void {
    this.#config = validateFaults(config);
  }

  decide(method: string): FaultDecision {
    const c = this.#config;
    if (c.unavailableRate === 0 && c.deadlineRate === 0 && c.hangRate === 0) return 'none';
    if (c.methods.length > 0 ? !c.methods.includes(method) : method === 'GetContainerEvents') return 'none';
    const r = this.#random();
    if (r < c.unavailableRate) return 'unavailable';
    if (r < c.unavailableRate + c.deadlineRate) return 'deadline';
    if (r < c.unavailableRate + c.deadlineRate + c.hangRate) return 'hang';
    return 'none';
  }
}
