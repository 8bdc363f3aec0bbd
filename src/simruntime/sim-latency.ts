/**
 * Latency profiles and the runtime CPU model.
 *
 * A profile gives, per CRI method, `baseMs` (time the call takes at concurrency 1), `cpuMs`
 * (the part of it that is CPU work on the node: runc, shims, kernel), and `perItemMs` (extra
 * time per item in the response, for List* calls). The CPU part runs on a {@link CpuModel} of
 * `cores` cores: at most `cores` calls hold CPU at once and the rest queue FIFO, so throughput
 * saturates at cores / Σ cpuMs per pod and concurrency beyond that only adds waiting — the
 * shape measured for containerd on 2 cores (../shared/notes/containerd.md: ~20 pods/s ceiling
 * at c=4–16, 10–25% slower at c=64, 8 pods/s sequential). `contentionPerWaiter` inflates CPU
 * work by that fraction per queued call (capped at `maxContention`) to model the scheduling
 * overhead seen at very high concurrency.
 *
 * A call's latency = (baseMs − cpuMs) waiting (I/O, not queued) + queue wait + cpuMs × contention
 * + perItemMs × items. All waits use the injected Clock. The `zero` profile adds nothing and
 * never touches the clock.
 *
 * Custom profile JSON schema (`--profile FILE.json`), every field optional; unnamed methods
 * fall back to `defaultCall`, then to zero:
 *   {
 *     "name": "my-profile",
 *     "cores": 2,                       // CPU model size (≥ 1)
 *     "contentionPerWaiter": 0.004,     // fraction of cpuMs added per queued call
 *     "maxContention": 0.25,            // cap on that fraction
 *     "defaultCall": { "baseMs": 1 },
 *     "calls": { "RunPodSandbox": { "baseMs": 66, "cpuMs": 50 }, "ListContainers": { "baseMs": 0.5, "perItemMs": 0.01 } }
 *   }
 * Method names are CRI RPC names (`RunPodSandbox`, `ListImages`, ...). `PullImage` is also
 * delayed by the `sim.shardlet.io/pull-delay-ms` annotation, outside the profile.
 */
import type { Clock } from '../shared/clock/clock.js';

export interface CallCost {
  baseMs: number;
  cpuMs: number;
  perItemMs: number;
}

export interface LatencyProfile {
  name: string;
  cores: number;
  contentionPerWaiter: number;
  maxContention: number;
  defaultCall: CallCost;
  calls: Readonly<Record<string, CallCost>>;
}

const ZERO_COST: CallCost = Object.freeze({ baseMs: 0, cpuMs: 0, perItemMs: 0 });

function cost(baseMs: number, cpuMs = 0, perItemMs = 0): CallCost {
  return Object.freeze({ baseMs, cpuMs, perItemMs });
}

export const ZERO_PROFILE: LatencyProfile = Object.freeze({
  name: 'zero',
  cores: 1,
  contentionPerWaiter: 0,
  maxContention: 0,
  defaultCall: ZERO_COST,
  calls: Object.freeze({}),
});

/**
 * containerd 1.6.20 + runc on 2 cores (p50 at c=1 from ../shared/notes/containerd.md).
 * CPU per pod created = 50 + 6 + 44 = 100 ms (→ 20 pods/s on 2 cores); per pod torn down =
 * 40 + 32 + 8 + 12 = 92 ms (→ ~21 pods/s).
 */
export const CONTAINERD_PROFILE: LatencyProfile = Object.freeze({
  name: 'containerd',
  cores: 2,
  contentionPerWaiter: 0.004,
  maxContention: 0.25,
  defaultCall: cost(0.3),
  calls: Object.freeze({
    Version: cost(0.3),
    Status: cost(0.3),
    RunPodSandbox: cost(66, 50),
    StopPodSandbox: cost(42, 32),
    RemovePodSandbox: cost(15, 12),
    PodSandboxStatus: cost(0.5),
    ListPodSandbox: cost(1, 0, 0.01),
    CreateContainer: cost(8, 6),
    StartContainer: cost(57, 44),
    StopContainer: cost(54, 40),
    RemoveContainer: cost(10, 8),
    ListContainers: cost(0.5, 0, 0.01),
    ContainerStatus: cost(0.8),
    ExecSync: cost(24, 15),
    ListContainerStats: cost(2, 0, 0.02),
    ListPodSandboxStats: cost(2, 0, 0.02),
    ListImages: cost(0.5, 0, 0.01),
    ImageStatus: cost(0.5),
    PullImage: cost(500, 100),
    RemoveImage: cost(5, 2),
    ImageFsInfo: cost(0.5),
  }),
});

