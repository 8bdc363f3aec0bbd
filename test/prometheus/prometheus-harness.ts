/**
 * A real Prometheus for tests: Debian's `prometheus` package on loopback, its own temp storage
 * and a scrape config for the given targets (scrape_interval 1s). Point it at any /metrics
 * endpoint — the test server here, or a real agent process:
 *
 *   const prom = await startPrometheus({ targets: ['127.0.0.1:10255'] });
 *   await prom.waitForTargetsUp();
 *   const v = await prom.query('kubelet_running_pods');
 *   await prom.stop();
 *
 * Waiting is polling Prometheus's HTTP API with a bounded deadline (an external process has no
 * event to wait on); nothing sleeps a fixed time.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

export const PROMETHEUS_BIN = '/usr/bin/prometheus';
export const PROMTOOL_BIN = '/usr/bin/promtool';

/** Installs Debian's prometheus (which brings promtool) when missing. Idempotent; needs root. */
export function ensurePrometheusInstalled(): void {
  if (fs.existsSync(PROMETHEUS_BIN) && fs.existsSync(PROMTOOL_BIN)) return;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'prometheus'], { stdio: 'inherit', env });
  if (r.status !== 0) {
    spawnSync('apt-get', ['update'], { stdio: 'inherit', env });
    r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'prometheus'], { stdio: 'inherit', env });
  }
  if (r.status !== 0 || !fs.existsSync(PROMETHEUS_BIN)) throw new Error('apt-get install prometheus failed (root and the Debian mirror are needed)');
}

export interface PromSample { metric: Record<string, string>; value: [number, string] }
export interface PromTarget { scrapeUrl: string; health: 'up' | 'down' | 'unknown'; lastError: string }

export interface PrometheusHandle {
  readonly url: string;
  /** Instant query; the result vector (throws on an API error). */
  query(q: string): Promise<PromSample[]>;
  targets(): Promise<PromTarget[]>;
  /** Resolves once every target is "up"; rejects with the targets' last errors at the deadline. */
  waitForTargetsUp(deadlineMs?: number): Promise<void>;
  /** Polls `q` until `accept` holds for its result; returns that result. */
  waitForQuery(q: string, accept: (r: PromSample[]) => boolean, deadlineMs?: number): Promise<PromSample[]>;
  /** SIGTERM by PID (SIGKILL after 10 s) and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

export interface StartPrometheusOptions {
  targets: readonly string[];
  metricsPath?: string;
  scrapeIntervalSec?: number;
  readyDeadlineMs?: number;
}

export async function startPrometheus(opts: StartPrometheusOptions): Promise<PrometheusHandle> {
  ensurePrometheusInstalled();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-prom-'));
  const interval = `${opts.scrapeIntervalSec ?? 1}s`;
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), [
    'global:',
    `  scrape_interval: ${interval}`,
    `  scrape_timeout: ${interval}`,
    'scrape_configs:',
    '  - job_name: shardlet',
    `    metrics_path: ${opts.metricsPath ?? '/metrics'}`,
    '    static_configs:',
    `      - targets: [${opts.targets.map((t) => JSON.stringify(t)).join(', ')}]`,
    '',
  ].join('\n'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const logPath = path.join(dir, 'prometheus.log');
  const log = fs.openSync(logPath, 'w');
  const child: ChildProcess = spawn(PROMETHEUS_BIN, [
    `--config.file=${path.join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--log.level=warn',
  ], { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  let exited = false;
  const exitPromise = new Promise<void>((resolve) => child.once('exit', () => { exited = true; resolve(); }));

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      if (!exited && child.pid !== undefined) {
        process.kill(child.pid, 'SIGTERM');
        const killed = await Promise.race([exitPromise.then(() => true), delay(10_000).then(() => false)]);
        if (!killed && !exited) process.kill(child.pid, 'SIGKILL');
        await exitPromise;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    })();
    return stopped;
  };

  const api = async <T>(p: string): Promise<T> => {
    const res = await fetch(`${url}${p}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${p}: ${body.error ?? res.status}`);
    return body.data;
  };
  const handle: PrometheusHandle = {
    url,
    query: async (q) => (await api<{ resultType: string; result: PromSample[] }>(`/api/v1/query?query=${encodeURIComponent(q)}`)).result,
    targets: async () => (await api<{ activeTargets: PromTarget[] }>('/api/v1/targets')).activeTargets,
    async waitForTargetsUp(deadlineMs = 30_000) {
      let last: PromTarget[] = [];
      const ok = await poll(deadlineMs, async () => {
        last = await handle.targets();
        return last.length === opts.targets.length && last.every((t) => t.health === 'up');
      });
      if (!ok) throw new Error(`targets not up: ${JSON.stringify(last.map((t) => [t.scrapeUrl, t.health, t.lastError]))}`);
    },
    async waitForQuery(q, accept, deadlineMs = 30_000) {
      let last: PromSample[] = [];
      const ok = await poll(deadlineMs, async () => accept((last = await handle.query(q))));
      if (!ok) throw new Error(`query ${q} never matched; last result ${JSON.stringify(last)}`);
      return last;
    },
    stop,
  };
  try {
    const ready = await poll(opts.readyDeadlineMs ?? 60_000, async () => {
      if (exited) throw new Error(`prometheus exited early: ${fs.readFileSync(logPath, 'utf8').slice(-2000)}`);
      const res = await fetch(`${url}/-/ready`).catch(() => undefined);
      return res?.status === 200;
    });
    if (!ready) throw new Error(`prometheus not ready at ${url}: ${fs.readFileSync(logPath, 'utf8').slice(-2000)}`);
  } catch (err) {
    await stop();
    throw err;
  }
  return handle;
}

/** `promtool check metrics` over an exposition on stdin: the problem lines (empty when clean). */
export function promtoolCheckMetrics(exposition: string): { status: number; problems: string[] } {
  ensurePrometheusInstalled();
  const r = spawnSync(PROMTOOL_BIN, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  const problems = `${r.stdout}${r.stderr}`.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  return { status: r.status ?? -1, problems };
}

/** Polls `check` every 200 ms until it returns true or the deadline passes (an external process). */
async function poll(deadlineMs: number, check: () => Promise<boolean>): Promise<boolean> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    if (await check().catch((e: unknown) => { if (e instanceof Error && e.message.startsWith('prometheus exited')) throw e; return false; })) return true;
    if (Date.now() >= end) return false;
    await delay(200);
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
