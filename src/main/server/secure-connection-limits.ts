/**
 * Connection caps of the secure port: at most `maxConnectionsPerClient` open connections from
 * one client address and `maxConnections` in all. A connection over either cap is destroyed as
 * it is accepted (before the TLS handshake costs anything). Counted on the raw TCP socket
 * ('connection' event of the https server), released on its 'close'.
 *
 * The API server proxies every `kubectl logs -f` / exec through its own address, so the per-client
 * cap must leave room for it; the defaults are sized for that, not for one user.
 */
import type https from 'node:https';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  /** Open connections from one client IP address. */
  maxConnectionsPerClient: number;
  /** Open connections in all. */
  maxConnections: number;
}

export const CONNECTION_LIMIT_DEFAULTS: Readonly<ConnectionLimits> = Object.freeze({ maxConnectionsPerClient: 256, maxConnections: 1024 });

export type ConnectionRefusal = 'per-client' | 'total';

/** Validates `limits` (positive integers) once, naming the bad field. */
export function validateConnectionLimits(limits: ConnectionLimits): ConnectionLimits {
  for (const k of ['maxConnectionsPerClient', 'maxConnections'] as const) {
    const v = limits[k];
    if (!Number.isInteger(v) || v < 1) throw new TypeError(`secure server limits.${k} must be a positive integer, got ${String(v)}`);
  }
  return limits;
}

/**
 * Enforces `limits` on `server`; `onRefused` is told of each refused connection (for a log
 * line; it must not throw). Returns the current count of open connections, for tests and stats.
 */
export function enforceConnectionLimits(server: https.Server, limits: ConnectionLimits, onRefused: (address: string, why: ConnectionRefusal) => void): () => number {
  const perClient = new Map<string, number>();
  let total = 0;
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const mine = perClient.get(address) ?? 0;
    const why: ConnectionRefusal | undefined = mine >= limits.maxConnectionsPerClient ? 'per-client' : total >= limits.maxConnections ? 'total' : undefined;
    if (why !== undefined) {
      onRefused(address, why);
      socket.destroy();
      return;
    }
    perClient.set(address, mine + 1);
    total++;
    socket.once('close', () => {
      total--;
      const n = (perClient.get(address) ?? 1) - 1;
      if (n <= 0) perClient.delete(address);
      else perClient.set(address, n);
    });
  });
  return () => total;
}
