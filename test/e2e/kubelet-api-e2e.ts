/**
 * What the kubelet-API e2e tests (sim runtime and containerd) share: the agent's secure-port
 * flags against a harness control plane, the Node object the API server needs to reach the
 * agent, direct HTTPS requests to the agent's port, kubectl runs recorded into a transcript, and a
 * follower for `kubectl logs -f`.
 *
 * Until Node registration lands (cluster mode part 2, branch `node`), the Node object is created
 * here with ADMIN credentials: InternalIP 127.0.0.1 and daemonEndpoints.kubeletEndpoint.Port =
 * the agent's secure port. The lead will switch this to the agent's own registration.
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
  ];
}

/** Creates (admin) the Node the API server resolves `kubectl logs` through; see the module comment. */
export async function registerNodeAsAdmin(cp: ControlPlane, nodeName: string, port: number): Promise<void> {
  const status = { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: nodeName }], daemonEndpoints: { kubeletEndpoint: { Port: port } } };
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName }, status };
  const r = await cp.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify(node) });
  if (r.code !== 0) throw new Error(`create node: ${r.stderr}`);
  // Status is a subresource: make sure it holds whatever create kept.
  const p = await cp.kubectl(['patch', 'node', nodeName, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
  if (p.code !== 0) throw new Error(`patch node status: ${p.stderr}`);
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
