/**
 * gRPC probes (the kubelet's pkg/probe/grpc): one grpc.health.v1.Health/Check call over a fresh
 * plaintext channel to host:port with the probe's service name, within the timeout (on the
 * injected Clock). SERVING is success; any other status, an RPC error (UNIMPLEMENTED included),
 * a connection failure or the timeout is a failure, with the kubelet's messages.
 *
 * The two health messages are encoded by hand (one string field, one enum field) rather than
 * loading a .proto for them.
 */
import * as grpc from '@grpc/grpc-js';
import type { Clock, TimerHandle } from '../../../src/shared/clock/clock.js';
import { ProbeError } from '../prober-errors.js';
import { joinHostPort } from '../probe-port.js';
import { PROBE_SUCCESS, probeErrored, probeFailure, type ProbeOutcome } from '../probe-outcome.js';

export interface GrpcProbeRequest {
  host: string;
  port: number;
  service: string;
  timeoutMs: number;
  userAgent: string;
  signal: AbortSignal;
}

const SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'] as const;

/** HealthCheckRequest { string service = 1; } */
export function encodeHealthCheckRequest(service: string): Buffer {
  const body = Buffer.from(service, 'utf8');
  if (body.length === 0) return Buffer.alloc(0);
  const len: number[] = [];
  for (let n = body.length; ; n >>>= 7) {
    if (n < 0x80) {
      len.push(n);
      break;
    }
    len.push((n & 0x7f) | 0x80);
  }
  return Buffer.concat([Buffer.from([0x0a, ...len]), body]);
}

/** HealthCheckResponse { ServingStatus status = 1; }: the status number (0 when absent). */
export function decodeHealthCheckStatus(buf: Buffer): number {
  let status = 0;
  let i = 0;
  while (i < buf.length) {
    const tag = buf[i++] ?? 0;
    const wire = tag & 7;
    let v = 0;
    if (wire === 0) {
      for (let shift = 0; i < buf.length; shift += 7) {
        const b = buf[i++] ?? 0;
        v += (b & 0x7f) * 2 ** shift;
        if (b < 0x80) break;
      }
      if (tag >> 3 === 1) status = v;
    } else if (wire === 2) {
      let len = 0;
      for (let shift = 0; i < buf.length; shift += 7) {
        const b = buf[i++] ?? 0;
        len += (b & 0x7f) * 2 ** shift;
        if (b < 0x80) break;
      }
      i += len;
    } else {
      break; // fixed32/64 never appear in this message; stop rather than misparse
    }
  }
  return status;
}

export function grpcProbe(clock: Clock, req: GrpcProbeRequest): Promise<ProbeOutcome> {
  return new Promise<ProbeOutcome>((resolve) => {
    const addr = joinHostPort(req.host, req.port);
    let done = false;
    let timer: TimerHandle | undefined;
    let call: grpc.ClientUnaryCall | undefined;
    const client = new grpc.Client(addr, grpc.credentials.createInsecure(), {
      'grpc.primary_user_agent': req.userAgent,
      'grpc.enable_retries': 0,
    });
    const finish = (o: ProbeOutcome): void => {
      if (done) return;
      done = true;
      timer?.cancel();
      req.signal.removeEventListener('abort', onAbort);
      call?.cancel();
      client.close();
      resolve(o);
    };
    const onAbort = (): void => finish(probeErrored(new ProbeError('ERR_PROBE_ABORTED', 'probe aborted')));
    if (req.signal.aborted) return onAbort();
    req.signal.addEventListener('abort', onAbort, { once: true });
    timer = clock.setTimer(req.timeoutMs, () =>
      finish(probeFailure(`timeout: health rpc did not complete within ${req.timeoutMs / 1000}s`)), { unref: true });
    call = client.makeUnaryRequest<string, number>(
      '/grpc.health.v1.Health/Check',
      encodeHealthCheckRequest,
      decodeHealthCheckStatus,
      req.service,
      new grpc.Metadata(),
      {},
      (err, status) => {
        if (err) {
          if (err.code === grpc.status.UNIMPLEMENTED) {
            finish(probeFailure(`error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${err.details}`));
          } else if (err.code === grpc.status.UNAVAILABLE) {
            finish(probeFailure(`error: failed to connect service at "${addr}": ${err.details}`));
          } else {
            finish(probeFailure(`error: health rpc probe failed: ${grpc.status[err.code] ?? err.code}: ${err.details}`));
          }
          return;
        }
        if (status === 1) finish(PROBE_SUCCESS);
        else finish(probeFailure(`service unhealthy (responded with "${SERVING_STATUS[status ?? 0] ?? String(status)}")`));
      },
    );
  });
}
