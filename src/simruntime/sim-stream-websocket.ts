/**
 * The WebSocket transport of the streaming server (the kubelet's wsstream channel protocols,
 * over the `ws` package): every message is one channel's bytes, prefixed by the channel
 * number — a byte with `*channel.k8s.io`, an ASCII digit followed by base64 with
 * `*base64.channel.k8s.io`. Channels: 0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize; with
 * v5 the client's `[255, 0]` closes stdin. Port-forward: per port i, channel 2i carries data and
 * 2i+1 errors, and the server's first message on each is the port (uint16 little-endian).
 *
 * Bounds: a message is at most 1 MiB (`maxPayload`); stdin is paused by the socket when the
 * process does not read (ws's own backpressure); the session ends when the socket closes.
 */
import type http from 'node:http';
import net from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { RemoteCommandProtocol, RemoteCommandStreams } from './sim-remotecommand.js';
import { parsePortHeader } from './sim-stream-spdy.js';
import type { SimStreamServer, SimStreamServerDeps } from './sim-stream-server.js';
import type { StreamRequest } from './sim-stream-tokens.js';

const MAX_MESSAGE_BYTES = 1024 * 1024;

/** Sub-protocols accepted for exec/attach, preferred first. */
export const WS_REMOTECOMMAND_PROTOCOLS: readonly string[] = Object.freeze([
  'v5.channel.k8s.io',
  'v4.channel.k8s.io',
  'v4.base64.channel.k8s.io',
  'v3.channel.k8s.io',
  'v2.channel.k8s.io',
  'channel.k8s.io',
  'base64.channel.k8s.io',
]);
export const WS_PORTFORWARD_PROTOCOLS: readonly string[] = Object.freeze(['v4.channel.k8s.io', 'v4.base64.channel.k8s.io']);

/** The sub-protocol chosen for each request before the handshake (ws asks handleProtocols). */
const chosen = new WeakMap<http.IncomingMessage, string>();
const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES, handleProtocols: (_offered, req) => chosen.get(req) ?? false });

export interface ServeWebSocketArgs {
  req: http.IncomingMessage;
  socket: net.Socket;
  head: Buffer;
  request: StreamRequest;
  server: SimStreamServer;
  deps: SimStreamServerDeps;
}

/** The remote-command protocol version a WebSocket sub-protocol speaks. */
function versionOf(p: string): RemoteCommandProtocol {
  if (p.startsWith('v5.')) return 'v5.channel.k8s.io';
  if (p.startsWith('v4.')) return 'v4.channel.k8s.io';
  if (p.startsWith('v3.')) return 'v3.channel.k8s.io';
  if (p.startsWith('v2.')) return 'v2.channel.k8s.io';
  return 'channel.k8s.io';
}

