/**
 * Kubernetes' SPDY sub-protocols on an accepted SpdySession (the kubelet's
 * pkg/kubelet/cri/streaming/{remotecommand,portforward}/httpstream.go):
 *
 * Remote command (exec / attach): the client opens one stream per channel, named by its
 * `streamtype` header (`error`, `stdin`, `stdout`, `stderr`, `resize`); the server replies to
 * each and starts once every expected one arrived — error always, the std streams the request
 * asked for, resize with a tty on v3+ — or gives up after the creation timeout (30 s).
 *
 * Port forward (`portforward.k8s.io`): per forwarded connection the client opens a `data` and an
 * `error` stream carrying `port` and `requestid` headers (older clients: the request id derived
 * from the stream id). A stream with a missing or bad port (0, 70000, "x") or type is reset at
 * once, as the kubelet's stream handler refuses it. A complete pair is joined to a TCP
 * connection to the sandbox's port (sim-ports.ts); a failure is written to the error stream
 * ("error forwarding port P to pod S, uid : …"). An incomplete pair is reset after the timeout.
 */
import net from 'node:net';
import type { Clock, TimerHandle } from '../shared/clock/clock.js';
import { RstStatus } from './spdy/spdy-frames.js';
import type { SpdyStream } from './spdy/spdy-session.js';
import type { RemoteCommandProtocol, RemoteCommandStreams } from './sim-remotecommand.js';
import type { SimPortRegistry } from './sim-ports.js';

export const STREAM_CREATION_TIMEOUT_MS = 30_000;

export interface StreamFlags {
  tty: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}

/** Collects the remote-command streams; `ready` resolves with them, or undefined on timeout/close. */
export function gatherRemoteCommandStreams(flags: StreamFlags, protocol: RemoteCommandProtocol, clock: Clock, timeoutMs = STREAM_CREATION_TIMEOUT_MS): {
  onStream: (s: SpdyStream) => void;
  ready: Promise<RemoteCommandStreams | undefined>;
  abandon: () => void;
} {
  const expected = new Set<string>(['error']);
  if (flags.stdin) expected.add('stdin');
  if (flags.stdout) expected.add('stdout');
  if (flags.stderr && !flags.tty) expected.add('stderr');
  if (flags.tty && (protocol === 'v3.channel.k8s.io' || protocol === 'v4.channel.k8s.io' || protocol === 'v5.channel.k8s.io')) expected.add('resize');
  const got = new Map<string, SpdyStream>();
  let resolveReady!: (v: RemoteCommandStreams | undefined) => void;
  const ready = new Promise<RemoteCommandStreams | undefined>((r) => (resolveReady = r));
  let settled = false;
  const settle = (v: RemoteCommandStreams | undefined): void => {
    if (settled) return;
    settled = true;
    timer.cancel();
    resolveReady(v);
  };
  const timer: TimerHandle = clock.setTimer(timeoutMs, () => settle(undefined), { unref: true });
  return {
    ready,
    abandon: () => settle(undefined),
    onStream: (s) => {
      const type = s.header('streamtype') ?? '';
      if (settled || !expected.has(type) || got.has(type)) {
        s.reset(RstStatus.REFUSED_STREAM);
        return;
      }
      s.reply();
      got.set(type, s);
      if (got.size < expected.size) return;
      settle({
        stdin: got.get('stdin') ?? null,
        stdout: got.get('stdout') ?? null,
        stderr: got.get('stderr') ?? null,
        error: got.get('error')!,
        resize: got.get('resize') ?? null,
      });
    },
  };
}

/** Go's strconv.ParseUint(s, 10, 16) as the port check does it; a string is the error. */
export function parsePortHeader(s: string | undefined): number | string {
  if (s === undefined || s.length === 0) return '"port" header is required';
  if (!/^\d+$/.test(s)) return `unable to parse "${s}" as a port: strconv.ParseUint: parsing "${s}": invalid syntax`;
  const n = Number(s);
  if (s.length > 5 || n > 65535) return `unable to parse "${s}" as a port: strconv.ParseUint: parsing "${s}": value out of range`;
  if (n < 1) return `port "${s}" must be > 0`;
  return n;
}

export interface PortForwardDeps {
  sandboxId: string;
  ports: SimPortRegistry;
  clock: Clock;
  timeoutMs?: number;
  /** A stream was refused (bad header); for diagnostics. */
  onRefused?: (why: string) => void;
}

interface Pair {
  data?: SpdyStream;
  error?: SpdyStream;
  timer: TimerHandle;
}

/** The port-forward stream handler for one session. `close()` ends every open forward. */
export function portForwardSpdy(d: PortForwardDeps): { onStream: (s: SpdyStream) => void; close: () => void } {
  const pairs = new Map<string, Pair>();
  const conns = new Set<net.Socket>();
  const timeoutMs = d.timeoutMs ?? STREAM_CREATION_TIMEOUT_MS;
  const forward = (port: number, data: SpdyStream, error: SpdyStream): void => {
    const hostPort = d.ports.lookup(d.sandboxId, port);
    const fail = (why: string): void => {
      if (!error.destroyed && !error.writableEnded) error.end(`error forwarding port ${port} to pod ${d.sandboxId}, uid : ${why}`);
      if (!data.destroyed && !data.writableEnded) data.end();
    };
    if (hostPort === undefined) {
      fail(`failed to execute portforward in network namespace "/var/run/netns/${d.sandboxId}": failed to connect to localhost:${port} inside namespace "${d.sandboxId}", IPv4: dial tcp4 127.0.0.1:${port}: connect: connection refused`);
      return;
    }
    const conn = net.connect({ host: '127.0.0.1', port: hostPort });
    conns.add(conn);
    conn.on('error', (e) => fail(e.message));
    conn.on('close', () => {
      conns.delete(conn);
      if (!data.destroyed && !data.writableEnded) data.end();
      if (!error.destroyed && !error.writableEnded) error.end();
    });
    data.pipe(conn);
    conn.pipe(data);
    data.on('error', () => conn.destroy());
    data.on('close', () => conn.destroy());
  };
  return {
    close: () => {
      for (const p of pairs.values()) p.timer.cancel();
      pairs.clear();
      for (const c of conns) c.destroy();
      conns.clear();
    },
    onStream: (s) => {
      const port = parsePortHeader(s.header('port'));
      const type = s.header('streamtype') ?? '';
      if (typeof port === 'string' || (type !== 'data' && type !== 'error')) {
        d.onRefused?.(typeof port === 'string' ? port : type === '' ? '"streamType" header is required' : `invalid stream type "${type}"`);
        s.reset(RstStatus.CANCEL);
        return;
      }
      let rid = s.header('requestid') ?? '';
      if (rid === '') rid = String(type === 'error' ? s.id : s.id - 2);
      let p = pairs.get(rid);
      if (p === undefined) {
        const id = rid;
        p = {
          timer: d.clock.setTimer(timeoutMs, () => {
            const q = pairs.get(id);
            pairs.delete(id);
            q?.data?.reset();
            q?.error?.reset();
          }, { unref: true }),
        };
        pairs.set(rid, p);
      }
      if (p[type] !== undefined) {
        s.reset(RstStatus.PROTOCOL_ERROR);
        return;
      }
      s.reply();
      p[type] = s;
      if (p.data !== undefined && p.error !== undefined) {
        p.timer.cancel();
        pairs.delete(rid);
        forward(port, p.data, p.error);
      }
    },
  };
}
