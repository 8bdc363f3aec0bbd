/**
 * The two daemons of a harness control plane: where each instance keeps its files, the command
 * lines (flags from ../shared/notes/apiserver.md), starting a daemon with its output in a log
 * file, and waiting for readiness or exit — each wait bounded.
 *
 * Every command line carries the instance's temp dir (etcd's --data-dir, the apiserver's
 * certificate paths): that is how a later run finds the processes a killed run left behind
 * (`findProcesses(exe, tmpDir)`), never by program name alone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Pki } from './apiserver-credentials.js';
import { httpGet, type ClientTls } from './apiserver-http.js';
import { pollUntil } from './poll.js';

/** Files and ports of one instance. Ports come from its owned slot (apiserver-harness.ts). */
export interface ControlPlaneLayout {
  readonly tmpDir: string;
  readonly etcdDataDir: string;
  readonly etcdLogPath: string;
  readonly apiserverLogPath: string;
  readonly pkiDir: string;
  readonly tokenFile: string;
  readonly etcdClientPort: number;
  readonly etcdPeerPort: number;
  readonly apiserverPort: number;
}

export function controlPlaneLayout(tmpDir: string, ports: { etcdClient: number; etcdPeer: number; apiserver: number }): ControlPlaneLayout {
  return {
    tmpDir,
    etcdDataDir: path.join(tmpDir, 'etcd'),
    etcdLogPath: path.join(tmpDir, 'etcd.log'),
    apiserverLogPath: path.join(tmpDir, 'apiserver.log'),
    pkiDir: path.join(tmpDir, 'pki'),
    tokenFile: path.join(tmpDir, 'pki', 'tokens.csv'),
    etcdClientPort: ports.etcdClient,
    etcdPeerPort: ports.etcdPeer,
    apiserverPort: ports.apiserver,
  };
}

export function etcdEndpoint(l: ControlPlaneLayout): string {
  return `http://127.0.0.1:${l.etcdClientPort}`;
}

export function etcdArgs(l: ControlPlaneLayout): string[] {
  const client = etcdEndpoint(l);
  const peer = `http://127.0.0.1:${l.etcdPeerPort}`;
  return [
    '--name', 'harness',
    '--data-dir', l.etcdDataDir,
    '--listen-client-urls', client,
    '--advertise-client-urls', client,
    '--listen-peer-urls', peer,
    '--initial-advertise-peer-urls', peer,
    '--initial-cluster', `harness=${peer}`,
    '--initial-cluster-state', 'new',
    '--logger', 'zap',
    '--log-outputs', 'stderr',
    '--log-level', 'warn',
  ];
}

export interface ApiserverFlags {
  /** `--watch-cache` (the apiserver's default: true). */
  readonly watchCache: boolean;
  readonly extraArgs: readonly string[];
}

export function apiserverArgs(l: ControlPlaneLayout, pki: Pki, flags: ApiserverFlags): string[] {
  return [
    `--etcd-servers=${etcdEndpoint(l)}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${l.apiserverPort}`,
    '--advertise-address=127.0.0.1',
    '--endpoint-reconciler-type=none',
    '--service-cluster-ip-range=10.0.0.0/24',
    `--tls-cert-file=${pki.serving.certFile}`,
    `--tls-private-key-file=${pki.serving.keyFile}`,
    `--client-ca-file=${pki.caFile}`,
    `--token-auth-file=${l.tokenFile}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${pki.saPubFile}`,
    `--service-account-signing-key-file=${pki.saKeyFile}`,
    '--authorization-mode=Node,RBAC',
    '--enable-admission-plugins=NodeRestriction',
    '--allow-privileged=true',
    '--feature-gates=BoundServiceAccountTokenVolume=true,EphemeralContainers=true',
    `--watch-cache=${flags.watchCache}`,
    ...flags.extraArgs,
  ];
}

/** A daemon started by the harness: its child and a promise settled when it has exited. */
export interface Daemon {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
}

export function hasExited(d: Daemon): boolean {
  return d.child.exitCode !== null || d.child.signalCode !== null;
}

