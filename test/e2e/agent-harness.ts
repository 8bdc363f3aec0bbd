/**
 * Runs `shardlet agent` as a child process (as an operator would) against a given CRI endpoint
 * and a temp manifest directory, and observes it through its HTTP API (/pods, /healthz,
 * /metrics) and the runtime itself. Waiting is bounded polling of that external state.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { removeAgentRoot, removeAgentRootWhenIdle } from '../harness/agent-root.js';
import { pollUntil } from '../harness/poll.js';
import { agentCgroupRootFor } from '../harness/test-cgroups.js';

export { removeAgentRoot };
import { shardletMainPath } from '../harness/sim-runtime-harness.js';

export interface AgentProcessOptions {
  endpoint: string;
  manifestDir: string;
  workers?: number;
  maxPods?: number;
  extraArgs?: readonly string[];
  nodeName?: string;
  /**
   * Send the agent's stderr (its log) to this file instead of a pipe (e.g. /dev/full, or a file
   * on a tiny tmpfs). `logs` then stays empty and readiness is found by polling /healthz/ping.
   */
  stderrPath?: string;
  /** --root-dir (default: a fresh temp dir); the same dir lets a restarted agent find its state. */
  rootDir?: string;
}

export interface AgentProcess {
  readonly pid: number;
  /** The agent's private `--root-dir` (a `shardlet-agent-*` temp dir), removed when the agent exits. */
  readonly rootDir: string;
  readonly port: number;
  /** The agent's --root-dir (a fresh temp dir); --pod-logs-dir is `<root>/pods`. */
  readonly root: string;
  readonly logs: string[];
  pods(): Promise<V1Pod[]>;
  get(pathname: string): Promise<{ status: number; body: string }>;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL (a crash). */
  kill(): Promise<void>;
  /** The process has not exited. */
  running(): boolean;
}

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

export async function startAgent(o: AgentProcessOptions): Promise<AgentProcess> {
  const root = o.rootDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-agent-'));
  const httpPort = await freePort();
  const cgroupRoot = agentCgroupRootFor(o.endpoint);
  const args = [
    shardletMainPath(),
    'agent',
    '--container-runtime-endpoint', o.endpoint,
    '--pod-manifest-path', o.manifestDir,
    '--node-name', o.nodeName ?? 'node-e2e',
    '--workers', String(o.workers ?? 2),
    '--max-pods', String(o.maxPods ?? 1000),
    '--read-only-port', String(httpPort),
    // The secure port is off unless a test asks for it in extraArgs (a later flag wins).
    '--port', '0',
    '--root-dir', root,
    '--pod-logs-dir', path.join(root, 'pods'),
    '--file-check-frequency', '2s',
    // A private QoS cgroup tree per runtime, removed by the containerd harness (test-cgroups.ts).
    ...(cgroupRoot !== undefined ? ['--cgroup-root', cgroupRoot] : []),
    '-v', '2',
    ...(o.extraArgs ?? []),
  ];
  const stderrFd = o.stderrPath !== undefined ? fs.openSync(o.stderrPath, 'a') : undefined;
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', stderrFd ?? 'pipe'] });
  if (stderrFd !== undefined) fs.closeSync(stderrFd);
  const logs: string[] = [];
  let port: number | undefined;
  let buf = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      logs.push(line);
      if (port === undefined && line.includes('"msg":"serving"')) {
        try {
          port = (JSON.parse(line) as { port: number }).port;
        } catch {
          /* not JSON */
        }
      }
    }
  });
  // A temp root the harness made goes with the process, however it ends (stop, kill, crash,
  // failed start); a root the caller gave is the caller's (a restarted agent must find its
  // state, pod volumes included). tmpfs volumes a killed agent left mounted are detached first;
  // a root the runtime still writes into is removed when the test process exits.
  const ownRoot = o.rootDir === undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      // resolve() in finally: an exit handler that threw would leave every await of `exited`
      // (stop, kill, the file's after() hook) hanging, and with it the whole test run.
      try {
        if (ownRoot) removeAgentRootWhenIdle(root);
      } finally {
        resolve(code);
      }
    }),
  );
  let dead = false;
  void exited.then(() => (dead = true));
  let boundPort: number;
  try {
    boundPort = await pollUntil(() => {
      if (dead) throw new Error(`agent exited during start:\n${logs.slice(-20).join('\n')}`);
      if (stderrFd === undefined) return port;
      return fetch(`http://127.0.0.1:${httpPort}/healthz/ping`).then((r) => (r.ok ? httpPort : undefined), () => undefined);
    }, { what: 'the agent to serve', timeoutMs: 30_000 });
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    throw err;
  }

  const get = async (pathname: string): Promise<{ status: number; body: string }> => {
    const res = await fetch(`http://127.0.0.1:${boundPort}${pathname}`);
    return { status: res.status, body: await res.text() };
  };
  return {
    pid: child.pid ?? -1,
    rootDir: root,
    port: boundPort,
    root,
    logs,
    get,
    async pods() {
      const r = await get('/pods');
      return (JSON.parse(r.body) as { items: V1Pod[] }).items;
    },
    async stop() {
      if (!dead) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (!dead) child.kill('SIGKILL');
      await exited;
    },
    running: () => !dead,
  };
}

export function writePodManifest(dir: string, name: string, opts: { command?: string[]; image?: string; annotations?: Record<string, string>; extraYaml?: string } = {}): string {
  const file = path.join(dir, `${name}.yaml`);
  const command = JSON.stringify(opts.command ?? ['sleep', '100000']);
  const ann = opts.annotations ? `\n  annotations:\n${Object.entries(opts.annotations).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`).join('\n')}` : '';
  fs.writeFileSync(
    file,
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: default${ann}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n  - name: main\n    image: ${opts.image ?? 'docker.io/local/busybox:1'}\n    imagePullPolicy: IfNotPresent\n    command: ${command}\n${opts.extraYaml ?? ''}`,
  );
  return file;
}

/** Runtime view: sandboxes and containers per pod UID (the CRI metadata's / labels' uid). */
export type RuntimeView = Map<string, {
  sandboxes: { id: string; state: string }[];
  containers: { id: string; name: string; state: string; attempt: number; sandboxId: string }[];
}>;

export async function runtimeView(endpoint: string): Promise<RuntimeView> {
  const cri = new CriClient({ endpoint, timeoutMs: 30_000 });
  try {
    const [sbs, cs] = await Promise.all([cri.listPodSandbox(), cri.listContainers()]);
    const out: RuntimeView = new Map();
    const entry = (uid: string) => {
      let e = out.get(uid);
      if (!e) out.set(uid, (e = { sandboxes: [], containers: [] }));
      return e;
    };
    for (const s of sbs) entry(s.metadata?.uid ?? '').sandboxes.push({ id: s.id, state: s.state });
    for (const c of cs) {
      entry(c.labels['io.kubernetes.pod.uid'] ?? '').containers.push({ id: c.id, name: c.metadata?.name ?? '', state: c.state, attempt: c.metadata?.attempt ?? 0, sandboxId: c.podSandboxId });
    }
    return out;
  } finally {
    cri.close();
  }
}

export function isRunning(pod: V1Pod): boolean {
  return pod.status?.phase === 'Running' && (pod.status.containerStatuses ?? []).every((c) => c.state?.running !== undefined);
}

export { pollUntil };

