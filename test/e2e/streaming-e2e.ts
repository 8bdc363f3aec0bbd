/**
 * `kubectl exec`, `exec -i`, `exec -it`, `attach` and `port-forward` through the real API server
 * and the agent's secure port, shared by the simulated-runtime and containerd e2e tests: the
 * same kubectl commands and the same expectations on both runtimes (the busybox image has real
 * `sh`, `cat`, `tty` and `nc`; the simulated runtime interprets them, sim-exec-stream.ts). Each
 * kubectl command and its output go to the transcript.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { ControlPlane } from '../harness/apiserver-harness.js';
import { pollUntil } from '../harness/poll.js';
import { spdyUpgrade } from '../harness/spdy-test-client.js';
import { kubectlRecorded } from './kubelet-api-e2e.js';

/** A kubectl left running (port-forward, a background exec, attach): output collected as it comes. */
export class KubectlProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  exitCode: number | null | undefined = undefined;
  readonly exited: Promise<void>;

  constructor(cp: ControlPlane, args: readonly string[], o: { stdin?: boolean } = {}) {
    this.child = spawn(cp.tools.kubectl, [`--kubeconfig=${cp.adminKubeconfig}`, ...args], { stdio: [o.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (c: Buffer) => (this.stdout += c.toString()));
    this.child.stderr!.on('data', (c: Buffer) => (this.stderr += c.toString()));
    this.exited = new Promise((r) => this.child.once('exit', (code) => {
      this.exitCode = code;
      r();
    }));
  }

  write(s: string): void {
    this.child.stdin?.write(s);
  }

  waitFor(re: RegExp, what: string, timeoutMs = 60_000, stream: 'stdout' | 'stderr' = 'stdout'): Promise<RegExpExecArray> {
    return pollUntil(() => (this.exitCode !== undefined ? (() => { throw new Error(`kubectl exited (${this.exitCode}) before ${what}; stderr: ${this.stderr}`); })() : re.exec(stream === 'stdout' ? this.stdout : this.stderr) ?? undefined), { what: `${what} (stdout: ${this.stdout.slice(-300)} stderr: ${this.stderr.slice(-300)})`, timeoutMs, intervalMs: 50 });
  }

  async kill(): Promise<void> {
    if (this.exitCode === undefined) this.child.kill('SIGKILL');
    await this.exited;
  }
}

export interface StreamingScenario {
  cp: ControlPlane;
  transcript: string[];
  namespace: string;
  /** A running pod whose container `main` runs `sleep` (exec target). */
  pod: string;
  /** A running pod that keeps printing lines (attach target) and a regexp for one of its lines. */
  chattyPod: string;
  chattyLine: RegExp;
  /** Container port for the nc listener (host-network pods on containerd share the host's ports). */
  port: number;
  /**
   * Resolves once the background `nc` listens (kubectl ≥ 1.29 ends port-forward at the first
   * refused connection, so the test must not connect early). The simulated nc says so with -v;
   * Debian's busybox nc has no -v, so on containerd the host's /proc/net/tcp{,6} is read (the pods
   * are host-network).
   */
  ncArgs: string[];
  waitListening: (nc: KubectlProcess, port: number) => Promise<void>;
}

/** Polls /proc/net/tcp and tcp6 until a socket listens on `port` (host-network pods). */
export async function waitHostListening(port: number): Promise<void> {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  await pollUntil(() => {
    for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
      let text = '';
      try {
        text = fs.readFileSync(f, 'utf8');
      } catch {
        continue;
      }
      // local_address is IP:PORT in hex; st 0A is LISTEN.
      if (text.split('\n').some((l) => { const c = l.trim().split(/\s+/); return c[1]?.endsWith(`:${hex}`) === true && c[3] === '0A'; })) return true;
    }
    return undefined;
  }, { what: `a listener on host port ${port}`, timeoutMs: 60_000, intervalMs: 100 });
}

/** `kubectl exec … -- sh -c 'echo hi; exit 3'` prints hi and exits 3. */
export async function checkExecExitCode(s: StreamingScenario): Promise<void> {
  const r = await kubectlRecorded(s.cp, s.transcript, ['exec', '-n', s.namespace, s.pod, '--', 'sh', '-c', 'echo hi; exit 3']);
  assert.equal(r.stdout, 'hi\n', r.stderr);
  assert.equal(r.code, 3, `exit code (stderr: ${r.stderr})`);
  const ok = await kubectlRecorded(s.cp, s.transcript, ['exec', '-n', s.namespace, s.pod, '-c', 'main', '--', 'echo', 'second']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, 'second\n');
}

/** `kubectl exec -i … -- cat` passes stdin through. */
export async function checkExecStdin(s: StreamingScenario): Promise<void> {
  const r = await s.cp.kubectl(['exec', '-i', '-n', s.namespace, s.pod, '--', 'cat'], { stdin: 'line one\nline two\n', timeoutMs: 60_000 });
  s.transcript.push(`$ printf 'line one\\nline two\\n' | kubectl exec -i -n ${s.namespace} ${s.pod} -- cat`, r.stdout.trimEnd(), `[exit ${r.code}]`, '');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'line one\nline two\n');
}

