/**
 * Peers for the HTTP/2 transport tests: a node:http2 server on a unix socket the test scripts
 * per request (GOAWAY, RST_STREAM, windows, closing the socket), and a raw-frame peer that
 * writes exactly the frames a test gives it (padding, CONTINUATION, split prefixes, bad HPACK).
 */
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadCriProto } from '../../../src/shared/cri/cri-proto.js';
import { FrameReader, FrameType, writeFrameHeader } from '../../../src/shared/cri/h2/h2-frames.js';

export function tempSocket(prefix: string): { dir: string; socket: string; cleanup(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, socket: path.join(dir, 'peer.sock'), cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** A serialized response message of `method` (RuntimeService or ImageService). */
export function responseMessage(method: string, value: unknown): Buffer {
  const p = loadCriProto();
  const def = p.runtime[method] ?? p.image[method];
  if (def === undefined) throw new Error(`no method ${method}`);
  return def.responseSerialize(value);
}

export function requestOf(method: string, body: Buffer): unknown {
  const p = loadCriProto();
  const def = p.runtime[method] ?? p.image[method];
  if (def === undefined) throw new Error(`no method ${method}`);
  return def.requestDeserialize(body.subarray(5));
}

export function grpcFramed(msg: Buffer, flag = 0): Buffer {
  const b = Buffer.alloc(5 + msg.length);
  b[0] = flag;
  b.writeUInt32BE(msg.length, 1);
  msg.copy(b, 5);
  return b;
}

export const VERSION_REPLY = Object.freeze({ version: '0.1.0', runtimeName: 'peer', runtimeVersion: '1', runtimeApiVersion: 'v1' });

/** Replies OK with `msg`, optionally in `chunk`-byte writes. */
export function replyOk(stream: http2.ServerHttp2Stream, msg: Buffer, chunk = 0): void {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  const framed = grpcFramed(msg);
  if (chunk <= 0) {
    stream.end(framed);
    return;
  }
  for (let i = 0; i < framed.length; i += chunk) stream.write(framed.subarray(i, i + chunk));
  stream.end();
}

export interface ScriptedServer {
  readonly socket: string;
  readonly server: http2.Http2Server;
  /** Sessions accepted so far. */
  readonly sessions: http2.ServerHttp2Session[];
  /** RST codes of streams the server saw closed, by request order. */
  readonly closedCodes: number[];
  /** The raw sockets under the sessions (destroying one is the peer dropping the connection). */
  readonly sockets: net.Socket[];
  /** Emits 'request' after the handler ran for a request and 'closed' when a stream closes. */
  readonly events: EventEmitter;
  close(): Promise<void>;
}

export type Handler = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, body: Buffer, session: http2.ServerHttp2Session) => void;

/** An http2 server on `socket`; `handler` gets every request once its body has arrived. */
export async function scriptedServer(socket: string, handler: Handler, settings: http2.Settings = {}): Promise<ScriptedServer> {
  const sessions: http2.ServerHttp2Session[] = [];
  const closedCodes: number[] = [];
  const sockets: net.Socket[] = [];
  const events = new EventEmitter();
  const server = http2.createServer({ settings });
  server.on('connection', (s: net.Socket) => sockets.push(s));
  server.on('session', (s) => sessions.push(s));
  server.on('stream', (stream, headers) => {
    const parts: Buffer[] = [];
    stream.on('data', (c: Buffer) => parts.push(c));
    stream.on('close', () => {
      closedCodes.push(stream.rstCode);
      events.emit('closed');
    });
    stream.on('error', () => undefined);
    stream.on('end', () => {
      handler(stream, headers, Buffer.concat(parts), stream.session as http2.ServerHttp2Session);
      events.emit('request');
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return {
    socket,
    server,
    sessions,
    closedCodes,
    sockets,
    events,
    close: () => new Promise<void>((resolve) => {
      for (const s of sessions) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/** A complete frame. */
export function rawFrame(type: number, flags: number, streamId: number, payload: Buffer | string = Buffer.alloc(0)): Buffer {
  const p = typeof payload === 'string' ? Buffer.from(payload, 'hex') : payload;
  const b = Buffer.alloc(9 + p.length);
  writeFrameHeader(b, 0, p.length, type, flags, streamId);
  p.copy(b, 9);
  return b;
}

/** HPACK literal without indexing, new name, no Huffman (names/values < 127 octets). */
export function hpackLiteral(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0, name.length]), Buffer.from(name, 'latin1'), Buffer.from([value.length]), Buffer.from(value, 'latin1')]);
}

export const RESPONSE_HEADERS = Buffer.concat([Buffer.from([0x88]), hpackLiteral('content-type', 'application/grpc')]);
export const OK_TRAILERS = hpackLiteral('grpc-status', '0');

export interface RawPeer {
  readonly socket: string;
  /** Client frames received: [type, flags, streamId, payload]. */
  readonly frames: Array<[number, number, number, Buffer]>;
  /** Resolves with the next client frame of `type`; rejects after `ms`. */
  next(type: number, ms?: number): Promise<[number, number, number, Buffer]>;
  connections: number;
  close(): Promise<void>;
}

/**
 * A raw HTTP/2 peer: sends its SETTINGS on connect, ACKs nothing by itself, and calls
 * `onHeaders(streamId, write, conn)` for each client HEADERS frame.
 */
export async function rawPeer(socket: string, onHeaders: (streamId: number, write: (b: Buffer) => void, conn: net.Socket) => void): Promise<RawPeer> {
  const frames: Array<[number, number, number, Buffer]> = [];
  const waiters: Array<{ type: number; resolve: (f: [number, number, number, Buffer]) => void }> = [];
  const conns = new Set<net.Socket>();
  const peer: RawPeer = {
    socket,
    frames,
    connections: 0,
    next(type, ms = 5_000) {
      const seen = frames.find((f) => f[0] === type && !consumed.has(f));
      if (seen) {
        consumed.add(seen);
        return Promise.resolve(seen);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`no frame of type ${type} from the client within ${ms} ms`));
        }, ms);
        const w = { type, resolve: (f: [number, number, number, Buffer]) => { clearTimeout(timer); resolve(f); } };
        waiters.push(w);
      });
    },
    close: () => new Promise<void>((resolve) => {
      for (const c of conns) c.destroy();
      server.close(() => resolve());
    }),
  };
  const consumed = new Set<[number, number, number, Buffer]>();
  const server = net.createServer((conn) => {
    peer.connections++;
    conns.add(conn);
    conn.on('error', () => undefined);
    let preface = 24;
    const write = (b: Buffer): void => void (conn.destroyed ? undefined : conn.write(b));
    const reader = new FrameReader({
      onFrame(type, flags, streamId, payload) {
        const f: [number, number, number, Buffer] = [type, flags, streamId, Buffer.from(payload)];
        frames.push(f);
        const i = waiters.findIndex((w) => w.type === type);
        if (i >= 0) {
          consumed.add(f);
          waiters.splice(i, 1)[0]?.resolve(f);
        }
        if (type === FrameType.HEADERS) onHeaders(streamId, write, conn);
      },
      onFrameError() {
        conn.destroy();
      },
    });
    conn.on('data', (chunk: Buffer) => {
      if (preface > 0) {
        const n = Math.min(preface, chunk.length);
        preface -= n;
        chunk = chunk.subarray(n);
      }
      if (chunk.length > 0) reader.push(chunk);
    });
    write(rawFrame(FrameType.SETTINGS, 0, 0));
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return peer;
}

/** Resolves once `pred()` holds, re-checked on each `event` of `emitter`; rejects after `ms`. */
export function waitFor(emitter: EventEmitter, event: string, pred: () => boolean, what: string, ms = 5_000): Promise<void> {
  if (pred()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onEvent = (): void => {
      if (!pred()) return;
      clearTimeout(timer);
      emitter.off(event, onEvent);
      resolve();
    };
    const timer = setTimeout(() => {
      emitter.off(event, onEvent);
      reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
    }, ms);
    emitter.on(event, onEvent);
  });
}