export class ProfileError extends Error {
  readonly code = 'ERR_SIM_PROFILE';
}

function num(v: unknown, field: string, min: number, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min) throw new ProfileError(`profile field ${field} must be a number ≥ ${min}`);
  return v;
}

function parseCost(v: unknown, field: string): CallCost {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ProfileError(`profile field ${field} must be an object`);
  const o = v as Record<string, unknown>;
  const baseMs = num(o['baseMs'], `${field}.baseMs`, 0, 0);
  const cpuMs = num(o['cpuMs'], `${field}.cpuMs`, 0, 0);
  if (cpuMs > baseMs) throw new ProfileError(`profile field ${field}.cpuMs must not exceed baseMs`);
  return cost(baseMs, cpuMs, num(o['perItemMs'], `${field}.perItemMs`, 0, 0));
}

/** Validates a parsed custom-profile JSON document (schema above). */
export function parseProfile(doc: unknown): LatencyProfile {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ProfileError('profile must be a JSON object');
  const o = doc as Record<string, unknown>;
  const calls: Record<string, CallCost> = {};
  const rawCalls = o['calls'] ?? {};
  if (typeof rawCalls !== 'object' || rawCalls === null || Array.isArray(rawCalls)) throw new ProfileError('profile field calls must be an object');
  for (const [method, c] of Object.entries(rawCalls)) calls[method] = parseCost(c, `calls.${method}`);
  return Object.freeze({
    name: typeof o['name'] === 'string' ? o['name'] : 'custom',
    cores: Math.floor(num(o['cores'], 'cores', 1, 2)),
    contentionPerWaiter: num(o['contentionPerWaiter'], 'contentionPerWaiter', 0, 0),
    maxContention: num(o['maxContention'], 'maxContention', 0, 0),
    defaultCall: o['defaultCall'] === undefined ? ZERO_COST : parseCost(o['defaultCall'], 'defaultCall'),
    calls: Object.freeze(calls),
  });
}

/** FIFO semaphore of `cores` CPUs whose work takes time on the injected clock. */
export class CpuModel {
  readonly #clock: Clock;
  readonly #cores: number;
  #busy = 0;
  readonly #queue: (() => void)[] = [];

  constructor(clock: Clock, cores: number) {
    this.#clock = clock;
    this.#cores = cores;
  }

  /** Calls waiting for a core right now. */
  get waiting(): number {
    return this.#queue.length;
  }

  /** Holds one core for `workMs(waitersAtStart)` ms of clock time. */
  async run(workMs: (waiters: number) => number): Promise<void> {
    if (this.#busy >= this.#cores) await new Promise<void>((resolve) => this.#queue.push(resolve));
    else this.#busy++;
    try {
      const ms = workMs(this.#queue.length);
      if (ms > 0) await this.#clock.sleep(ms);
    } finally {
      // Hand the core straight to the next waiter (busy count unchanged) or free it.
      const next = this.#queue.shift();
      if (next) next();
      else this.#busy--;
    }
  }
}

/** Applies a profile's latency to calls. One per runtime instance. */
export class LatencyModel {
  readonly profile: LatencyProfile;
  readonly #clock: Clock;
  readonly #cpu: CpuModel;

  constructor(clock: Clock, profile: LatencyProfile) {
    this.profile = profile;
    this.#clock = clock;
    this.#cpu = new CpuModel(clock, profile.cores);
  }

  costOf(method: string): CallCost {
    return this.profile.calls[method] ?? this.profile.defaultCall;
  }

  /** True when `method` costs nothing (the call can answer without touching the clock). */
  isFree(method: string, items = 0): boolean {
    const c = this.costOf(method);
    return c.baseMs === 0 && c.cpuMs === 0 && (c.perItemMs === 0 || items === 0);
  }

  /** Waits out the latency of one `method` call whose response has `items` items. */
  async apply(method: string, items = 0): Promise<void> {
    const c = this.costOf(method);
    const waitMs = c.baseMs - c.cpuMs + c.perItemMs * items;
    if (waitMs > 0) await this.#clock.sleep(waitMs);
    if (c.cpuMs > 0) {
      const p = this.profile;
      await this.#cpu.run((waiters) => c.cpuMs * (1 + Math.min(p.maxContention, p.contentionPerWaiter * waiters)));
    }
  }
}
