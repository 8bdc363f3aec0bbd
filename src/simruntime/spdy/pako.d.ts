/**
 * The part of pako 1.x (a pure-JS zlib port; no @types package is installed) that
 * spdy-headers.ts uses: a streaming Inflate with a preset dictionary whose `push(data,
 * Z_SYNC_FLUSH)` hands every byte decodable so far to `onData`, synchronously.
 */
declare module 'pako' {
  export interface InflateOptions {
    dictionary?: Uint8Array;
    chunkSize?: number;
  }
  export class Inflate {
    constructor(options?: InflateOptions);
    /** Non-zero after a failure; `msg` says what. */
    err: number;
    msg: string;
    ended: boolean;
    push(data: Uint8Array, mode: number | boolean): boolean;
    onData(chunk: Uint8Array): void;
    onEnd(status: number): void;
  }
  const pako: { Inflate: typeof Inflate };
  export default pako;
}
