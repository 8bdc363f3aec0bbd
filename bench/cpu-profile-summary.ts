#!/usr/bin/env node
/**
 * Summarises the `.cpuprofile` files an agent run under `node --cpu-prof` leaves behind (the
 * bench's `--agent-cpu-prof DIR`: one file per thread): per thread, its role (main, PLEG,
 * pod worker), sampled busy time, and the top functions by self time, summed by function name
 * + script (+ line, so two anonymous functions in one file stay apart).
 *
 *   node dist/bench/cpu-profile-summary.js DIR [--top N] [--from S] [--to S]
 *
 * `--from`/`--to` keep only samples in that window, in seconds since the profile started.
 * Pure core (`summarizeProfile`); the CLI reads files and prints.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** The subset of V8's Profiler.Profile JSON this module reads. */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  /** µs, V8's monotonic clock. */
  startTime: number;
  endTime: number;
  /** Node id of each sample's top frame. */
  samples: number[];
  /** µs since the previous sample (the first: since startTime). */
  timeDeltas: number[];
}

export type ThreadRole = 'main' | 'pleg' | 'pod-worker' | 'other';

export interface FunctionCost {
  fn: string;
  /** Script path, shortened to start at the repo's dist/ (or node:…); '' for V8 pseudo-frames. */
  url: string;
  line: number;
  selfMs: number;
}

export interface ThreadSummary {
  role: ThreadRole;
  /** Busy self time (ms) by code area (see {@link codeArea}), largest first. */
  areas: Array<{ area: string; selfMs: number }>;
  /** Sampled window (ms). */
  wallMs: number;
  /** Self time outside `(idle)` (ms): JS, GC and `(program)` (native work V8 cannot attribute). */
  busyMs: number;
  gcMs: number;
  top: FunctionCost[];
}

/** Pseudo-frames V8 puts in every profile. */
const IDLE = '(idle)';
const GC = '(garbage collector)';

