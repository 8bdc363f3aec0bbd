/**
 * What the hollow-mode e2e tests and the hollow bench share: a `shardlet hollow` process (the
 * real CLI, dist/src/cli/main.js) with its stderr kept, its metrics/fault endpoint on a port
 * chosen here, bounded waits for it to serve and to exit, and readers of the cluster's Nodes and
 * of the node-labelled exposition.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ControlPlane } from './apiserver-harness.js';
import { pollUntil, within } from './poll.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/cli/main.js');

/** A free loopback port (bound and released: another process may take it meanwhile, rarely). */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

export interface HollowProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly rootDir: string;
  stderr(): string;
  metrics(): Promise<string>;
  /** POST /faults; resolves with status and body. */
  faults(script: string): Promise<{ status: number; body: string }>;
  /** SIGTERM, then the exit code (bounded). */
  stop(timeoutMs?: number): Promise<number | null>;
}

/** Runs `shardlet hollow ARGS` expecting it to exit by itself (bad input); bounded. */
export async function runHollowToExit(args: readonly string[], timeoutMs = 60_000): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, 'hollow', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await within(new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c))), `shardlet hollow ${args.join(' ')} to exit`, timeoutMs).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  return { code, stderr };
}

/** Starts `shardlet hollow` on a fresh root dir and metrics port; resolves once /healthz answers. */
export async function startHollow(args: readonly string[], opts: { rootDir: string; stderrFile?: string }): Promise<HollowProcess> {
  const port = await freePort();
  fs.mkdirSync(opts.rootDir, { recursive: true });
  const child = spawn(process.execPath, [CLI, 'hollow', '--root-dir', opts.rootDir, '--metrics-port', String(port), ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const file = opts.stderrFile !== undefined ? fs.openSync(opts.stderrFile, 'a') : undefined;
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    // Keep the head (errors at start) and the tail bounded; everything to the file when given.
    stderr = stderr.length > 4 << 20 ? stderr.slice(0, 1 << 20) + stderr.slice(-(1 << 20)) + d : stderr + d;
    if (file !== undefined) fs.writeSync(file, d);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  const base = `http://127.0.0.1:${port}`;
  const p: HollowProcess = {
    child,
    port,
    rootDir: opts.rootDir,
    stderr: () => stderr,
    metrics: async () => {
      const r = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(60_000) });
      if (r.status !== 200) throw new Error(`GET /metrics: ${r.status}`);
      return r.text();
    },
    faults: async (script) => {
      const r = await fetch(`${base}/faults`, { method: 'POST', body: script, signal: AbortSignal.timeout(30_000) });
      return { status: r.status, body: await r.text() };
    },
    stop: async (timeoutMs = 60_000) => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      try {
        return await within(exited, 'shardlet hollow to stop', timeoutMs);
      } catch (err) {
        child.kill('SIGKILL');
        throw err;
      } finally {
        if (file !== undefined) fs.closeSync(file);
      }
    },
  };
  try {
    await pollUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`shardlet hollow exited (${child.exitCode}): ${stderr.slice(-2000)}`);
        const r = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5_000) });
        return r.status === 200 ? true : undefined;
      },
      { what: 'shardlet hollow to serve /healthz', timeoutMs: 120_000, intervalMs: 250 },
    );
  } catch (err) {
    await p.stop().catch(() => undefined);
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${stderr.slice(-3000)}`);
  }
  return p;
}

export interface NodeView {
  name: string;
  ready: string;
  readyReason: string;
}

/** The cluster's Nodes with a name starting with `prefix`, and their Ready condition. */
export async function hollowNodes(cp: ControlPlane, prefix: string): Promise<NodeView[]> {
  const r = await cp.kubectl(['get', 'nodes', '-o', 'json'], { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`kubectl get nodes: ${r.stderr}`);
  const list = JSON.parse(r.stdout) as { items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string; reason?: string }[] } }[] };
  return list.items
    .filter((n) => n.metadata.name.startsWith(prefix))
    .map((n) => {
      const c = n.status?.conditions?.find((x) => x.type === 'Ready');
      return { name: n.metadata.name, ready: c?.status ?? '', readyReason: c?.reason ?? '' };
    });
}

/** Sum of the samples of `name` whose labels include every `labels` pair (Prometheus text). */
export function metricSum(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const ls = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => ls.includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}
