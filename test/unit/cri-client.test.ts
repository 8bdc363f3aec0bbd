/**
 * The CRI client's edge behaviour against the in-process simulated runtime, on the three unary
 * transports ('h2', 'node-http2' and 'grpc-js'): operation hook names and durations, deadline and abort
 * translated into typed errors, NotFound as a code, endpoint validation, idempotent close, the
 * reconnect backoff, and how the transport is chosen.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CriClient, normalizeEndpoint } from '../../src/shared/cri/cri-client.js';
import { isCancelled, isDeadlineExceeded, isNotFound, isUnavailable, CriError } from '../../src/shared/cri/cri-errors.js';
import type { CriOperationEvent } from '../../src/shared/cri/runtime-service.js';
import type { RunPodSandboxRequest } from '../../src/shared/cri/cri-types.js';
import { startHarness } from './simruntime/sim-harness.js';

test('endpoints: unix:// or an absolute path; anything else is a typed error', () => {
  assert.equal(normalizeEndpoint('/run/x.sock'), 'unix:///run/x.sock');
  assert.equal(normalizeEndpoint('unix:///run/x.sock'), 'unix:///run/x.sock');
  assert.throws(() => normalizeEndpoint('tcp://1.2.3.4:5'), (e: unknown) => e instanceof CriError && e.code === 'ERR_CRI_INVALID_ARGUMENT');
});

for (const transport of ['h2', 'node-http2', 'grpc-js'] as const) {
  test(`${transport}: operation hook, NotFound, deadline and abort`, async () => {
    const h = await startHarness({ faults: { hangRate: 1, methods: ['ListContainers'] } });
    const ops: CriOperationEvent[] = [];
    const client = new CriClient({ transport, endpoint: h.rt.endpoint, timeoutMs: 10_000, onOperation: (e) => ops.push(e) });
    try {
      assert.equal((await client.version()).runtimeApiVersion, 'v1');
      await assert.rejects(client.containerStatus('nope'), (e: unknown) => isNotFound(e) && (e as CriError).operation === 'ContainerStatus');
      assert.deepEqual(ops.map((o) => [o.operation, o.error ? (o.error as CriError).code : null]), [['version', null], ['container_status', 'ERR_CRI_NOT_FOUND']]);
      assert.ok(ops.every((o) => o.durationSeconds >= 0));

      // A hung call: the deadline turns it into DEADLINE_EXCEEDED (real time: the deadline is gRPC's own timer).
      await assert.rejects(client.listContainers(undefined, { timeoutMs: 200 }), isDeadlineExceeded);
      // Abort cancels it.
      const ac = new AbortController();
      const p = client.listContainers(undefined, { signal: ac.signal });
      ac.abort();
      await assert.rejects(p, isCancelled);
      await assert.rejects(client.listContainers(undefined, { signal: ac.signal }), isCancelled, 'an already aborted signal never starts the call');
      assert.equal(ops.at(-1)?.operation, 'list_containers');
    } finally {
      client.close();
      client.close();
      await h.close();
    }
    const dead = new CriClient({ transport, endpoint: h.rt.endpoint, timeoutMs: 500 });
    try {
      await assert.rejects(dead.version(), (e: unknown) => isUnavailable(e) || isDeadlineExceeded(e), 'a runtime that is gone is UNAVAILABLE (or times out)');
    } finally {
      dead.close();
    }
  });

  test(`${transport}: reconnect backoff is the kubelet's 100 ms → 3 s, not grpc-js's 1 s → 120 s`, async () => {
    // A unix socket that accepts and drops every connection: each one is a reconnect attempt.
    const net = await import('node:net');
    const os = await import('node:os');
    const path = await import('node:path');
    const fs = await import('node:fs');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-backoff-'));
    const socket = path.join(dir, 'drop.sock');
    let attempts = 0;
    const server = net.createServer((s) => {
      attempts++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(socket, r));
    const client = new CriClient({ transport, endpoint: `unix://${socket}` });
    try {
      // waitForReady keeps the channel connecting until its deadline (the completion signal).
      await assert.rejects(client.waitForReady(4_000), isUnavailable);
      // 100 ms × 1.6^k (±20%) reaches 4 s after ~7 attempts; grpc-js's default (1 s × 1.6^k)
      // makes 3 (at 0, ~1 and ~2.6 s).
      assert.ok(attempts >= 5, `only ${attempts} connection attempts in 4 s`);
    } finally {
      client.close();
      await new Promise<void>((r) => server.close(() => r()));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test(`${transport}: unary calls: both services, typed errors for a closed client and an unencodable request`, async () => {
    const h = await startHarness({});
    const ops: CriOperationEvent[] = [];
    const client = new CriClient({ transport, endpoint: h.rt.endpoint, timeoutMs: 10_000, onOperation: (e) => ops.push(e) });
    try {
      // ImageService methods travel on the same channel under their own service path.
      const images = await client.listImages();
      assert.ok(Array.isArray(images));
      const st = await client.imageStatus({ image: 'registry.invalid/absent:1' });
      assert.equal(st.image ?? null, null, 'ImageStatus answers on the shared channel (an absent image is no error)');
      // A request the proto cannot encode never reaches the wire: INTERNAL, reported to the hook.
      await assert.rejects(client.runPodSandbox({ config: 'not a message' } as unknown as RunPodSandboxRequest), (e: unknown) => e instanceof CriError && e.code === 'ERR_CRI_INTERNAL' && e.operation === 'RunPodSandbox');
      assert.deepEqual(ops.map((o) => o.operation), ['list_images', 'image_status', 'run_podsandbox']);
      assert.equal((ops.at(-1)?.error as CriError | undefined)?.code, 'ERR_CRI_INTERNAL');
    } finally {
      client.close();
    }
    try {
      await assert.rejects(client.version(), isUnavailable, 'a closed client fails fast and typed');
    } finally {
      await h.close();
    }
  });
}

test('transport: h2 by default, SHARDLET_CRI_TRANSPORT overrides the default, anything else is a typed error', () => {
  const saved = process.env['SHARDLET_CRI_TRANSPORT'];
  try {
    delete process.env['SHARDLET_CRI_TRANSPORT'];
    const a = new CriClient({ endpoint: '/nonexistent/x.sock' });
    assert.equal(a.transport, 'h2');
    a.close();
    process.env['SHARDLET_CRI_TRANSPORT'] = 'grpc-js';
    const b = new CriClient({ endpoint: '/nonexistent/x.sock' });
    assert.equal(b.transport, 'grpc-js');
    b.close();
    const c = new CriClient({ endpoint: '/nonexistent/x.sock', transport: 'h2' });
    assert.equal(c.transport, 'h2', 'an explicit option wins');
    c.close();
    process.env['SHARDLET_CRI_TRANSPORT'] = 'node-http2';
    const d = new CriClient({ endpoint: '/nonexistent/x.sock' });
    assert.equal(d.transport, 'node-http2');
    d.close();
    process.env['SHARDLET_CRI_TRANSPORT'] = 'http3';
    assert.throws(() => new CriClient({ endpoint: '/nonexistent/x.sock' }), (e: unknown) => e instanceof CriError && e.code === 'ERR_CRI_INVALID_ARGUMENT');
  } finally {
    if (saved === undefined) delete process.env['SHARDLET_CRI_TRANSPORT'];
    else process.env['SHARDLET_CRI_TRANSPORT'] = saved;
  }
});
