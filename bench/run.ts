#!/usr/bin/env node
/**
 * `npm run bench` entry: parse flags, run the suite, write results.json, report.md and the
 * SVG charts into --out (default bench/results/<timestamp>/), exit 1 on any correctness failure.
 * Thin by design: the matrix is bench-config.ts, the order is suite.ts.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { realClock } from '../src/shared/clock/clock.js';
import { BENCH_USAGE, BenchConfigError, parseBenchArgs } from './bench-config.js';
import { buildCharts } from './charts.js';
import { machineInfo } from './machine.js';
import { Progress } from './progress.js';
import { leaseTable } from './report-cluster.js';
import { renderReport, summaryTable } from './report-md.js';
import { memoryTable } from './report-memory.js';
import type { BenchResults } from './results.js';
import { runSuite, totalSteps } from './suite.js';
import { sideBySideTable } from './report-side-by-side.js';
import { probeDensityTable } from './probe-density.js';

async function main(argv: string[]): Promise<number> {
  // Hollow mode has its own session (hollow-bench.ts): nodes, time to Ready/available, lease, RSS per node.
  if (argv.includes('--hollow')) return (await import('./hollow-bench.js')).runHollowBench(argv);
  const startedAt = new Date();
  // The compressed-months soak is its own session (soak.ts), opt-in.
  if (argv.includes('--soak')) return (await import('./soak.js')).soakMain(argv);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(BENCH_USAGE);
    return 0;
  }
  let cfg;
  try {
    cfg = parseBenchArgs(argv, startedAt);
  } catch (err) {
    if (err instanceof BenchConfigError || (err instanceof Error && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`bench: ${err.message}\n${BENCH_USAGE}`);
      return 2;
    }
    throw err;
  }
  await fs.mkdir(cfg.outDir, { recursive: true });
  const t0 = realClock.monotonic();
  const loadAtStart = os.loadavg()[0] ?? 0;
  const progress = new Progress(process.stderr, realClock, totalSteps(cfg));
  progress.log(`bench: ${cfg.profile} profile, ${cfg.sessions.length} sessions, ${cfg.ceilings.length} ceiling sizes (a sim ceiling before each sim session) → ${cfg.outDir}`);
  const outcome = await runSuite(cfg, realClock, progress);
  progress.finish();
  const results: BenchResults = {
    profile: cfg.profile,
    startedAt: startedAt.toISOString(),
    durationS: (realClock.monotonic() - t0) / 1000,
    machine: machineInfo(),
    loadAverage1m: { start: loadAtStart, end: os.loadavg()[0] ?? 0 },
    matrix: { workers: cfg.workers, podCounts: cfg.podCounts, profiles: cfg.simProfiles, churnPodsPerSec: cfg.churnPodsPerSec, slowChurnPodsPerSec: cfg.slowChurnPodsPerSec, steadySeconds: cfg.steadySeconds, churnSeconds: cfg.churnSeconds, agentArgs: cfg.agentArgs, ...(cfg.pin ? { pin: cfg.pin } : {}) },
    ...outcome,
  };
  const charts = buildCharts(results);
  await fs.writeFile(path.join(cfg.outDir, 'results.json'), JSON.stringify(results, null, 2) + '\n');
  for (const c of charts) await fs.writeFile(path.join(cfg.outDir, c.file), c.svg);
  await fs.writeFile(path.join(cfg.outDir, 'report.md'), renderReport(results, charts));
  // The verdict and the summary on the terminal too (a new user never opened report.md).
  if (results.workloads.length > 0) process.stdout.write(`\n${summaryTable(results.workloads)}\n\n`);
  if ((results.cluster ?? []).length > 0) process.stdout.write(`Node lease during the cluster-mode bursts:\n${leaseTable(results.cluster ?? []).join('\n')}\n\n`);
  for (const r of results.sideBySide ?? []) process.stdout.write(`Beside a real kubelet — ${sideBySideTable(r)}\n\n`);
  if ((results.sideBySide ?? []).length > 0) await fs.writeFile(path.join(cfg.outDir, 'side-by-side.md'), (results.sideBySide ?? []).map(sideBySideTable).join('\n\n') + '\n');
  if ((results.probeDensity ?? []).length > 0) {
    const t = probeDensityTable(results.probeDensity ?? []);
    process.stdout.write(`${t}\n\n`);
    await fs.writeFile(path.join(cfg.outDir, 'probe-density.md'), t + '\n');
  }
  const mem = memoryTable(results.workloads);
  if (mem !== null) process.stdout.write(`Memory and relist at each size (agent process; per thread committed/used/external MiB):\n${mem}\n\n`);
  process.stdout.write(`bench: ${results.failures.length === 0 ? 'PASS' : `FAIL (${results.failures.length} correctness failure(s))`}\n`);
  process.stderr.write(`bench: ${results.durationS.toFixed(0)} s; report: ${path.join(cfg.outDir, 'report.md')}\n`);
  for (const s of results.skipped) process.stderr.write(`bench: not run: ${s}\n`);
  if (results.failures.length > 0) {
    process.stderr.write(`\nbench: FAILED — ${results.failures.length} correctness failure(s):\n`);
    for (const f of results.failures) process.stderr.write(`  - ${f}\n`);
    return 1;
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
