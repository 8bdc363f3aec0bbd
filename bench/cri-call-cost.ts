/**
 * CPU per CRI call of the client process, on the simulated runtime (`--profile zero`): the
 * agent's CriClient on its three transports ('grpc-js': the channel driven directly; 'h2': its own
 * HTTP/2 transport; 'node-http2': node:http2 with gRPC framing) against grpc-js's generic stub (Client.makeUnaryRequest, what CriClient
 * used before either), alternated in one process so load drifts hit all. The runtime runs in its own process; only this process's CPU (process.cpuUsage) counts.
 *
 *   node dist/bench/cri-call-cost.js [--calls N] [--rounds R] [--concurrency C]
 *
 * Prints one line per variant and round, then each variant's best round (the least disturbed
 * by other load on the machine). Compare variants of one run, not runs.
 */
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { CriClient } from '../src/shared/cri/cri-client.js';
import { loadCriProto } from '../src/shared/cri/cri-proto.js';
import { startSimRuntime } from '../test/harness/sim-runtime-harness.js';
import { intFlag } from './int-flag.js';

const USAGE = `usage: node dist/bench/cri-call-cost.js [--calls N] [--rounds R] [--concurrency C]
  --calls N        calls per variant and round (default 4000, 100–1000000)
  --rounds R       alternations of the variants (default 4, 1–50)
  --concurrency C  calls in flight (default 32, 1–1024)`;

interface Options {
  readonly calls: number;
  readonly rounds: number;
  readonly concurrency: number;
}

function parse(argv: string[]): Options | undefined {
  const { values } = parseArgs({ args: argv, options: { calls: { type: 'string' }, rounds: { type: 'string' }, concurrency: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help === true) return undefined;
  return Object.freeze({
    calls: intFlag(values.calls, 'calls', 4000, 100, 1_000_000, USAGE),
    rounds: intFlag(values.rounds, 'rounds', 4, 1, 50, USAGE),
    concurrency: intFlag(values.concurrency, 'concurrency', 32, 1, 1024, USAGE),
  });
}

/** Runs `call` `n` times with `concurrency` in flight; returns this process's CPU µs per call. */
async function cpuPerCall(call: () => Promise<unknown>, n: number, concurrency: number): Promise<number> {
  let started = 0;
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (started < n) {
      started++;
      await call();
    }
  }));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

async function main(): Promise<void> {
  const opts = parse(process.argv.slice(2));
  if (opts === undefined) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  const sim = await startSimRuntime({ profile: 'zero' });
  const client = new CriClient({ endpoint: sim.endpoint, transport: 'grpc-js' });
  const h2 = new CriClient({ endpoint: sim.endpoint, transport: 'h2' });
  const nodeHttp2 = new CriClient({ endpoint: sim.endpoint, transport: 'node-http2' });
  const proto = loadCriProto();
  const stub = new proto.RuntimeServiceClient(sim.endpoint, grpc.credentials.createInsecure(), { 'grpc.default_authority': 'localhost' });
  const stubVersion = (): Promise<unknown> => new Promise((resolve, reject) => {
    (stub as unknown as Record<string, (req: unknown, md: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r: unknown) => void) => void>)['Version']!
      .call(stub, { version: 'v1' }, new grpc.Metadata(), { deadline: new Date(Date.now() + 120_000) }, (err, res) => (err ? reject(err) : resolve(res)));
  });
  const variants: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
    ['grpc-js generic stub (makeUnaryRequest)', stubVersion],
    ['CriClient grpc-js (channel.createCall)', () => client.version()],
    ['CriClient h2 (own HTTP/2 transport)', () => h2.version()],
    ['CriClient node-http2 (node:http2)', () => nodeHttp2.version()],
  ];
  const best = new Map<string, number>();
  try {
    await client.waitForReady(10_000);
    await h2.waitForReady(10_000);
    await nodeHttp2.waitForReady(10_000);
    // Warm-up: connections, code paths.
    for (const [, call] of variants) await cpuPerCall(call, 500, opts.concurrency);
    for (let r = 1; r <= opts.rounds; r++) {
      for (const [name, call] of variants) {
        const us = await cpuPerCall(call, opts.calls, opts.concurrency);
        best.set(name, Math.min(best.get(name) ?? Infinity, us));
        process.stdout.write(`round ${r}  ${name.padEnd(42)} ${us.toFixed(1)} µs CPU/call\n`);
      }
    }
    process.stdout.write('best round (Version, this process only):\n');
    for (const [name, us] of best) process.stdout.write(`  ${name.padEnd(42)} ${us.toFixed(1)} µs CPU/call\n`);
  } finally {
    client.close();
    h2.close();
    nodeHttp2.close();
    stub.close();
    await sim.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`cri-call-cost: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
