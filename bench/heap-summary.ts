#!/usr/bin/env node
/**
 * `node dist/bench/heap-summary.js A.heapsnapshot [B.heapsnapshot --pods-a N --pods-b M] [--top K]`
 *
 * Self size of a V8 heap snapshot aggregated by what a node is: its constructor name for
 * objects, closures and native objects, `(string)`, `(array)`, `(code)`… for the rest. With two
 * snapshots of the same thread at two pod counts, the difference per constructor divided by the
 * difference in pods is what one pod costs on that thread, by constructor (self sizes: the sum
 * over constructors is the heap growth, nothing is counted twice).
 *
 * Snapshots come from the agent's SIGUSR2 diagnostic (src/cli/heap-snapshots.ts) or any
 * `v8.writeHeapSnapshot()`. The parsing (summarizeHeapSnapshot) is pure and tested.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';

/** The parts of the .heapsnapshot JSON this reads (V8's documented format). */
export interface HeapSnapshotJson {
  snapshot: { meta: { node_fields: string[]; node_types: unknown[] }; node_count?: number };
  nodes: number[];
  strings: string[];
}

export interface HeapGroup {
  name: string;
  count: number;
  selfBytes: number;
}

export class HeapSummaryError extends Error {
  readonly code = 'ERR_HEAP_SUMMARY';
}

/** Node types whose name is a constructor (grouped by it); the rest group by type. */
const NAMED_TYPES: ReadonlySet<string> = new Set(['object', 'closure', 'native']);

/** Groups by kind, largest self size first. */
export function summarizeHeapSnapshot(s: HeapSnapshotJson): { totalBytes: number; nodes: number; groups: HeapGroup[] } {
  const f = s.snapshot.meta.node_fields;
  const width = f.length;
  const iType = f.indexOf('type');
  const iName = f.indexOf('name');
  const iSize = f.indexOf('self_size');
  const types = s.snapshot.meta.node_types[iType];
  if (width === 0 || iType < 0 || iName < 0 || iSize < 0 || !Array.isArray(types)) throw new HeapSummaryError('not a V8 heap snapshot (node_fields lacks type/name/self_size)');
  if (s.nodes.length % width !== 0) throw new HeapSummaryError(`nodes length ${s.nodes.length} is not a multiple of ${width} fields`);
  const groups = new Map<string, HeapGroup>();
  let total = 0;
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = String(types[s.nodes[i + iType] ?? -1] ?? 'unknown');
    const size = s.nodes[i + iSize] ?? 0;
    const name = NAMED_TYPES.has(type) ? (s.strings[s.nodes[i + iName] ?? -1] ?? '?') : `(${type})`;
    // Closures by their function name would split one kind of callback into many: keep them apart from objects.
    const key = type === 'closure' ? `${name}()` : name;
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = { name: key, count: 0, selfBytes: 0 }));
    g.count++;
    g.selfBytes += size;
    total += size;
  }
  return { totalBytes: total, nodes: s.nodes.length / width, groups: [...groups.values()].sort((a, b) => b.selfBytes - a.selfBytes) };
}

export interface HeapDelta {
  name: string;
  countDelta: number;
  bytesDelta: number;
}

/** B − A per group, largest growth first. */
export function diffHeapGroups(a: readonly HeapGroup[], b: readonly HeapGroup[]): HeapDelta[] {
  const m = new Map<string, HeapDelta>();
  for (const g of b) m.set(g.name, { name: g.name, countDelta: g.count, bytesDelta: g.selfBytes });
  for (const g of a) {
    const d = m.get(g.name) ?? { name: g.name, countDelta: 0, bytesDelta: 0 };
    d.countDelta -= g.count;
    d.bytesDelta -= g.selfBytes;
    m.set(g.name, d);
  }
  return [...m.values()].sort((x, y) => y.bytesDelta - x.bytesDelta);
}

function load(file: string): HeapSnapshotJson {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as HeapSnapshotJson;
}

const USAGE = `usage: node dist/bench/heap-summary.js A.heapsnapshot [B.heapsnapshot --pods-a N --pods-b M] [--top K]
  one snapshot: self size by constructor/type, largest first
  two snapshots of one thread at N and M pods: growth per constructor, and per pod
`;

function main(argv: string[]): number {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { top: { type: 'string', default: '25' }, 'pods-a': { type: 'string' }, 'pods-b': { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help || positionals.length === 0 || positionals.length > 2) {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  const top = Math.max(1, Number(values.top) || 25);
  const kib = (n: number): string => (n / 1024).toFixed(1).padStart(10);
  const [fa, fb] = positionals as [string, string | undefined];
  const a = summarizeHeapSnapshot(load(fa));
  if (fb === undefined) {
    process.stdout.write(`${fa}: ${a.nodes} nodes, self sizes ${(a.totalBytes / 1048576).toFixed(1)} MiB\n${'KiB'.padStart(10)} ${'count'.padStart(9)}  name\n`);
    for (const g of a.groups.slice(0, top)) process.stdout.write(`${kib(g.selfBytes)} ${String(g.count).padStart(9)}  ${g.name}\n`);
    return 0;
  }
  const b = summarizeHeapSnapshot(load(fb));
  const pods = Number(values['pods-b'] ?? NaN) - Number(values['pods-a'] ?? NaN);
  const per = Number.isFinite(pods) && pods !== 0 ? pods : null;
  process.stdout.write(`${fa} → ${fb}: ${((b.totalBytes - a.totalBytes) / 1048576).toFixed(1)} MiB${per !== null ? `, ${((b.totalBytes - a.totalBytes) / per).toFixed(0)} bytes per pod over ${per} pods` : ''}\n`);
  process.stdout.write(`${'ΔKiB'.padStart(10)} ${'Δcount'.padStart(9)} ${per !== null ? 'B/pod'.padStart(8) + ' ' + 'n/pod'.padStart(6) : ''}  name\n`);
  for (const d of diffHeapGroups(a.groups, b.groups).slice(0, top)) {
    const perPod = per !== null ? `${(d.bytesDelta / per).toFixed(0).padStart(8)} ${(d.countDelta / per).toFixed(2).padStart(6)}` : '';
    process.stdout.write(`${kib(d.bytesDelta)} ${String(d.countDelta).padStart(9)} ${perPod}  ${d.name}\n`);
  }
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${fs.realpathSync(process.argv[1])}`).href) process.exitCode = main(process.argv.slice(2));
