/**
 * A real grpc-go CRI client (test/harness/go-grpc-client/main.go), dialing the way cri-tools
 * v1.26 (crictl, critest) and kubelets up to 1.25 do: the socket PATH as target, so grpc-go sends
 * it as `:authority`. Debian bookworm has no cri-tools package; its grpc-go
 * (golang-google-grpc-dev 1.33) is of that generation, so this client stands in for crictl.
 *
 * Built once per (Debian grpc-go version, source hash) into
 * `$SHARDLET_TOOLS_DIR/go-grpc-client-<version>-<hash>/` (default /var/cache/shardlet-tools),
 * after prepare.ts installs golang-go and golang-google-grpc-dev when missing (root). Concurrent
 * builders each build into a temp file and rename, so the binary is always whole.
 */
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensurePackages } from './apt-packages.js';
import { GO_GRPC_CLIENT_REQUIREMENTS } from './prepare.js';

const SOURCE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'harness', 'go-grpc-client', 'main.go');
const BUILD_TIMEOUT_MS = 10 * 60_000;

export class GoClientError extends Error {
  override readonly name = 'GoClientError';
  readonly code = 'ERR_HARNESS_GO_CLIENT';
}

function grpcGoVersion(): string {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Version}', 'golang-google-grpc-dev'], { encoding: 'utf8' });
  if (r.status !== 0 || !r.stdout) throw new GoClientError(`dpkg-query golang-google-grpc-dev: ${r.stderr || r.error?.message}`);
  return r.stdout.trim().replace(/[^A-Za-z0-9.+~-]/g, '_');
}

/** Path of the built client; builds it (and installs its packages) first when needed. */
export function goGrpcClientBinary(): string {
  ensurePackages(GO_GRPC_CLIENT_REQUIREMENTS);
  const source = fs.readFileSync(SOURCE);
  const hash = crypto.createHash('sha256').update(source).digest('hex').slice(0, 12);
  const toolsDir = process.env['SHARDLET_TOOLS_DIR'] ?? '/var/cache/shardlet-tools';
  const outDir = path.join(toolsDir, `go-grpc-client-${grpcGoVersion()}-${hash}`);
  const bin = path.join(outDir, 'go-grpc-client');
  if (fs.existsSync(bin)) return bin;
  fs.mkdirSync(outDir, { recursive: true });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-go-client-'));
  try {
    fs.copyFileSync(SOURCE, path.join(work, 'main.go'));
    const tmpBin = path.join(outDir, `.go-grpc-client.${process.pid}`);
    const r = spawnSync('go', ['build', '-o', tmpBin, 'main.go'], {
      cwd: work,
      encoding: 'utf8',
      timeout: BUILD_TIMEOUT_MS,
      // GOPATH mode over Debian's packaged Go sources: no module download (there is no network).
      env: { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOCACHE: path.join(toolsDir, 'go-build-cache'), GOFLAGS: '' },
    });
    if (r.status !== 0) throw new GoClientError(`go build of ${SOURCE} failed: ${r.error?.message ?? ''}\n${r.stderr}`);
    fs.renameSync(tmpBin, bin);
    return bin;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

export interface GoCallResult {
  /** The client's exit status (0: every call succeeded). */
  readonly status: number | null;
  /** Per call: the response bytes, or the gRPC code and message. */
  readonly calls: readonly ({ ok: true; response: Buffer } | { ok: false; error: string })[];
  readonly output: string;
}

/**
 * Runs the client: `method` of runtime.v1.RuntimeService once per request (protobuf bytes),
 * all on one connection. Bounded by `timeoutMs` (the client also gives up after 20 s).
 */
export function runGoGrpcClient(bin: string, socketPath: string, method: string, requests: readonly Buffer[], timeoutMs = 30_000): Promise<GoCallResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [socketPath, method, ...requests.map((r) => r.toString('hex'))], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new GoClientError(`go-grpc-client ${method} did not finish within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (status) => {
      clearTimeout(timer);
      const calls = output
        .split('\n')
        .filter((l) => l.startsWith('ok ') || l.startsWith('error '))
        .map((l) => (l.startsWith('ok ') ? { ok: true as const, response: Buffer.from(l.slice(3).trim(), 'hex') } : { ok: false as const, error: l.slice(6) }));
      resolve({ status, calls, output });
    });
  });
}
