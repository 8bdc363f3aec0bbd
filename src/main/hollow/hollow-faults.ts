/**
 * Hollow-node fault steps: what they are, how a script line parses, and when they run.
 *
 * A step is `AT NODE ACTION [ARG]` (one per line; `#` starts a comment):
 *   AT      a Go duration after every node started (`0s`, `30s`, `2m`; at most 24 h);
 *   NODE    a node of this hollow set;
 *   ACTION  lease-stop | lease-resume (the node's lease renewals and node status writes stop /
 *           resume) | runtime-down | runtime-up | crash NAMESPACE/POD.
 * Steps are plain data; HollowFleet.applyFault carries them out, the FaultSchedule times them on
 * the injected clock. The same syntax is accepted live by `POST /faults` (hollow-http.ts), where
 * AT is ignored (the step runs at once).
 */
import type { Clock, TimerHandle } from '../../shared/clock/clock.js';
import { parseDurationMs } from '../../shared/clock/go-duration.js';

export type FaultAction =
  | { kind: 'lease-stop' }
  | { kind: 'lease-resume' }
  | { kind: 'runtime-down' }
  | { kind: 'runtime-up' }
  | { kind: 'crash'; namespace: string; pod: string };

export interface FaultStep {
  atMs: number;
  node: string;
  action: FaultAction;
}

export class FaultScriptError extends Error {
  override readonly name = 'FaultScriptError';
  readonly code = 'ERR_HOLLOW_FAULT';
}

const MAX_AT_MS = 24 * 3600_000;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** One line (already trimmed, not a comment) → a step; `where` names the line in errors. */
function parseStep(line: string, where: string, nodes: ReadonlySet<string>): FaultStep {
  const parts = line.split(/\s+/);
  const [at, node, action, arg, ...rest] = parts;
  if (at === undefined || node === undefined || action === undefined) throw new FaultScriptError(`${where}: want "AT NODE ACTION [ARG]", got ${JSON.stringify(line)}`);
  if (rest.length > 0) throw new FaultScriptError(`${where}: unexpected ${JSON.stringify(rest.join(' '))} after the step`);
  const atMs = parseDurationMs(at);
  if (atMs === undefined) throw new FaultScriptError(`${where}: AT ${JSON.stringify(at.slice(0, 64))} is not a duration (e.g. 30s, 2m)`);
  if (!(atMs >= 0 && atMs <= MAX_AT_MS)) throw new FaultScriptError(`${where}: AT must be within 0s..24h, got ${JSON.stringify(at)}`);
  if (!nodes.has(node)) throw new FaultScriptError(`${where}: node ${JSON.stringify(node.slice(0, 64))} is not one of this process's hollow nodes`);
  const noArg = (): void => {
    if (arg !== undefined) throw new FaultScriptError(`${where}: ${action} takes no argument, got ${JSON.stringify(arg)}`);
  };
  switch (action) {
    case 'lease-stop':
    case 'lease-resume':
    case 'runtime-down':
    case 'runtime-up':
      noArg();
      return { atMs, node, action: { kind: action } };
    case 'crash': {
      const m = arg === undefined ? null : /^([^/]+)\/([^/]+)$/.exec(arg);
      if (!m || !DNS_LABEL.test(m[1] as string) || !DNS_SUBDOMAIN.test(m[2] as string) || (m[2] as string).length > 253) {
        throw new FaultScriptError(`${where}: crash wants NAMESPACE/POD (DNS names), got ${JSON.stringify(arg ?? '')}`);
      }
      return { atMs, node, action: { kind: 'crash', namespace: m[1] as string, pod: m[2] as string } };
    }
    default:
      throw new FaultScriptError(`${where}: unknown action ${JSON.stringify(action.slice(0, 64))} (lease-stop, lease-resume, runtime-down, runtime-up, crash)`);
  }
}

/** Parses a script (lines; blank lines and `#` comments skipped). Throws FaultScriptError naming the line. */
export function parseFaultLines(text: string, origin: string, nodes: ReadonlySet<string>): FaultStep[] {
  const steps: FaultStep[] = [];
  const lines = text.split('\n');
  if (lines.length > 100_000) throw new FaultScriptError(`${origin}: over 100000 lines`);
  lines.forEach((raw, i) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') return;
    steps.push(parseStep(line, `${origin} line ${i + 1}`, nodes));
  });
  return steps;
}

/** Runs each step at its time after `start()`; `close()` cancels what has not run. */
export class FaultSchedule {
  readonly #clock: Clock;
  readonly #steps: readonly FaultStep[];
  readonly #apply: (s: FaultStep) => void;
  readonly #timers: TimerHandle[] = [];

  constructor(deps: { clock: Clock; steps: readonly FaultStep[]; apply: (s: FaultStep) => void }) {
    this.#clock = deps.clock;
    this.#steps = deps.steps;
    this.#apply = deps.apply;
  }

  start(): void {
    for (const s of this.#steps) this.#timers.push(this.#clock.setTimer(s.atMs, () => this.#apply(s)));
  }

  close(): void {
    for (const t of this.#timers) t.cancel();
    this.#timers.length = 0;
  }
}
