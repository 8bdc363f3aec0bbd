/**
 * Command-line surface of `bench/ceiling.ts`: flags parsed once into frozen, validated options,
 * and the human / JSON renderings of a result.
 *
 *   npm run bench:ceiling -- --endpoint unix:///PATH --pods N --concurrency C
 *                            [--json] [--image IMG] [--host-network]
 *   npm run bench:ceiling -- --runtime containerd|sim [--profile P] --pods N --concurrency C …
 *
 * `--runtime` starts a private runtime for the run (containerd through the test harness, root
 * only; the simulated runtime through `shardlet sim-runtime`) instead of using `--endpoint`.
 */
import { parseArgs } from 'node:util';
import type { CeilingResult } from './ceiling.js';

export const CEILING_DEFAULTS = Object.freeze({
  pods: 50,
  concurrency: 8,
  image: 'docker.io/local/busybox:1',
  hostNetwork: false,
});

export type CeilingRuntimeKind = 'containerd' | 'sim';

export interface CeilingCliOptions {
  readonly endpoint?: string;
  readonly runtime?: CeilingRuntimeKind;
  readonly profile?: string;
  readonly pods: number;
  readonly concurrency: number;
  readonly image: string;
  readonly hostNetwork: boolean;
  readonly json: boolean;
}

export class CeilingUsageError extends Error {
  override readonly name = 'CeilingUsageError';
  readonly code = 'ERR_CEILING_USAGE';
}

export const CEILING_USAGE = `usage: ceiling (--endpoint unix:///PATH | --runtime containerd|sim [--profile P])
               --pods N --concurrency C [--image IMG] [--host-network] [--json]`;

function positiveInt(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new CeilingUsageError(`--${flag} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

export function parseCeilingArgs(argv: readonly string[]): CeilingCliOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      endpoint: { type: 'string' },
      runtime: { type: 'string' },
      profile: { type: 'string' },
      pods: { type: 'string' },
      concurrency: { type: 'string' },
      image: { type: 'string' },
      'host-network': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const runtime = values.runtime;
  if (runtime !== undefined && runtime !== 'containerd' && runtime !== 'sim') throw new CeilingUsageError(`--runtime must be containerd or sim, got ${JSON.stringify(runtime)}`);
  if ((values.endpoint === undefined) === (runtime === undefined)) throw new CeilingUsageError('give exactly one of --endpoint or --runtime');
  if (values.profile !== undefined && runtime !== 'sim') throw new CeilingUsageError('--profile applies to --runtime sim only');
  return Object.freeze({
    ...(values.endpoint !== undefined ? { endpoint: values.endpoint } : {}),
    ...(runtime !== undefined ? { runtime } : {}),
    ...(values.profile !== undefined ? { profile: values.profile } : {}),
    pods: positiveInt('pods', values.pods, CEILING_DEFAULTS.pods),
    concurrency: positiveInt('concurrency', values.concurrency, CEILING_DEFAULTS.concurrency),
    image: values.image ?? CEILING_DEFAULTS.image,
    hostNetwork: values['host-network'] ?? CEILING_DEFAULTS.hostNetwork,
    json: values.json ?? false,
  });
}

const f1 = (n: number): string => n.toFixed(1);

export function formatCeilingResult(r: CeilingResult): string {
  const lines = [
    `raw CRI ceiling: ${r.runtimeName} ${r.runtimeVersion} at ${r.endpoint}`,
    `  pods ${r.pods}, concurrency ${r.concurrency}, ${r.hostNetwork ? 'host' : 'pod'} network, image ${r.image}`,
    `  create:   ${f1(r.podsPerSec)} pods/s (${f1(r.createWallMs)} ms), per pod p50 ${f1(r.p50Ms)} ms, p99 ${f1(r.p99Ms)} ms, max ${f1(r.maxMs)} ms`,
    `  teardown: ${f1(r.teardownPodsPerSec)} pods/s (${f1(r.teardownWallMs)} ms), per pod p50 ${f1(r.teardownP50Ms)} ms, p99 ${f1(r.teardownP99Ms)} ms`,
    `  client CPU: ${r.clientCpuMsPerPod.toFixed(2)} ms/pod create, ${r.teardownClientCpuMsPerPod.toFixed(2)} ms/pod teardown`,
  ];
  if (r.errors > 0) lines.push(`  ERRORS: ${r.errors} pods failed; first: ${r.firstError ?? '?'}`);
  return lines.join('\n');
}
