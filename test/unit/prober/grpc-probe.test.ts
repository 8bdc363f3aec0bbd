/** gRPC health probes against a local grpc-js server implementing grpc.health.v1.Health/Check. */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { decodeHealthCheckStatus, encodeHealthCheckRequest, grpcProbe } from '../../../workers/prober/probers/grpc-probe.js';

/** service name → ServingStatus number; absent → NOT_FOUND. */
const statuses = new Map<string, number>([['', 1], ['db', 2], ['cache', 3]]);
const requested: string[] = [];
// Decoded into an object: grpc-js servers treat a falsy request message as missing.
const decodeService = (b: Buffer): { service: string } => ({ service: b.length === 0 ? '' : b.subarray(2).toString('utf8') });
const healthService: grpc.ServiceDefinition = {
  Check: {
    path: '/grpc.health.v1.Health/Check',
    requestStream: false,
    responseStream: false,
    requestSerialize: (r: { service: string }) => encodeHealthCheckRequest(r.service),
    requestDeserialize: decodeService,
    responseSerialize: (n: number) => Buffer.from([0x08, n]),
    responseDeserialize: decodeHealthCheckStatus,
  },
};

async function startServer(withHealth: boolean): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server();
  if (withHealth) {
    server.addService(healthService, {
      Check: (call: grpc.ServerUnaryCall<{ service: string }, number>, cb: grpc.sendUnaryData<number>) => {
        requested.push(call.request.service);
        const s = statuses.get(call.request.service);
        if (s === undefined) cb({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
        else cb(null, s);
      },
    });
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  return { server, port };
}

const health = await startServer(true);
const bare = await startServer(false);
after(() => {
  health.server.forceShutdown();
  bare.server.forceShutdown();
});

const signal = new AbortController().signal;
const req = (port: number, service = '') => ({ host: '127.0.0.1', port, service, timeoutMs: 5000, userAgent: 'kube-probe/1.31', signal });

test('health message encoding round-trips', () => {
  assert.equal(decodeService(encodeHealthCheckRequest('db')).service, 'db');
  assert.equal(encodeHealthCheckRequest('').length, 0);
  assert.equal(decodeHealthCheckStatus(Buffer.from([0x08, 0x02])), 2);
  assert.equal(decodeHealthCheckStatus(Buffer.alloc(0)), 0);
});

test('SERVING is success; NOT_SERVING and RPC errors are failures; the service name is sent', async () => {
  requested.length = 0;
  const clock = new FakeClock();
  assert.equal((await grpcProbe(clock, req(health.port))).kind, 'success');
  const ns = await grpcProbe(clock, req(health.port, 'db'));
  assert.equal(ns.kind, 'failure');
  assert.match(ns.kind === 'failure' ? ns.output : '', /NOT_SERVING/);
  const su = await grpcProbe(clock, req(health.port, 'cache'));
  assert.match(su.kind === 'failure' ? su.output : '', /SERVICE_UNKNOWN/);
  assert.equal((await grpcProbe(clock, req(health.port, 'nope'))).kind, 'failure');
  assert.deepEqual(requested, ['', 'db', 'cache', 'nope']);
});

test('a server without the health service is a failure naming the protocol', async () => {
  const o = await grpcProbe(new FakeClock(), req(bare.port));
  assert.equal(o.kind, 'failure');
  assert.match(o.kind === 'failure' ? o.output : '', /does not implement the grpc health protocol/);
});

test('the timeout (fake clock) is a failure', async () => {
  const clock = new FakeClock();
  const pending = grpcProbe(clock, req(health.port));
  clock.step(5000);
  const o = await pending;
  assert.equal(o.kind, 'failure');
  assert.match(o.kind === 'failure' ? o.output : '', /timeout/);
});
