/**
 * A minimal SPDY/3.1 client for tests (the role spdystream plays for kubectl / kube-apiserver):
 * upgrades an HTTP(S) request to SPDY with X-Stream-Protocol-Version offers, opens streams
 * with headers, collects what each stream receives, and sends data / FIN. Built on the
 * product's own frame codec (src/simruntime/spdy), so the sim's server side is exercised
 * against an independent peer only in the e2e tests with real kubectl; this client makes
 * the fast tests possible.
 */
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { encodeData, encodeRstStream, encodeSynStream, FLAG_FIN, SpdyFrameReader, type SpdyFrame } from '../../src/simruntime/spdy/spdy-frames.js';
import { HeaderBlockDecoder, HeaderBlockEncoder } from '../../src/simruntime/spdy/spdy-headers.js';

export interface ClientStream {
  readonly id: number;
  data: Buffer;
  ended: boolean;
  reset: number | undefined;
  replied: boolean;
}

export interface UpgradeResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body when not upgraded. */
  body: string;
  client: SpdyTestClient | undefined;
}

export async function spdyUpgrade(url: string, opts: { protocols: string[]; headers?: Record<string, string>; method?: string; tls?: https.RequestOptions } = { protocols: [] }): Promise<UpgradeResult> {
  const u = new URL(url);
  const mod = u.protocol === 'https:' ? https : http;
  const headers: Record<string, string | string[]> = { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', ...opts.headers };
  if (opts.protocols.length > 0) headers['X-Stream-Protocol-Version'] = opts.protocols;
  return new Promise((resolve, reject) => {
    const req = mod.request(u, { method: opts.method ?? 'POST', headers, ...opts.tls });
    req.on('upgrade', (res, socket, head) => {
      const c = new SpdyTestClient(socket as net.Socket);
      c.feed(head);
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '', client: c });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString(), client: undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

export class SpdyTestClient {
  readonly socket: net.Socket;
  readonly streams = new Map<number, ClientStream>();
  readonly frames: SpdyFrame[] = [];
  goaway = false;
  closed = false;
  readonly #reader = new SpdyFrameReader({ maxFrameBytes: 0xffffff });
  readonly #enc = new HeaderBlockEncoder();
  readonly #dec = new HeaderBlockDecoder({ maxBlockBytes: 1 << 20, maxPairs: 100 });
  #nextId = 1;
  readonly #waiters = new Set<() => void>();

  constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('data', (c: Buffer) => this.feed(c));
    socket.on('close', () => {
      this.closed = true;
      this.#wake();
    });
    socket.on('error', () => {});
  }

  feed(b: Buffer): void {
    this.#reader.push(b);
    for (let f = this.#reader.next(); f !== undefined; f = this.#reader.next()) {
      this.frames.push(f);
      if (f.kind === 'syn_reply') {
        this.#dec.decode(f.headerBlock);
        const s = this.streams.get(f.streamId);
        if (s) s.replied = true;
      } else if (f.kind === 'data') {
        const s = this.streams.get(f.streamId);
        if (s) {
          s.data = Buffer.concat([s.data, f.data]);
          if (f.flags & FLAG_FIN) s.ended = true;
        }
      } else if (f.kind === 'rst_stream') {
        const s = this.streams.get(f.streamId);
        if (s) s.reset = f.status;
      } else if (f.kind === 'goaway') this.goaway = true;
    }
    this.#wake();
  }

  #wake(): void {
    for (const w of [...this.#waiters]) w();
  }

  /** Opens a stream with `headers`; answers it. */
  open(headers: Array<[string, string]>, fin = false): ClientStream {
    const id = this.#nextId;
    this.#nextId += 2;
    const s: ClientStream = { id, data: Buffer.alloc(0), ended: false, reset: undefined, replied: false };
    this.streams.set(id, s);
    this.socket.write(encodeSynStream(id, this.#enc.encode(headers), fin ? FLAG_FIN : 0));
    return s;
  }

  send(s: ClientStream, data: Buffer | string, fin = false): void {
    this.socket.write(encodeData(s.id, Buffer.from(data), fin));
  }

  rst(s: ClientStream, status = 5): void {
    this.socket.write(encodeRstStream(s.id, status));
  }

  raw(b: Buffer): void {
    this.socket.write(b);
  }

  /** Resolves when `cond()` holds (checked on every frame and on close); rejects after `ms`. */
  until(cond: () => boolean, ms: number, what: string): Promise<void> {
    if (cond()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`spdy test client: timed out after ${ms} ms waiting for ${what}`));
      }, ms);
      const check = (): void => {
        if (!cond()) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve();
      };
      this.#waiters.add(check);
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Opens the remote-command streams kubectl opens for these flags (v4 order: error first). */
export function openRemoteCommand(c: SpdyTestClient, f: { stdin?: boolean; stdout?: boolean; stderr?: boolean; tty?: boolean }): Record<string, ClientStream> {
  const out: Record<string, ClientStream> = {};
  out['error'] = c.open([['streamType', 'error']]);
  if (f.stdin) out['stdin'] = c.open([['streamType', 'stdin']]);
  if (f.stdout) out['stdout'] = c.open([['streamType', 'stdout']]);
  if (f.stderr && !f.tty) out['stderr'] = c.open([['streamType', 'stderr']]);
  if (f.tty) out['resize'] = c.open([['streamType', 'resize']]);
  return out;
}
