/**
 * The simulated runtime's CRI streaming server (what containerd runs on stream_server_address,
 * built on the kubelet's pkg/kubelet/cri/streaming): an HTTP server on a loopback port it picks.
 * CRI Exec/Attach/PortForward store their request under a token (sim-stream-tokens.ts) and
 * answer `http://127.0.0.1:PORT/{exec,attach,portforward}/TOKEN`; the client (the kubelet's
 * proxy, or crictl) upgrades a request to that URL:
 *   - SPDY/3.1 (`Upgrade: SPDY/3.1`, X-Stream-Protocol-Version negotiated: v4…v1 channel
 *     protocols for exec/attach, portforward.k8s.io for port-forward; sim-stream-spdy.ts);
 *   - WebSocket (`Upgrade: websocket`; sim-stream-websocket.ts).
 * A token is single use; an unknown or expired one answers 404 (as the kubelet's server does).
 *
 * Bounds: sessions at once (`maxSessions`, 1000; more answer 429), an idle timeout per
 * connection (`idleTimeoutMs`, 4 h, the kubelet's default), header size (16 KiB).
 * Lifecycle: `close()` stops accepting and ends every session; idempotent.
 */
import type { Readable } from 'node:stream';
import http from 'node:http';
import type net from 'node:net';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../shared/clock/clock.js';
import { CriError } from '../shared/cri/cri-errors.js';
import { SpdySession } from './spdy/spdy-session.js';
import { runStreamingExec, type ExecOutcome, type ExecTarget } from './sim-exec-stream.js';
import type { SimPortRegistry } from './sim-ports.js';
import { endRemoteCommand, ResizeReader, SPDY_REMOTECOMMAND_PROTOCOLS, type RemoteCommandProtocol, type RemoteCommandStreams } from './sim-remotecommand.js';
import { gatherRemoteCommandStreams, portForwardSpdy } from './sim-stream-spdy.js';
import { StreamTokenCache, type StreamRequest } from './sim-stream-tokens.js';
import { serveWebSocket } from './sim-stream-websocket.js';

/** What attach reads from a running container. */
export interface AttachSink {
  output(stream: 'stdout' | 'stderr', text: string): void;
  exited(code: number): void;
}

export interface SimStreamServerDeps {
  clock: Clock;
  ports: SimPortRegistry;
  /** The running container to exec in, or undefined when it is gone or not running. */
  execTarget(containerId: string): ExecTarget | undefined;
  /** Subscribes to a running container's output; undefined when not running. Returns the unsubscribe. */
  attach(containerId: string, sink: AttachSink): (() => void) | undefined;
  /**
   * Hands an attach client's stdin to the container's program (sim-attach-stdin.ts); false when
   * the container takes no stdin (it is then read and dropped, as before).
   */
  attachStdin?(containerId: string, stdin: Readable, signal: AbortSignal): boolean;
  /** Whether the sandbox exists and is ready (port-forward target). */
  sandboxReady(sandboxId: string): boolean;
  reportError(msg: string): void;
  idleTimeoutMs?: number;
  maxSessions?: number;
}

export const SIM_STREAM_DEFAULTS = Object.freeze({ idleTimeoutMs: 4 * 3600_000, maxSessions: 1000, maxHeaderBytes: 16 * 1024 });

const SPDY_PORTFORWARD_PROTOCOL = 'portforward.k8s.io';

export class SimStreamServer {
  readonly tokens: StreamTokenCache;
  readonly #d: SimStreamServerDeps;
  readonly #server: http.Server;
  readonly #sockets = new Set<net.Socket>();
  readonly #sessions = new Set<() => void>();
  #port = 0;
  #closed = false;

