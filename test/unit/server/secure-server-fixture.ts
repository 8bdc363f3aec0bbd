/**
 * A secure port for hardening tests: the product's createSecureServer and kubeletApiRoutes with
 * a self-signed serving pair, x509 client authentication against a test CA, AlwaysAllow, and a
 * log source whose path the test chooses. Requests go over real TLS sockets.
 */
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import type { Clock } from '../../../src/shared/clock/clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { RequestAuth } from '../../../src/main/server/auth-chain.js';
import { alwaysAllow } from '../../../src/main/server/auth-sar-authorizer.js';
import type { Authorizer } from '../../../src/main/server/auth-types.js';
import { X509Authenticator } from '../../../src/main/server/auth-x509.js';
import { kubeletApiRoutes } from '../../../src/main/server/kubelet-api-routes.js';
import { createSecureServer, type SecureServer, type SecureServerOptions } from '../../../src/main/server/secure-server.js';
import { resolveServingCert } from '../../../src/main/server/serving-cert.js';
import { createPki, issueNodeCert, type Pki } from '../../harness/apiserver-credentials.js';
import { StreamProxy } from '../../../src/main/server/stream-proxy.js';
import type { StreamRuntime } from '../../../src/main/server/stream-request.js';

/** These tests make no exec/attach/port-forward calls: the runtime refuses them. */
const noStreams: StreamRuntime = {
  listContainers: async () => [],
  listPodSandbox: async () => [],
  execSync: async () => { throw new Error('no streams in this fixture'); },
  exec: async () => { throw new Error('no streams in this fixture'); },
  attach: async () => { throw new Error('no streams in this fixture'); },
  portForward: async () => { throw new Error('no streams in this fixture'); },
};

export const POD: V1Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers: [{ name: 'c', image: 'i' }] } };

export interface SecureFixture {
  dir: string;
  pki: Pki;
  clientCert: { certFile: string; keyFile: string };
  serving: { cert: Buffer; key: Buffer };
  remove(): void;
}

export function secureFixture(): SecureFixture {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secure-hardening-'));
  const pki = createPki('openssl', path.join(dir, 'pki'));
  const clientCert = issueNodeCert('openssl', pki, 'n1');
  const serving = resolveServingCert({ tlsCertFile: undefined, tlsPrivateKeyFile: undefined, rootDir: path.join(dir, 'root'), altNames: [], nowMs: Date.now() });
  return { dir, pki, clientCert, serving, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export interface StartedSecure {
  server: SecureServer;
  port: number;
}

export interface StartOptions {
  /** The container log path the log source returns. */
  logPath: () => string;
  /** Whether the container is running (follow streams end when it is not). */
  running?: () => boolean;
  clock?: Clock;
  logPollMs?: number;
  /** The authorizer (default AlwaysAllow). */
  authorizer?: Authorizer;
  /** Options passed on to createSecureServer (limits, timeouts). */
  server?: Partial<Omit<SecureServerOptions, 'auth' | 'routes' | 'logger' | 'cert' | 'key' | 'clientCA'>>;
}

export async function startSecure(f: SecureFixture, o: StartOptions): Promise<StartedSecure> {
  const clock = o.clock ?? new FakeClock();
  const server = createSecureServer({
    address: '127.0.0.1', port: 0, cert: f.serving.cert, key: f.serving.key, clientCA: fs.readFileSync(f.pki.caFile), logger: silentLogger,
    auth: new RequestAuth({ authenticators: [new X509Authenticator()], authorizer: o.authorizer ?? alwaysAllow, anonymous: false, nodeName: 'n1' }),
    routes: kubeletApiRoutes({
      metrics: { collect: async () => '# HELP up x\n# TYPE up gauge\nup 1\n' },
      health: { checks: () => [] },
      pods: { list: () => [POD] },
      podsByName: { byName: (ns, name) => (ns === 'ns' && name === 'p' ? POD : undefined) },
      runningPods: { list: async () => [POD] },
      logs: { locate: async () => ({ ok: true, containerId: 'cid', logPath: o.logPath() }), isRunning: async () => o.running?.() ?? false },
      streamRuntime: noStreams,
      streamProxy: new StreamProxy({ clock, logger: silentLogger, idleTimeoutMs: 60_000 }),
      stats: { summary: async () => ({ node: {}, pods: [] }), resourceMetrics: async () => '' },
      clock,
      logger: silentLogger,
      ...(o.logPollMs !== undefined ? { logPollMs: o.logPollMs } : {}),
    }),
    ...(o.server ?? {}),
  });
  const { port } = await server.listen();
  return { server, port };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One HTTPS request with the client certificate; rejects after `timeoutMs` of silence. */
export function request(f: SecureFixture, port: number, p: string, o: { headers?: Record<string, string>; timeoutMs?: number; authenticated?: boolean } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1', port, path: p, method: 'GET', ca: f.serving.cert, servername: 'localhost', agent: false,
      ...(o.authenticated === false ? {} : { cert: fs.readFileSync(f.clientCert.certFile), key: fs.readFileSync(f.clientCert.keyFile) }),
      headers: o.headers ?? {},
      timeout: o.timeoutMs ?? 5_000,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to ${p} within ${o.timeoutMs ?? 5_000} ms`)));
    req.on('error', reject);
    req.end();
  });
}
