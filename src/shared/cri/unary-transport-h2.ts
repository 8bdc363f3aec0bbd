/**
 * The 'h2' unary transport: CRI calls on the purpose-built HTTP/2 client in `h2/` (one
 * H2Channel per CriClient). Per call: the request serialized by the caller, one H2UnaryCall
 * carried by the channel, a local deadline timer (RST_STREAM(CANCEL) + DEADLINE_EXCEEDED), the
 * abort signal likewise (CANCELLED), and the outcome delivered once to `callDone`, which
 * decodes the reply and settles the promise.
 */
import type { Clock, Random } from '../clock/clock.js';
import { criErrorFromGrpc } from './cri-errors.js';
import type { CriError } from './cri-errors.js';
import type { UnaryMethod } from './cri-methods.js';
import { CRI_FLOW_CONTROL_WINDOW, MAX_MESSAGE_BYTES } from './cri-proto.js';
import { GrpcCode } from './grpc-wire.js';
import { H2Channel } from './h2/h2-channel.js';
import { H2UnaryCall } from './h2/h2-unary-call.js';
import type { H2CallOwner } from './h2/h2-unary-call.js';
import { ReplyBuffers } from './h2/reply-buffers.js';
import type { CallOptions } from './runtime-service.js';
import type { UnaryReport, UnaryTransport } from './unary-transport.js';

export interface H2UnaryTransportOptions {
  /** Unix socket path. */
  path: string;
  backoff: { readonly initialMs: number; readonly maxMs: number };
  clock: Clock;
  random: Random;
  report: UnaryReport;
}

/** A call's promise settlers and what its completion reports (the H2UnaryCall's context). */
interface PendingUnary {
  readonly method: UnaryMethod;
  readonly start: number;
  resolve: (res: unknown) => void;
  reject: (err: CriError) => void;
}

function noop(): void {}

export class H2UnaryTransport implements UnaryTransport, H2CallOwner {
  readonly #channel: H2Channel;
  readonly #clock: Clock;
  readonly #report: UnaryReport;
  /** Per method whose deserializer copies (UnaryMethod.copiesReply): its reused reply buffer. */
  readonly #replyBuffers = new Map<string, ReplyBuffers>();

  constructor(opts: H2UnaryTransportOptions) {
    this.#clock = opts.clock;
    this.#report = opts.report;
    this.#channel = new H2Channel({ path: opts.path, recvWindow: CRI_FLOW_CONTROL_WINDOW, backoff: opts.backoff, clock: opts.clock, random: opts.random });
  }

  unary<Res>(m: UnaryMethod, body: Buffer, opts: CallOptions | undefined, timeoutMs: number, start: number): Promise<Res> {
    const pending: PendingUnary = { method: m, start, resolve: noop, reject: noop };
    const promise = new Promise<Res>((resolve, reject) => {
      pending.resolve = resolve as (res: unknown) => void;
      pending.reject = reject;
    });
    const call = new H2UnaryCall(m.name, m.headerPrefix, body, this.#clock.monotonic() + timeoutMs, this, pending, MAX_MESSAGE_BYTES, m.copiesReply ? this.#replyBuffersOf(m.name) : undefined);
    // Unref'd like grpc-js's deadline timers: the connection keeps the process alive while calls are open.
    call.arm(this.#clock.setTimer(timeoutMs, () => call.cancel(GrpcCode.DEADLINE_EXCEEDED, 'Deadline exceeded'), { unref: true }), opts?.signal);
    this.#channel.start(call);
    return promise;
  }

  #replyBuffersOf(method: string): ReplyBuffers {
    let b = this.#replyBuffers.get(method);
    if (b === undefined) this.#replyBuffers.set(method, (b = new ReplyBuffers()));
    return b;
  }

  /** H2CallOwner: the one completion of a call. `reply` may be a lent buffer: decoded here, now. */
  callDone(call: H2UnaryCall, code: number, details: string, reply: Buffer | null): void {
    const p = call.context as PendingUnary;
    const m = p.method;
    let err: CriError | undefined;
    let res: unknown;
    if (code !== GrpcCode.OK || reply === null) {
      err = criErrorFromGrpc(m.name, { code: code === GrpcCode.OK ? GrpcCode.UNIMPLEMENTED : code, details: details === '' ? 'No message received' : details });
    } else {
      try {
        res = m.deserialize(reply);
      } catch (e) {
        err = criErrorFromGrpc(m.name, { code: GrpcCode.INTERNAL, details: `Response message parsing error: ${e instanceof Error ? e.message : String(e)}` });
      }
    }
    this.#report(m.operation, p.start, err);
    if (err !== undefined) p.reject(err);
    else p.resolve(res);
  }

  waitForReady(timeoutMs: number): Promise<void> {
    return this.#channel.waitForReady(timeoutMs).catch((err: unknown) => {
      throw criErrorFromGrpc('connect', { code: GrpcCode.UNAVAILABLE, details: err instanceof Error ? err.message : String(err) });
    });
  }

  close(): void {
    this.#channel.close();
  }
}