export function serveWebSocket(a: ServeWebSocketArgs): { end: () => void; done: Promise<void> } {
  const offered = String(a.req.headers['sec-websocket-protocol'] ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  const accepted = a.request.kind === 'portforward' ? WS_PORTFORWARD_PROTOCOLS : WS_REMOTECOMMAND_PROTOCOLS;
  const protocol = accepted.find((p) => offered.includes(p));
  let ws: WebSocket | undefined;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  if (protocol === undefined) {
    a.socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nunable to upgrade: no supported sub-protocol among [${offered.join(' ')}]\n`);
    resolveDone();
    return { end: () => a.socket.destroy(), done };
  }
  chosen.set(a.req, protocol);
  wss.handleUpgrade(a.req, a.socket, a.head, (sock) => {
    ws = sock;
    sock.on('close', () => resolveDone());
    sock.on('error', () => sock.terminate());
    if (a.request.kind === 'portforward') portForward(sock, protocol, a);
    else remoteCommand(sock, protocol, a.request, a);
  });
  // handleUpgrade answers a bad handshake itself and destroys the socket.
  a.socket.once('close', () => resolveDone());
  return { end: () => (ws !== undefined ? ws.terminate() : a.socket.destroy()), done };
}

function encoder(protocol: string): (channel: number, data: Buffer) => Buffer | string {
  const base64 = protocol.includes('base64');
  return (channel, data) => (base64 ? String.fromCharCode(0x30 + channel) + data.toString('base64') : Buffer.concat([Buffer.from([channel]), data]));
}

/** A channel's output side: writes become messages; backpressure from the socket's buffer. */
function channelWriter(ws: WebSocket, channel: number, encode: (c: number, d: Buffer) => Buffer | string): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (ws.readyState !== 1) return cb(new Error('websocket is closed'));
      ws.send(encode(channel, chunk), (err) => cb(err ?? null));
    },
  });
}

function decode(protocol: string, data: Buffer, isBinary: boolean): { channel: number; payload: Buffer } | undefined {
  if (data.length === 0) return undefined;
  if (protocol.includes('base64')) {
    if (isBinary) return undefined;
    const ch = data[0]! - 0x30;
    if (ch < 0 || ch > 9) return undefined;
    return { channel: ch, payload: Buffer.from(data.subarray(1).toString('latin1'), 'base64') };
  }
  return { channel: data[0]!, payload: data.subarray(1) };
}

function remoteCommand(ws: WebSocket, protocol: string, request: Extract<StreamRequest, { kind: 'exec' | 'attach' }>, a: ServeWebSocketArgs): void {
  const encode = encoder(protocol);
  const stdin = request.stdin ? new PassThrough() : null;
  const resize = request.tty ? new PassThrough() : null;
  const streams: RemoteCommandStreams = {
    stdin,
    stdout: request.stdout ? channelWriter(ws, 1, encode) : null,
    stderr: request.stderr && !request.tty ? channelWriter(ws, 2, encode) : null,
    error: channelWriter(ws, 3, encode),
    resize,
  };
  const ac = new AbortController();
  ws.on('message', (data, isBinary) => {
    const m = decode(protocol, data, isBinary);
    if (m === undefined) return;
    if (m.channel === 0 && stdin !== null && !stdin.writableEnded) stdin.write(m.payload);
    else if (m.channel === 4 && resize !== null && !resize.writableEnded) resize.write(m.payload);
    else if (m.channel === 255 && m.payload[0] === 0) stdin?.end();
  });
  ws.on('close', () => {
    stdin?.end();
    ac.abort();
  });
  a.server.runRemoteCommand(request, versionOf(protocol), streams, ac.signal).then(
    () => ws.close(1000),
    (err: unknown) => {
      a.deps.reportError(`sim-runtime: websocket ${request.kind} failed: ${err instanceof Error ? err.message : String(err)}`);
      ws.terminate();
    },
  );
}

function portForward(ws: WebSocket, protocol: string, a: ServeWebSocketArgs): void {
  const request = a.request as Extract<StreamRequest, { kind: 'portforward' }>;
  const encode = encoder(protocol);
  const ports = new URL(a.req.url ?? '/', 'http://x').searchParams.getAll('port').flatMap((s) => s.split(','));
  const parsed = ports.map((p) => parsePortHeader(p));
  const bad = parsed.find((p) => typeof p === 'string');
  if (ports.length === 0 || bad !== undefined) {
    ws.close(1008, typeof bad === 'string' ? bad.slice(0, 120) : 'query parameter "port" is required');
    return;
  }
  const conns: net.Socket[] = [];
  (parsed as number[]).forEach((port, i) => {
    const le = Buffer.alloc(2);
    le.writeUInt16LE(port);
    ws.send(encode(2 * i, le));
    ws.send(encode(2 * i + 1, le));
    const hostPort = a.deps.ports.lookup(request.sandboxId, port);
    if (hostPort === undefined) {
      ws.send(encode(2 * i + 1, Buffer.from(`error forwarding port ${port} to pod ${request.sandboxId}, uid : connection refused`)));
      return;
    }
    const c = net.connect({ host: '127.0.0.1', port: hostPort });
    conns[i] = c;
    c.on('data', (d: Buffer) => ws.send(encode(2 * i, d)));
    c.on('error', (e) => ws.send(encode(2 * i + 1, Buffer.from(`error forwarding port ${port} to pod ${request.sandboxId}, uid : ${e.message}`))));
  });
  ws.on('message', (data, isBinary) => {
    const m = decode(protocol, data, isBinary);
    if (m === undefined || m.channel % 2 !== 0) return;
    conns[m.channel / 2]?.write(m.payload);
  });
  ws.on('close', () => {
    for (const c of conns) c?.destroy();
  });
}
