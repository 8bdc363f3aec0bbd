/**
 * The 'grpc-js' unary transport: CRI calls on a @grpc/grpc-js channel driven directly
 * (channel.createCall + a minimal listener), the same wire exchange as grpc-js's
 * Client.makeUnaryRequest without its per-call layers: the call emitter, the interceptor chain,
 * the caller-stack Error it captures for every call and a Metadata copy (issue 15). What
 * grpc-js still does per call: the deadline (grpc-timeout header and its timer), transparent
 * retry, the compression filter's headers. Kept selectable beside 'h2' for A/B measurements.
 */
import * as grpc from '@grpc/grpc-js';
import { CriError, criErrorFromGrpc } from './cri-errors.js';
import type { UnaryMethod } from './cri-methods.js';
import type { CallOptions } from './runtime-service.js';
import { MAX_WIRE_TIMEOUT_MS, type UnaryReport, type UnaryTransport } from './unary-transport.js';

export interface GrpcJsUnaryTransportOptions {
  /** The grpc-js client whose channel carries the calls (CriClient shares it with GetContainerEvents). */
  client: () => grpc.Client;
  report: UnaryReport;
}

function noop(): void {}

export class GrpcJsUnaryTransport implements UnaryTransport {
  readonly #client: () => grpc.Client;
  readonly #report: UnaryReport;
  #closed = false;

  constructor(opts: GrpcJsUnaryTransportOptions) {
    this.#client = opts.client;
    this.#report = opts.report;
  }

  /** Exactly one of resolve/reject runs, once: after the status (the listener's last event), or before the call starts (channel shut down). */
  unary<Res>(m: UnaryMethod, body: Buffer, opts: CallOptions | undefined, timeoutMs: number, start: number): Promise<Res> {
    const method = m.name;
    return new Promise<Res>((resolve, reject) => {
      const finish = (err: CriError | undefined, res?: Res): void => {
        this.#report(m.operation, start, err);
        if (err) reject(err);
        else resolve(res as Res);
      };
      const signal = opts?.signal;
      let call: ReturnType<grpc.Channel['createCall']>;
      try {
        if (this.#closed) throw new Error('Channel has been shut down');
        const channel = this.#client().getChannel() as grpc.Channel;
        // grpc-js derives grpc-timeout from the deadline and keeps no longer local timer: the
        // deadline itself is capped (a 24.8-day call ends a few minutes early at worst).
        call = channel.createCall(m.path, Date.now() + Math.min(timeoutMs, MAX_WIRE_TIMEOUT_MS), undefined, null, undefined);
      } catch (err) {
        finish(new CriError('ERR_CRI_UNAVAILABLE', method, `${method}: ${err instanceof Error ? err.message : String(err)}`));
        return;
      }
      const onAbort = (): void => call.cancelWithStatus(grpc.status.CANCELLED, 'Cancelled on client');
      let reply: Buffer | null = null;
      call.start(new grpc.Metadata(), {
        onReceiveMetadata: noop,
        onReceiveMessage: (message: Buffer) => {
          if (reply !== null) call.cancelWithStatus(grpc.status.UNIMPLEMENTED, 'Too many responses received');
          else reply = message;
        },
        onReceiveStatus: (status: grpc.StatusObject) => {
          signal?.removeEventListener('abort', onAbort);
          if (status.code !== grpc.status.OK) {
            finish(criErrorFromGrpc(method, status));
            return;
          }
          if (reply === null) {
            finish(criErrorFromGrpc(method, { code: grpc.status.UNIMPLEMENTED, details: 'No message received' }));
            return;
          }
          let res: Res;
          try {
            res = m.deserialize(reply) as Res;
          } catch (err) {
            finish(criErrorFromGrpc(method, { code: grpc.status.INTERNAL, details: `Response message parsing error: ${err instanceof Error ? err.message : String(err)}` }));
            return;
          }
          finish(undefined, res);
        },
      });
      call.sendMessageWithContext({}, body);
      call.halfClose();
      call.startRead();
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  waitForReady(timeoutMs: number): Promise<void> {
    const client = this.#client();
    return new Promise((resolve, reject) => {
      client.waitForReady(Date.now() + timeoutMs, (err) => {
        if (err) reject(criErrorFromGrpc('connect', Object.assign(err, { code: grpc.status.UNAVAILABLE })));
        else resolve();
      });
    });
  }

  /** The grpc-js client itself is closed by its owner (CriClient); this only refuses new calls. */
  close(): void {
    this.#closed = true;
  }
}