/** Starts `bin args` with stdout and stderr appended to `logPath`. */
export function spawnDaemon(bin: string, args: readonly string[], logPath: string): Daemon {
  const logFd = fs.openSync(logPath, 'a');
  try {
    const child = spawn(bin, args, { stdio: ['ignore', logFd, logFd] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.once('error', () => undefined); // a failed spawn shows up as "exited before ready"
    return { child, exited };
  } finally {
    fs.closeSync(logFd);
  }
}

/** True once the daemon has exited, false if `ms` passed first. */
export async function waitExit(d: Daemon, ms: number): Promise<boolean> {
  if (hasExited(d)) return true;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const done = await Promise.race([d.exited.then(() => true as const), timeout]);
  clearTimeout(timer);
  return done;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited (bounded). */
export async function stopDaemon(d: Daemon, graceMs: number): Promise<void> {
  if (hasExited(d)) return;
  d.child.kill('SIGTERM');
  if (await waitExit(d, graceMs)) return;
  d.child.kill('SIGKILL');
  await waitExit(d, 10_000);
}

export function logTail(logPath: string, lines = 25): string {
  try {
    return fs.readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export class DaemonStartError extends Error {
  override readonly name = 'DaemonStartError';
  readonly code = 'ERR_HARNESS_START';
}

/**
 * Polls `probe` until it answers true; fails early (with the log's tail) when the daemon exits,
 * and with the last probe error when `timeoutMs` passes.
 */
export async function waitDaemonReady(what: string, d: Daemon, logPath: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const exitedError = (): DaemonStartError =>
    new DaemonStartError(`${what} exited (${d.child.exitCode ?? d.child.signalCode}) before ready:\n${logTail(logPath)}`);
  await pollUntil(
    async () => {
      if (hasExited(d)) throw exitedError();
      return (await probe()) ? true : undefined;
    },
    { what, timeoutMs, intervalMs: 100 },
  ).catch((err: unknown) => {
    if (hasExited(d)) throw exitedError();
    throw new DaemonStartError(`${err instanceof Error ? err.message : String(err)}\n--- ${path.basename(logPath)} ---\n${logTail(logPath)}`);
  });
}

export async function etcdHealthy(l: ControlPlaneLayout): Promise<boolean> {
  const r = await httpGet(`${etcdEndpoint(l)}/health`, { timeoutMs: 2_000, maxBytes: 4096 });
  return r.status === 200 && (JSON.parse(r.body) as { health?: unknown }).health === 'true';
}

export async function apiserverReady(url: string, tls: ClientTls): Promise<boolean> {
  const r = await httpGet(`${url}/readyz`, { timeoutMs: 3_000, maxBytes: 64 * 1024, tls });
  return r.status === 200 && r.body.trim() === 'ok';
}

/**
 * kube-scheduler v1.20.2: the admin kubeconfig, no serving ports (two instances on one machine
 * must not collide), leader election on a kube-system Lease (the harness's readiness probe).
 * The lease is long (120 s, renew deadline 100 s): a scheduler that misses its renew deadline
 * exits, and with 15/10 s it did under a load average over 100 on 2 cores.
 */
export function schedulerArgs(kubeconfig: string): string[] {
  return [`--kubeconfig=${kubeconfig}`, '--port=0', '--secure-port=0', '--leader-elect=true', '--leader-elect-resource-lock=leases', '--leader-elect-lease-duration=120s', '--leader-elect-renew-deadline=100s', '--leader-elect-retry-period=10s', '-v=1'];
}

/**
 * kube-controller-manager v1.20.2: the admin kubeconfig for every controller, the service-account
 * signing key (token controller) and the CA (root-ca publisher), no serving ports, leader election
 * on a kube-system Lease (the readiness probe).
 */
export function controllerManagerArgs(kubeconfig: string, pki: Pki, extra: readonly string[]): string[] {
  return [
    `--kubeconfig=${kubeconfig}`, '--port=0', '--secure-port=0', '--leader-elect=true', '--leader-elect-resource-lock=leases',
    '--leader-elect-lease-duration=120s', '--leader-elect-renew-deadline=100s', '--leader-elect-retry-period=10s',
    `--service-account-private-key-file=${pki.saKeyFile}`, `--root-ca-file=${pki.caFile}`, '--use-service-account-credentials=false', '-v=1',
    ...extra,
  ];
}
