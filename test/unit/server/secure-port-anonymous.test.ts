/**
 * Issue 27 item 6: `--anonymous-auth` with `--authorization-mode AlwaysAllow` serves every
 * secure-port endpoint to anyone who reaches it; the agent says so at start, as it does for a
 * non-loopback read-only port. The warning goes through createSecurePort, the agent's wiring.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { createLogger } from '../../../src/shared/logging/logger.js';
import type { ReviewCreator } from '../../../src/main/apiserver/api-reviews.js';
import { createSecurePort, type SecurePortDeps } from '../../../src/main/server/secure-port.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secure-port-anon-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function records(anonymousAuth: boolean, authorizationMode: 'AlwaysAllow' | 'Webhook'): Array<Record<string, unknown>> {
  const lines: string[] = [];
  const reviews: ReviewCreator = { createReview: async () => ({}) };
  const deps: SecurePortDeps = {
    config: {
      address: '127.0.0.1', port: 0, rootDir: dir, nodeName: 'n1', tlsCertFile: undefined, tlsPrivateKeyFile: undefined, clientCAFile: undefined,
      anonymousAuth, authenticationTokenWebhook: false, authenticationTokenWebhookCacheTTLMs: 1000, authorizationMode,
      authorizationWebhookCacheAuthorizedTTLMs: 1000, authorizationWebhookCacheUnauthorizedTTLMs: 1000, streamingConnectionIdleTimeoutMs: 3_600_000,
    },
    reviews,
    runtime: {
      listContainers: async () => [], containerStatus: async () => { throw new Error('unused'); }, listPodSandbox: async () => [],
      execSync: async () => { throw new Error('unused'); }, exec: async () => { throw new Error('unused'); },
      attach: async () => { throw new Error('unused'); }, portForward: async () => { throw new Error('unused'); },
    },
    metrics: { collect: async () => '' },
    health: { checks: () => [] },
    pods: { list: () => [] },
    podsByName: { byName: () => undefined },
    stats: { summary: async () => ({ node: {}, pods: [] }), resourceMetrics: async () => '' },
    nodeAddresses: [],
    clock: new FakeClock(),
    logger: createLogger({ sink: (l) => lines.push(l) }),
  };
  const server = createSecurePort(deps);
  server.destroy();
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

const isWarning = (r: Record<string, unknown>): boolean => r['level'] === 'error' && /anonymous/i.test(String(r['msg'])) && /AlwaysAllow/.test(String(r['msg']));

test('6: --anonymous-auth with --authorization-mode AlwaysAllow is warned about at start, naming both flags', () => {
  const warned = records(true, 'AlwaysAllow').filter(isWarning);
  assert.equal(warned.length, 1, 'exactly one warning');
  assert.match(String(warned[0]?.['msg']), /--anonymous-auth/);
  assert.match(String(warned[0]?.['msg']), /--authorization-mode AlwaysAllow/);
});

test('6: no warning when anonymous access is off or authorization is Webhook', () => {
  assert.equal(records(false, 'AlwaysAllow').filter(isWarning).length, 0);
  assert.equal(records(true, 'Webhook').filter(isWarning).length, 0);
});
