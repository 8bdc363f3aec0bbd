/**
 * The h2 transport against the simulated runtime (a grpc-js server behind its HPACK-aware
 * connection shim): many concurrent calls of both services on one connection, typed errors,
 * and stream-id exhaustion draining onto a new connection (H2Channel, as CriClient wires it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CriClient } from '../../../src/shared/cri/cri-client.js';
import { isNotFound } from '../../../src/shared/cri/cri-errors.js';
import { CRI_FLOW_CONTROL_WINDOW, loadCriProto, MAX_MESSAGE_BYTES } from '../../../src/shared/cri/cri-proto.js';
import { realClock } from '../../../src/shared/clock/clock.js';
import { GrpcCode } from '../../../src/shared/cri/grpc-wire.js';
import { H2Channel } from '../../../src/shared/cri/h2/h2-channel.js';
import { requestHeaderPrefix } from '../../../src/shared/cri/h2/h2-request-headers.js';
import { H2UnaryCall } from '../../../src/shared/cri/h2/h2-unary-call.js';
import type { H2CallOwner } from '../../../src/shared/cri/h2/h2-unary-call.js';
import { startHarness } from '../simruntime/sim-harness.js';

test('h2 on the simulated runtime: 400 concurrent calls of both services, typed NotFound, one connection', async () => {
  const h = await startHarness({});
  const c = new CriClient({ endpoint: h.rt.endpoint, transport: 'h2', timeoutMs: 30_000 });
  try {
    const calls = Array.from({ length: 400 }, (_, i) => {
      switch (i % 4) {
        case 0: return c.version().then((v) => v.runtimeApiVersion);
        case 1: return c.listContainers().then((l) => String(l.length));
        case 2: return c.listImages().then((l) => String(l.length > 0));
        default: return c.containerStatus(`absent-${i}`).then(() => 'found', (e: unknown) => (isNotFound(e) ? 'not-found' : String(e)));
      }
    });
    const out = await Promise.all(calls);
    assert.deepEqual(new Set(out), new Set(['v1', '0', 'true', 'not-found']));
  } finally {
    c.close();
    await h.close();
  }
});

test('h2 channel: used-up stream ids drain the connection; later calls go to a new one', async () => {
  const h = await startHarness({});
  const channel = new H2Channel({
    path: h.rt.endpoint.slice('unix://'.length),
    recvWindow: CRI_FLOW_CONTROL_WINDOW,
    backoff: { initialMs: 100, maxMs: 3_000 },
    clock: realClock,
    random: () => 0.5,
    maxStreamId: 5,
  });
  const def = loadCriProto().runtime['Version'];
  assert.ok(def !== undefined);
  const call = (): Promise<string> => new Promise((resolve, reject) => {
    const owner: H2CallOwner = {
      callDone(_c, code, details, reply) {
        if (code !== GrpcCode.OK || reply === null) reject(new Error(`${code} ${details}`));
        else resolve((def.responseDeserialize(reply) as { runtimeApiVersion: string }).runtimeApiVersion);
      },
    };
    const c = new H2UnaryCall('Version', requestHeaderPrefix(def.path), def.requestSerialize({ version: 'v1' }), realClock.monotonic() + 10_000, owner, null, MAX_MESSAGE_BYTES);
    channel.start(c);
  });
  try {
    for (let i = 0; i < 4; i++) assert.equal(await call(), 'v1');
    assert.equal(channel.dials, 2, 'streams 1, 3, 5 on the first connection, the 4th call on a second');
    const parallel = await Promise.all(Array.from({ length: 7 }, call));
    assert.ok(parallel.every((v) => v === 'v1'));
    assert.ok(channel.dials >= 4, `7 calls need ≥ 3 more connections of 3 streams each, dialled ${channel.dials}`);
  } finally {
    channel.close();
    await h.close();
  }
});