  private constructor(d: SimStreamServerDeps) {
    this.#d = d;
    this.tokens = new StreamTokenCache({ clock: d.clock });
    this.#server = http.createServer({ maxHeaderSize: SIM_STREAM_DEFAULTS.maxHeaderBytes }, (_req, res) => {
      // Every streaming request is an upgrade; a plain one is refused (the kubelet's server
      // answers missing upgrade headers with 400 too).
      const body = 'Upgrade request required\n';
      res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.length), connection: 'close' });
      res.end(body);
    });
    this.#server.on('connection', (s: net.Socket) => {
      this.#sockets.add(s);
      s.once('close', () => this.#sockets.delete(s));
    });
    this.#server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => this.#onUpgrade(req, socket, head));
    this.#server.on('clientError', (_e, socket) => socket.destroy());
  }

  static async start(d: SimStreamServerDeps): Promise<SimStreamServer> {
    const s = new SimStreamServer(d);
    await new Promise<void>((resolve, reject) => {
      s.#server.once('error', reject);
      s.#server.listen(0, '127.0.0.1', () => {
        s.#server.off('error', reject);
        const a = s.#server.address();
        s.#port = a !== null && typeof a === 'object' ? a.port : 0;
        resolve();
      });
    });
    return s;
  }

  get port(): number {
    return this.#port;
  }

  /** Sessions open now. */
  get sessionCount(): number {
    return this.#sessions.size;
  }

  /** Stores the request; answers the URL to upgrade. Throws CriError RESOURCE_EXHAUSTED when full. */
  prepare(req: StreamRequest, method: string): string {
    if (this.#closed) throw new CriError('ERR_CRI_UNAVAILABLE', method, 'streaming server is closed');
    const token = this.tokens.insert(req, method);
    return `http://127.0.0.1:${this.#port}/${req.kind}/${token}`;
  }

  /** Stops accepting and ends every session. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#server.close();
    for (const end of [...this.#sessions]) end();
    for (const s of this.#sockets) s.destroy();
    this.#sockets.clear();
  }

  #onUpgrade(req: http.IncomingMessage, socket: net.Socket, head: Buffer): void {
    socket.on('error', () => {});
    const m = /^\/(exec|attach|portforward)\/([A-Za-z0-9_-]{1,64})$/.exec(new URL(req.url ?? '/', 'http://x').pathname);
    const request = m === null ? undefined : this.tokens.consume(m[2]!);
    if (m === null || request === undefined || request.kind !== m[1]) return rawReply(socket, 404, '404 page not found\n');
    if (this.#sessions.size >= (this.#d.maxSessions ?? SIM_STREAM_DEFAULTS.maxSessions)) return rawReply(socket, 429, 'too many streaming sessions\n');
    const upgrade = (req.headers.upgrade ?? '').toLowerCase();
    const connection = (req.headers.connection ?? '').toLowerCase();
    socket.setTimeout(this.#d.idleTimeoutMs ?? SIM_STREAM_DEFAULTS.idleTimeoutMs, () => socket.destroy());
    if (upgrade.includes('websocket')) {
      this.#track(serveWebSocket({ req, socket, head, request, server: this, deps: this.#d }));
      return;
    }
    if (!connection.includes('upgrade') || !upgrade.includes('spdy/3.1')) {
      return rawReply(socket, 400, `unable to upgrade: missing upgrade headers in request: ${JSON.stringify(req.headers)}\n`);
    }
    const offered = protocolsOf(req);
    if (offered.length === 0) return rawReply(socket, 400, 'unable to upgrade: X-Stream-Protocol-Version is required\n');
    const server = request.kind === 'portforward' ? [SPDY_PORTFORWARD_PROTOCOL] : SPDY_REMOTECOMMAND_PROTOCOLS;
    const protocol = offered.find((p) => (server as readonly string[]).includes(p));
    if (protocol === undefined) {
      return rawReply(socket, 403, `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${server.join(' ')}]\n`, server.map((p) => ['X-Accepted-Stream-Protocol-Versions', p] as const));
    }
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`);
    if (request.kind === 'portforward') this.#portForward(request, socket, head);
    else this.#remoteCommand(request, protocol as RemoteCommandProtocol, socket, head);
  }

  /** Registers a session's end function until it ends. */
  #track(end: { end: () => void; done: Promise<void> }): void {
    this.#sessions.add(end.end);
    void end.done.finally(() => this.#sessions.delete(end.end));
  }

  #portForward(request: Extract<StreamRequest, { kind: 'portforward' }>, socket: net.Socket, head: Buffer): void {
    const pf = portForwardSpdy({ sandboxId: request.sandboxId, ports: this.#d.ports, clock: this.#d.clock });
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const session = new SpdySession({
      socket,
      onStream: pf.onStream,
      onClose: () => {
        pf.close();
        resolveDone();
      },
    });
    this.#track({ end: () => session.destroy(), done });
    session.feed(head);
  }

  #remoteCommand(request: Extract<StreamRequest, { kind: 'exec' | 'attach' }>, protocol: RemoteCommandProtocol, socket: net.Socket, head: Buffer): void {
    const gather = gatherRemoteCommandStreams(request, protocol, this.#d.clock);
    const ac = new AbortController();
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const session = new SpdySession({
      socket,
      onStream: gather.onStream,
      onClose: () => {
        ac.abort();
        gather.abandon();
        resolveDone();
      },
    });
    this.#track({ end: () => session.destroy(), done });
    session.feed(head);
    void gather.ready.then(async (streams) => {
      if (streams === undefined) return session.close();
      await this.runRemoteCommand(request, protocol, streams, ac.signal);
      session.close();
    }).catch((err: unknown) => {
      this.#d.reportError(`sim-runtime: streaming ${request.kind} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      session.destroy();
    });
  }

  /** Runs exec or attach over `streams` (either transport) and writes its end; resolves when written. */
  async runRemoteCommand(request: Extract<StreamRequest, { kind: 'exec' | 'attach' }>, protocol: RemoteCommandProtocol, streams: RemoteCommandStreams, signal: AbortSignal): Promise<void> {
    const resize = new ResizeReader(undefined);
    streams.resize?.on('data', (c: Buffer) => {
      if (!resize.feed(c)) {
        this.#d.reportError('sim-runtime: error decoding resize event; resize stream dropped');
        const r = streams.resize as (typeof streams.resize & { reset?: () => void }) | null;
        if (r?.reset !== undefined) r.reset();
        else r?.destroy();
      }
    });
    streams.stdin?.on('error', () => {});
    let outcome: ExecOutcome;
    if (request.kind === 'exec') {
      const target = this.#d.execTarget(request.containerId);
      outcome = target === undefined
        ? { kind: 'failed', message: `container ${request.containerId} is not running` }
        : await runStreamingExec({ clock: this.#d.clock, ports: this.#d.ports, execId: randomBytes(32).toString('hex') }, target, request.cmd, {
            stdin: streams.stdin, stdout: streams.stdout, stderr: streams.stderr, tty: request.tty, size: () => resize.size, signal,
          });
    } else {
      outcome = await this.#attach(request, streams, signal);
    }
    if (signal.aborted) return;
    await endRemoteCommand(streams, protocol, request.kind === 'exec' ? request.cmd : undefined, outcome);
  }

  #attach(request: Extract<StreamRequest, { kind: 'attach' }>, streams: RemoteCommandStreams, signal: AbortSignal): Promise<ExecOutcome> {
    return new Promise((resolve) => {
      const write = (stream: 'stdout' | 'stderr', text: string): void => {
        const w = stream === 'stderr' && !request.tty ? streams.stderr : streams.stdout;
        if (w !== null && !w.destroyed && !w.writableEnded) w.write(request.tty ? text.replace(/(?<!\r)\n/g, '\r\n') : text);
      };
      let unsubscribe: (() => void) | undefined;
      const finish = (o: ExecOutcome): void => {
        unsubscribe?.();
        signal.removeEventListener('abort', onAbort);
        resolve(o);
      };
      const onAbort = (): void => finish({ kind: 'exited', code: 0 });
      unsubscribe = this.#d.attach(request.containerId, { output: write, exited: () => finish({ kind: 'exited', code: 0 }) });
      if (unsubscribe === undefined) {
        streams.stdin?.resume();
        return finish({ kind: 'failed', message: `container ${request.containerId} is not running` });
      }
      signal.addEventListener('abort', onAbort, { once: true });
      // Stdin goes to a program that reads it; otherwise what the client types is taken and dropped.
      const stdin = streams.stdin;
      if (stdin !== null && !(request.stdin && this.#d.attachStdin?.(request.containerId, stdin, signal) === true)) stdin.resume();
    });
  }
}

/** X-Stream-Protocol-Version values in order (repeated headers and comma lists both). */
function protocolsOf(req: http.IncomingMessage): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() !== 'x-stream-protocol-version') continue;
    for (const p of req.rawHeaders[i + 1]!.split(',')) if (p.trim() !== '') out.push(p.trim());
  }
  return out;
}

const REASONS: Readonly<Record<number, string>> = { 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 429: 'Too Many Requests', 500: 'Internal Server Error' };

/** An HTTP/1.1 error answer on a socket that was not upgraded, then close. */
export function rawReply(socket: net.Socket, status: number, body: string, headers: ReadonlyArray<readonly [string, string]> = []): void {
  const b = Buffer.from(body);
  const extra = headers.map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.end(`HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${b.length}\r\n${extra}Connection: close\r\n\r\n${b.toString('latin1')}`, 'latin1');
}