/** `kubectl exec -it … -- tty` under a pseudo-terminal (util-linux `script`) allocates a tty. */
export async function checkExecTty(s: StreamingScenario): Promise<void> {
  const cmd = `${s.cp.tools.kubectl} --kubeconfig=${s.cp.adminKubeconfig} exec -it -n ${s.namespace} ${s.pod} -- tty`;
  const child = spawn('script', ['-qec', cmd, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  s.transcript.push(`$ script -qec 'kubectl exec -it -n ${s.namespace} ${s.pod} -- tty' /dev/null`, out.trimEnd(), `[exit ${code}]`, '');
  assert.equal(code, 0, out);
  assert.match(out, /\/dev\/pts\/\d+\r\n/, 'a tty was allocated (CRLF line ending from the tty)');
}

/** `kubectl attach` shows what the container prints after attaching. */
export async function checkAttach(s: StreamingScenario): Promise<void> {
  const k = new KubectlProcess(s.cp, ['attach', '-n', s.namespace, s.chattyPod, '-c', 'main']);
  try {
    await k.waitFor(new RegExp(`(${s.chattyLine.source}[^\\n]*\\n){3}`), 'three lines through kubectl attach');
  } finally {
    await k.kill();
  }
  s.transcript.push(`$ kubectl attach -n ${s.namespace} ${s.chattyPod} -c main`, ...k.stdout.split('\n').slice(0, 3), '… (killed)', '');
}

/**
 * `kubectl port-forward` to a listener `nc -l -p PORT` started by a background `kubectl exec -i`:
 * a TCP client's bytes arrive at nc's stdout, and what is typed into nc's stdin comes back.
 */
export async function checkPortForward(s: StreamingScenario): Promise<void> {
  const nc = new KubectlProcess(s.cp, ['exec', '-i', '-n', s.namespace, s.pod, '--', 'nc', ...s.ncArgs, '-p', String(s.port)], { stdin: true });
  let pf: KubectlProcess | undefined;
  let sock: net.Socket | undefined;
  try {
    await s.waitListening(nc, s.port);
    pf = new KubectlProcess(s.cp, ['port-forward', '-v=6', '-n', s.namespace, `pod/${s.pod}`, `:${s.port}`]);
    const m = await pf.waitFor(new RegExp(`Forwarding from 127\\.0\\.0\\.1:(\\d+) -> ${s.port}`), 'port-forward ready');
    const local = Number(m[1]);
    sock = net.connect(local, '127.0.0.1');
    let back = '';
    sock.on('data', (c: Buffer) => (back += c.toString()));
    sock.on('error', () => {});
    await new Promise<void>((r, j) => {
      sock!.once('connect', () => r());
      sock!.once('error', j);
    });
    sock.write('ping from the test\n');
    const pfNow = pf;
    await nc.waitFor(/ping from the test\n/, 'the bytes at the listener in the pod').catch((e: unknown) => {
      throw new Error(`${e instanceof Error ? e.message : String(e)}\nkubectl port-forward stderr:\n${pfNow.stderr.slice(-4000)}`);
    });
    nc.write('pong from the pod\n');
    await pollUntil(() => (back.includes('pong from the pod\n') ? true : undefined), { what: `bytes back through port-forward (got ${JSON.stringify(back)})`, timeoutMs: 30_000, intervalMs: 50 });
    s.transcript.push(
      `$ kubectl exec -i -n ${s.namespace} ${s.pod} -- nc ${s.ncArgs.join(' ')} -p ${s.port} &`,
      `$ kubectl port-forward -n ${s.namespace} pod/${s.pod} :${s.port} &`,
      pf.stdout.trimEnd(),
      `# TCP client → 127.0.0.1:${local}: sent "ping from the test", nc printed it; typed "pong from the pod" into nc, the client received it`,
      '',
    );
  } finally {
    sock?.destroy();
    await pf?.kill();
    await nc.kill();
  }
}

/** Direct upgrades to the agent's port: no credentials → 401, a user without nodes/proxy → 403. */
export async function checkStreamingAuth(port: number, namespace: string, pod: string, nobodyToken: string, nobody: string): Promise<void> {
  const url = `https://127.0.0.1:${port}/exec/${namespace}/${pod}/main?command=true&output=1`;
  const tls = { rejectUnauthorized: false };
  const anon = await spdyUpgrade(url, { protocols: ['v4.channel.k8s.io'], tls });
  assert.deepEqual([anon.status, anon.body], [401, 'Unauthorized']);
  const forbidden = await spdyUpgrade(url, { protocols: ['v4.channel.k8s.io'], tls, headers: { Authorization: `Bearer ${nobodyToken}` } });
  assert.deepEqual([forbidden.status, forbidden.body], [403, `Forbidden (user=${nobody}, verb=create, resource=nodes, subresource=proxy)`]);
}

/** `kubectl cp` into the pod and back out: the same bytes (via `tar` in the container). */
export async function checkCp(s: StreamingScenario, workDir: string): Promise<void> {
  const local = path.join(workDir, 'to-pod.txt');
  const back = path.join(workDir, 'from-pod.txt');
  const content = Array.from({ length: 2000 }, (_, i) => `line ${i} of the file kubectl cp carries\n`).join('');
  fs.writeFileSync(local, content);
  const up = await kubectlRecorded(s.cp, s.transcript, ['cp', local, `${s.namespace}/${s.pod}:/tmp/copied.txt`]);
  assert.equal(up.code, 0, up.stderr);
  const cat = await s.cp.kubectl(['exec', '-n', s.namespace, s.pod, '--', 'cat', '/tmp/copied.txt'], { timeoutMs: 60_000 });
  assert.equal(cat.code, 0, cat.stderr);
  assert.equal(cat.stdout, content, 'the file arrived in the pod');
  const down = await kubectlRecorded(s.cp, s.transcript, ['cp', `${s.namespace}/${s.pod}:/tmp/copied.txt`, back]);
  assert.equal(down.code, 0, down.stderr);
  assert.equal(fs.readFileSync(back, 'utf8'), content, 'the file came back');
}
