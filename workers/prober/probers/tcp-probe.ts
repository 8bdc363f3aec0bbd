/**
 * TCP socket probes (the kubelet's pkg/probe/tcp): success when a TCP connection to host:port is
 * established within the timeout, closed at once; a refused connection or the timeout is a
 * failure. The deadline runs on the injected Clock.
 */
import net from 'node:net';
import type { Clock, TimerHandle } from '../../../src/shared/clock/clock.js';
import { ProbeError } from '../prober-errors.js';
import { joinHostPort } from '../probe-port.js';
import { PROBE_SUCCESS, probeErrored, probeFailure, type ProbeOutcome } from '../probe-outcome.js';

export interface TcpProbeRequest {
  host: string;
  port: number;
  timeoutMs: number;
  signal: AbortSignal;
}

export function tcpProbe(clock: Clock, req: TcpProbeRequest): Promise<ProbeOutcome> {
  return new Promise<ProbeOutcome>((resolve) => {
    let done = false;
    let timer: TimerHandle | undefined;
    let socket: net.Socket | undefined;
    const finish = (o: ProbeOutcome): void => {
      if (done) return;
      done = true;
      timer?.cancel();
      req.signal.removeEventListener('abort', onAbort);
      socket?.destroy();
      resolve(o);
    };
    const onAbort = (): void => finish(probeErrored(new ProbeError('ERR_PROBE_ABORTED', 'probe aborted')));
    if (req.signal.aborted) return onAbort();
    req.signal.addEventListener('abort', onAbort, { once: true });
    const addr = joinHostPort(req.host, req.port);
    timer = clock.setTimer(req.timeoutMs, () => finish(probeFailure(`dial tcp ${addr}: i/o timeout`)), { unref: true });
    socket = net.connect({ host: req.host, port: req.port });
    socket.once('connect', () => finish(PROBE_SUCCESS));
    socket.once('error', (e: Error) => finish(probeFailure(`dial tcp ${addr}: ${e.message}`)));
  });
}
