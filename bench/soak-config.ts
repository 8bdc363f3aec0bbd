/**
 * The compressed-months soak's settings (`npm run bench -- --soak [flags]`), validated once.
 * Defaults are the full size: 1,000 running pods and 50,000 pod lifecycles in 30
 * minutes; the flags scale it down for a loaded machine.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { intFlag } from './int-flag.js';

export interface SoakConfig {
  /** Long-running pods (sleep), kept throughout. */
  pods: number;
  /** Pod lifecycles (create → crash loop / completion / running → delete) during the churn. */
  lifecycles: number;
  /** Length of the churn, minutes. */
  minutes: number;
  /** How long one churn pod lives before its manifest is deleted, seconds. */
  lifetimeSeconds: number;
  /** A new churn image tag every this many lifecycles (image GC has something to collect). */
  lifecyclesPerImage: number;
  workers: number;
  /** Seconds between samples. */
  sampleSeconds: number;
  /** Bound on the wait, after the churn, for the runtime to be back at its start (GC passes). */
  settleSeconds: number;
  outDir: string;
}

export const SOAK_USAGE = `npm run bench -- --soak [--soak-pods N] [--soak-lifecycles N] [--soak-minutes M]
       [--soak-lifetime-seconds S] [--soak-lifecycles-per-image N] [--soak-workers W]
       [--soak-sample-seconds S] [--soak-settle-seconds S] [--out DIR]
  The compressed-months soak on the simulated runtime (default: 1000 pods, 50000 lifecycles, 30 min).
`;

export function parseSoakArgs(argv: readonly string[], startedAt: Date): SoakConfig {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      soak: { type: 'boolean' },
      'soak-pods': { type: 'string' },
      'soak-lifecycles': { type: 'string' },
      'soak-minutes': { type: 'string' },
      'soak-lifetime-seconds': { type: 'string' },
      'soak-lifecycles-per-image': { type: 'string' },
      'soak-workers': { type: 'string' },
      'soak-sample-seconds': { type: 'string' },
      'soak-settle-seconds': { type: 'string' },
      out: { type: 'string' },
    },
  });
  const v = values as Record<string, string | undefined>;
  return {
    pods: intFlag(v['soak-pods'], 'soak-pods', 1000, 0, 5000, SOAK_USAGE),
    lifecycles: intFlag(v['soak-lifecycles'], 'soak-lifecycles', 50_000, 1, 1_000_000, SOAK_USAGE),
    minutes: intFlag(v['soak-minutes'], 'soak-minutes', 30, 1, 24 * 60, SOAK_USAGE),
    lifetimeSeconds: intFlag(v['soak-lifetime-seconds'], 'soak-lifetime-seconds', 25, 1, 3600, SOAK_USAGE),
    lifecyclesPerImage: intFlag(v['soak-lifecycles-per-image'], 'soak-lifecycles-per-image', 250, 1, 1_000_000, SOAK_USAGE),
    workers: intFlag(v['soak-workers'], 'soak-workers', 2, 0, 64, SOAK_USAGE),
    sampleSeconds: intFlag(v['soak-sample-seconds'], 'soak-sample-seconds', 10, 1, 600, SOAK_USAGE),
    settleSeconds: intFlag(v['soak-settle-seconds'], 'soak-settle-seconds', 240, 10, 3600, SOAK_USAGE),
    outDir: v['out'] ?? path.join('bench', 'results', `soak-${startedAt.toISOString().replace(/[:.]/g, '-')}`),
  };
}
