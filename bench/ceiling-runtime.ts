/**
 * Starts the runtime a ceiling run asks for with `--runtime`: a private containerd through the
 * test harness (root only), or the simulated runtime (`shardlet sim-runtime [--profile P]`).
 * Either way the caller gets an endpoint and an idempotent stop().
 */
import { startContainerd } from '../test/harness/containerd-harness.js';
import { startSimRuntime } from '../test/harness/sim-runtime-harness.js';
import type { CeilingRuntimeKind } from './ceiling-cli.js';

export interface CeilingRuntime {
  readonly endpoint: string;
  stop(): Promise<void>;
}

export async function startCeilingRuntime(kind: CeilingRuntimeKind, profile?: string): Promise<CeilingRuntime> {
  switch (kind) {
    case 'containerd':
      return startContainerd();
    case 'sim':
      return startSimRuntime(profile !== undefined ? { profile } : {});
    default: {
      const never: never = kind;
      throw new Error(`unknown runtime ${String(never)}`);
    }
  }
}
