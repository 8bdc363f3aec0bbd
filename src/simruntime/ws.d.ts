/**
 * The part of `ws` 8.x (installed; no @types/ws package is) that the simulated runtime's
 * WebSocket transport and its tests use. Drop this file if @types/ws is added.
 */
declare module 'ws' {
  import type { EventEmitter } from 'node:events';
  import type { IncomingMessage } from 'node:http';
  import type { Duplex } from 'node:stream';

  export class WebSocket extends EventEmitter {
    static readonly OPEN: number;
    constructor(address: string, protocols?: string | string[], options?: { headers?: Record<string, string>; maxPayload?: number });
    readonly protocol: string;
    readonly readyState: number;
    readonly bufferedAmount: number;
    send(data: Buffer | string, cb?: (err?: Error) => void): void;
    close(code?: number, reason?: string): void;
    terminate(): void;
    on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): this;
    on(event: 'close', listener: (code: number, reason: Buffer) => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
    on(event: 'open', listener: () => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  export interface WebSocketServerOptions {
    noServer?: boolean;
    maxPayload?: number;
    handleProtocols?: (protocols: Set<string>, req: IncomingMessage) => string | false;
  }

  export class WebSocketServer extends EventEmitter {
    constructor(options: WebSocketServerOptions);
    handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, cb: (ws: WebSocket, req: IncomingMessage) => void): void;
    close(): void;
  }

  export default WebSocket;
}