function shortUrl(url: string): string {
  // Packages first: a package's own dist/ folder is not the agent's.
  const nm = url.indexOf('/node_modules/');
  if (nm >= 0) return url.slice(nm + 1);
  const i = url.indexOf('/dist/');
  if (i >= 0) return url.slice(i + 1);
  return url.replace(/^file:\/\//, '');
}

/**
 * The code area a script belongs to, to see where a thread's time goes at a glance: the CRI
 * transport (grpc-js, protobufjs, node's http2/net/streams), agent code by folder
 * (`dist/src/main/<dir>`, `dist/src/shared/<dir>`, `dist/src/<dir>`, `dist/workers/<dir>`), other packages, other node internals, and V8's
 * pseudo-frames (GC, program).
 */
export function codeArea(fn: string, url: string): string {
  if (url === '') return fn === GC ? 'v8: garbage collector' : fn === '(program)' ? 'v8: (program)' : 'native';
  if (/node_modules\/(@grpc\/|protobufjs|@protobufjs|long\/)/.test(url) || /^node:internal\/(http2|net|stream|streams|async_hooks|util$)/.test(url) || url === 'node:async_hooks') return 'CRI transport (grpc-js, protobuf, http2)';
  const dist = /(?:^|\/)dist\/((?:src\/(?:main|shared)|src|workers)\/[^/]+)(?:\/|\.js)/.exec(url);
  if (dist) return `agent ${dist[1]}`;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return `package ${nm[1]}`;
  if (url.startsWith('node:')) return 'node internals (other)';
  return 'other';
}

/** Which thread wrote the profile, from the scripts it ran. */
export function threadRole(p: CpuProfile, fileName: string): ThreadRole {
  const urls = new Set(p.nodes.map((n) => n.callFrame.url));
  const any = (re: RegExp): boolean => [...urls].some((u) => re.test(u));
  if (any(/\/workers\/pleg\/pleg-thread\.js$/)) return 'pleg';
  if (any(/\/workers\/pod-worker-thread\.js$/)) return 'pod-worker';
  // Node names files CPU.<date>.<time>.<pid>.<threadId>.<seq>.cpuprofile; threadId 0 is the main thread.
  if (/^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(fileName)) return 'main';
  return 'other';
}

export function summarizeProfile(p: CpuProfile, role: ThreadRole, opts: { top?: number; fromS?: number; toS?: number } = {}): ThreadSummary {
  const byId = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  const fromUs = (opts.fromS ?? 0) * 1e6;
  const toUs = (opts.toS ?? Number.POSITIVE_INFINITY) * 1e6;
  const self = new Map<string, FunctionCost>();
  const areas = new Map<string, number>();
  let t = 0;
  let wallUs = 0;
  let idleUs = 0;
  let gcUs = 0;
  for (let i = 0; i < p.samples.length; i++) {
    // A sample's delta is the time since the previous sample; attribute it to this sample's frame.
    const d = p.timeDeltas[i] ?? 0;
    t += d;
    if (t < fromUs || t > toUs) continue;
    const cf = byId.get(p.samples[i] ?? -1);
    if (!cf) continue;
    wallUs += d;
    if (cf.functionName === IDLE) {
      idleUs += d;
      continue;
    }
    if (cf.functionName === GC) gcUs += d;
    const url = shortUrl(cf.url);
    const area = codeArea(cf.functionName, url);
    areas.set(area, (areas.get(area) ?? 0) + d / 1000);
    const key = `${cf.functionName}\u0000${url}\u0000${cf.lineNumber}`;
    const e = self.get(key);
    if (e) e.selfMs += d / 1000;
    else self.set(key, { fn: cf.functionName === '' ? '(anonymous)' : cf.functionName, url, line: cf.lineNumber + 1, selfMs: d / 1000 });
  }
  const top = [...self.values()].sort((a, b) => b.selfMs - a.selfMs).slice(0, opts.top ?? 15);
  const byArea = [...areas.entries()].map(([area, selfMs]) => ({ area, selfMs })).sort((a, b) => b.selfMs - a.selfMs);
  return { role, areas: byArea, wallMs: wallUs / 1000, busyMs: (wallUs - idleUs) / 1000, gcMs: gcUs / 1000, top };
}

export function formatSummary(file: string, s: ThreadSummary): string {
  const lines = [`== ${s.role} thread (${file}): busy ${(s.busyMs / 1000).toFixed(2)} s of ${(s.wallMs / 1000).toFixed(2)} s sampled (${((100 * s.busyMs) / Math.max(1, s.wallMs)).toFixed(0)}%), GC ${(s.gcMs / 1000).toFixed(2)} s`];
  lines.push('  by area:');
  for (const a of s.areas.slice(0, 8)) lines.push(`  ${a.selfMs.toFixed(0).padStart(7)} ms  ${((100 * a.selfMs) / Math.max(1, s.busyMs)).toFixed(1).padStart(5)}%  ${a.area}`);
  lines.push('  top functions by self time:');
  for (const f of s.top) {
    const where = f.url === '' ? '' : ` ${f.url}:${f.line}`;
    lines.push(`  ${f.selfMs.toFixed(0).padStart(7)} ms  ${((100 * f.selfMs) / Math.max(1, s.busyMs)).toFixed(1).padStart(5)}%  ${f.fn}${where}`);
  }
  return lines.join('\n');
}

const USAGE = 'usage: cpu-profile-summary DIR [--top N] [--from S] [--to S]\n';

/** A non-negative number option, or an error naming it. */
function numberOption(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number, got "${v}"`);
  return n;
}

function main(argv: string[]): number {
  let dir: string | undefined;
  let opts: { top: number; fromS?: number; toS?: number };
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { top: { type: 'string', default: '15' }, from: { type: 'string' }, to: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    dir = positionals[0];
    const fromS = numberOption('from', values.from);
    const toS = numberOption('to', values.to);
    opts = { top: numberOption('top', values.top) ?? 15, ...(fromS !== undefined ? { fromS } : {}), ...(toS !== undefined ? { toS } : {}) };
  } catch (err) {
    process.stderr.write(`cpu-profile-summary: ${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    return 2;
  }
  if (dir === undefined) {
    process.stderr.write(USAGE);
    return 2;
  }
  let files: string[];
  try {
    files = fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort();
  } catch (err) {
    process.stderr.write(`cpu-profile-summary: cannot read ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}\n`);
    return 1;
  }
  if (files.length === 0) {
    process.stderr.write(`cpu-profile-summary: no .cpuprofile files in ${dir}\n`);
    return 1;
  }
  const summaries: Array<{ f: string; s: ThreadSummary }> = [];
  for (const f of files) {
    let p: CpuProfile;
    try {
      p = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as CpuProfile;
    } catch (err) {
      process.stderr.write(`cpu-profile-summary: ${path.join(dir, f)} is not a readable .cpuprofile: ${err instanceof Error ? err.message : String(err)}\n`);
      return 1;
    }
    summaries.push({ f, s: summarizeProfile(p, threadRole(p, f), opts) });
  }
  const order: readonly ThreadRole[] = ['main', 'pleg', 'pod-worker', 'other'];
  summaries.sort((a, b) => order.indexOf(a.s.role) - order.indexOf(b.s.role) || b.s.busyMs - a.s.busyMs);
  for (const { f, s } of summaries) process.stdout.write(formatSummary(f, s) + '\n\n');
  return 0;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
