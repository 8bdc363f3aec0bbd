/**
 * The listen/close lifecycle both HTTP ports share (agent-server.ts, the read-only port;
 * secure-server.ts, the secure port): listen() once (a bind error rejects it); close() stops
 * accepting, ends idle keep-alive connections and resolves when in-flight responses finished;
 * destroy() drops every connection now. close() and listen() are idempotent (the same promise).
 */
import type http from 'node:http';
import type https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface BoundAddress {
  address: string;
  port: number;
}

export interface ServerLifecycle {
  /** Starts listening; resolves with the bound address (port 0 picks a free one). */
  listen(): Promise<BoundAddress>;
  close(): Promise<void>;
  destroy(): void;
}

export interface ServerLifecycleHooks {
  /** Told the bound address once listening. */
  onListening?: (a: BoundAddress) => void;
  /** Ends long-lived responses (log follows) on close() and destroy(). */
  abortStreams?: () => void;
}

export function serverLifecycle(server: http.Server | https.Server, port: number, address: string, hooks: ServerLifecycleHooks = {}): ServerLifecycle {
  let listening: Promise<BoundAddress> | undefined;
  let closing: Promise<void> | undefined;
  return {
    listen() {
      listening ??= new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, address, () => {
          server.off('error', reject);
          const a = server.address() as AddressInfo;
          const bound = { address: a.address, port: a.port };
          hooks.onListening?.(bound);
          resolve(bound);
        });
      });
      return listening;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        hooks.abortStreams?.();
        server.closeIdleConnections();
      });
      return closing;
    },
    destroy() {
      hooks.abortStreams?.();
      server.closeAllConnections();
      if (server.listening) server.close();
    },
  };
}
