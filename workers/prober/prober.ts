/**
 * Runs one probe once for a probe worker: the kubelet's prober.probe / runProbe. Picks the
 * handler, resolves host and port, and retries a probe that *errored* (could not be run) up to
 * {@link MAX_PROBE_ATTEMPTS} times in total; failures and successes are returned at once. The
 * caller applies thresholds.
 *
 * Host: the probe's `host` if set, else the target's default host (the pod IP, or the host IP
 * for host-network pods). With no host known yet (the pod has no IP), the probe errors rather
 * than dialling an empty address.
 */
import type { V1Container } from '@kubernetes/client-node';
import type { Clock } from '../../src/shared/clock/clock.js';
import { ProbeError } from './prober-errors.js';
import { probeErrored, type ProbeOutcome } from './probe-outcome.js';
import { resolveProbePort } from './probe-port.js';
import { DEFAULT_PROBE_USER_AGENT, type ProbeSpec } from './probe-spec.js';
import { execProbe, type ExecRuntime } from './probers/exec-probe.js';
import { grpcProbe } from './probers/grpc-probe.js';
import { httpProbe } from './probers/http-probe.js';
import { tcpProbe } from './probers/tcp-probe.js';

/** The kubelet's maxProbeRetries: attempts per probe when it errors. */
export const MAX_PROBE_ATTEMPTS = 3;

/** What a probe needs to know about its target; a probe worker implements it (no per-probe object). */
export interface ProbeTarget {
  /** The CRI id of the container instance being probed. */
  readonly containerId: string;
  readonly container: V1Container;
  /** Pod IP, or the host IP for a host-network pod; '' when not known yet. */
  readonly defaultHost: string;
  /** Aborted when the worker stops; cancels an in-flight probe. */
  readonly signal: AbortSignal;
}

export interface Prober {
  run(spec: ProbeSpec, target: ProbeTarget): Promise<ProbeOutcome>;
}

export interface ProberDeps {
  runtime: ExecRuntime;
  clock: Clock;
  /** User-Agent of gRPC probes (HTTP probes carry theirs in the normalised spec headers). */
  userAgent?: string;
}

export function createProber(deps: ProberDeps): Prober {
  const userAgent = deps.userAgent ?? DEFAULT_PROBE_USER_AGENT;
  const once = (spec: ProbeSpec, t: ProbeTarget): Promise<ProbeOutcome> => {
    const h = spec.handler;
    const timeoutMs = spec.timeoutSeconds * 1000;
    switch (h.kind) {
      case 'exec':
        return execProbe(deps.runtime, { containerId: t.containerId, command: h.command, timeoutSeconds: spec.timeoutSeconds, signal: t.signal });
      case 'httpGet': {
        const port = resolveProbePort(h.port, t.container);
        if (port instanceof ProbeError) return Promise.resolve(probeErrored(port));
        const host = h.host !== '' ? h.host : t.defaultHost;
        if (host === '') return Promise.resolve(noHost());
        return httpProbe(deps.clock, { scheme: h.scheme, host, port, path: h.path, headers: h.headers, timeoutMs, signal: t.signal });
      }
      case 'tcpSocket': {
        const port = resolveProbePort(h.port, t.container);
        if (port instanceof ProbeError) return Promise.resolve(probeErrored(port));
        const host = h.host !== '' ? h.host : t.defaultHost;
        if (host === '') return Promise.resolve(noHost());
        return tcpProbe(deps.clock, { host, port, timeoutMs, signal: t.signal });
      }
      case 'grpc': {
        const port = resolveProbePort(h.port, t.container);
        if (port instanceof ProbeError) return Promise.resolve(probeErrored(port));
        if (t.defaultHost === '') return Promise.resolve(noHost());
        return grpcProbe(deps.clock, { host: t.defaultHost, port, service: h.service, timeoutMs, userAgent, signal: t.signal });
      }
      case 'none':
        return Promise.resolve(probeErrored(new ProbeError('ERR_PROBE_NO_HANDLER', `missing probe handler for container ${t.container.name}`)));
      default: {
        const never: never = h;
        throw new Error(`unknown probe handler ${JSON.stringify(never)}`);
      }
    }
  };
  return {
    async run(spec, target) {
      let outcome = await once(spec, target);
      for (let attempt = 1; attempt < MAX_PROBE_ATTEMPTS && outcome.kind === 'error' && isRetryable(outcome.error); attempt++) {
        outcome = await once(spec, target);
      }
      return outcome;
    },
  };
}

function noHost(): ProbeOutcome {
  return probeErrored(new ProbeError('ERR_PROBE_NO_HOST', 'no host to probe: the pod has no IP yet'));
}

/** Configuration errors and aborts do not improve with a retry; runtime hiccups might. */
function isRetryable(err: ProbeError): boolean {
  switch (err.code) {
    case 'ERR_PROBE_RUNTIME':
    case 'ERR_PROBE_BODY':
      return true;
    case 'ERR_PROBE_PORT':
    case 'ERR_PROBE_NO_HOST':
    case 'ERR_PROBE_NO_HANDLER':
    case 'ERR_PROBE_ABORTED':
      return false;
    default: {
      const never: never = err.code;
      return never;
    }
  }
}
