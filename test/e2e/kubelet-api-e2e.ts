/**
 * What the kubelet-API e2e tests (sim runtime and containerd) share: the agent's secure-port
 * flags against a harness control plane (the agent registers its own Node with InternalIP
 * 127.0.0.1 and daemonEndpoints.kubeletEndpoint.Port = its secure port, which is how the API
 * server reaches it for `kubectl logs`), a wait for that registration, direct HTTPS requests to
 * the agent's port, kubectl runs recorded into a transcript, and a follower for `kubectl logs -f`.
 */
import { spawn } from 'node:child_process';
import https from 'node:https';
import type { ControlPlane, KubectlResult } from '../harness/apiserver-harness.js';
import { pollUntil } from '../harness/poll.js';

export function secureArgs(cp: ControlPlane, port: number): string[] {
  return [
    '--port', String(port),
    '--address', '127.0.0.1',
    '--client-ca-file', cp.caFile,
    '--authentication-token-webhook',
    '--authorization-mode', 'Webhook',
    '--node-ip', '127.0.0.1',
  ];
}

/**
 * Waits (bounded) until the agent's own registration shows what the API server needs to reach
 * it: InternalIP 127.0.0.1 and the kubelet endpoint port `port`.
 */
export async function waitForAgentNode(cp: ControlPlane, nodeName: string, port: number): Promise<void> {
  interface NodeView { status?: { addresses?: Array<{ type: string; address: string }>; daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } } }
  await pollUntil(async () => {
    const r = await cp.kubectl(['get', 'node', nodeName, '-o', 'json'], { timeoutMs: 20_000 });
    if (r.code !== 0) return undefined;
    const n = JSON.parse(r.stdout) as NodeView;
    const ipOk = n.status?.addresses?.some((a) => a.type === 'InternalIP' && a.address === '127.0.0.1') === true;
    return ipOk && n.status?.daemonEndpoints?.kubeletEndpoint?.Port === port ? true : undefined;
  }, { what: `node ${nodeName} registered by the agent with InternalIP 127.0.0.1 and port ${port}`, timeoutMs: 60_000, intervalMs: 250 });
}

/** GET on the agent's secure port (its self-signed certificate is not verified here). */
export function kubeletGet(port: number, path: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path, rejectUnauthorized: false, timeout: 30_000, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer in 30 s`)));
    req.on('error', reject);
    req.end();
  });
}

/** Runs kubectl (admin unless `kubeconfig`) and appends the command and its output to `transcript`. */
export async function kubectlRecorded(cp: ControlPlane, transcript: string[], args: readonly string[], kubeconfig?: string): Promise<KubectlResult> {
  const r = await cp.kubectl(args, kubeconfig !== undefined ? { kubeconfig, timeoutMs: 60_000 } : { timeoutMs: 60_000 });
  const out = r.stdout.split('\n');
  const shown = out.length > 12 ? [...out.slice(0, 5), `… (${out.length - 10} more lines)`, ...out.slice(-5)] : out;
  transcript.push(`$ kubectl ${args.join(' ')}${kubeconfig !== undefined ? '   # as another user' : ''}`, ...shown.filter((l, i) => l !== '' || i < shown.length - 1), ...(r.stderr.trim() ? [`[stderr] ${r.stderr.trim()}`] : []), `[exit ${r.code}]`, '');
  return r;
}

/**
 * `kubectl logs -f`: collects stdout lines until `enough(lines)` holds (bounded), then kills it.
 * Returns the lines.
 */
export async function followLogs(cp: ControlPlane, args: readonly string[], enough: (lines: string[]) => boolean, timeoutMs: number): Promise<string[]> {
  const child = spawn(cp.tools.kubectl, [`--kubeconfig=${cp.adminKubeconfig}`, 'logs', '-f', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let buf = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (c: string) => {
    buf += c;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      lines.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    await pollUntil(() => (enough(lines) ? true : undefined), { what: `kubectl logs -f ${args.join(' ')} (stderr: ${stderr})`, timeoutMs, intervalMs: 100 });
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
  return lines;
}

/** Sequence numbers of `chatter <n> …` lines (the sim's log-lines-per-second workload). */
export function chatterSeqs(lines: readonly string[]): number[] {
  return lines.map((l) => /chatter (\d+) /.exec(l)?.[1]).filter((x): x is string => x !== undefined).map(Number);
}
