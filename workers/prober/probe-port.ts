/**
 * Port resolution for HTTP, TCP and gRPC probes: the kubelet's probe.ResolveContainerPort. A
 * number is used as is; a string is a named port of the container (ports[].name) or, as a last
 * resort, a number written as a string. The result must be in 1..65535.
 */
import type { IntOrString, V1Container } from '@kubernetes/client-node';
import { ProbeError } from './prober-errors.js';

/** The port number, or a ProbeError (code ERR_PROBE_PORT) as data. */
export function resolveProbePort(port: IntOrString, container: V1Container): number | ProbeError {
  let n: number;
  if (typeof port === 'number') {
    n = port;
  } else {
    const named = container.ports?.find((p) => p.name === port);
    if (named) n = named.containerPort;
    else if (/^[0-9]+$/.test(port)) n = Number(port);
    else return new ProbeError('ERR_PROBE_PORT', `couldn't find port ${JSON.stringify(port)} in container ${JSON.stringify(container.name)}`);
  }
  if (Number.isInteger(n) && n > 0 && n < 65536) return n;
  return new ProbeError('ERR_PROBE_PORT', `invalid port number: ${String(n)}`);
}

/** `host:port`, bracketing IPv6 literals (Go's net.JoinHostPort). */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
