/**
 * The Kubernetes remote-command protocol (exec and attach) on the runtime side, independent of
 * the transport: given the client's streams (stdin, stdout, stderr, error, resize), run the
 * session and report its end on the error stream, as the kubelet's
 * pkg/kubelet/cri/streaming/remotecommand (ServeExec / ServeAttach) does:
 *   - v4 (`v4.channel.k8s.io`, and v5): a JSON metav1.Status — `{"metadata":{},"status":"Success"}`,
 *     or Failure with reason NonZeroExitCode and the code as cause ExitCode, or InternalError;
 *   - v1–v3: the error's text only (nothing on success).
 * Resize events (tty, v3+) are JSON objects `{"Width":W,"Height":H}` back to back; a malformed
 * one stops reading resizes (the kubelet logs "error decoding resize event") and the session
 * goes on. Order at the end: stdout/stderr finished, then the status written and the error
 * stream finished, then the transport closes.
 */
import type { Readable, Writable } from 'node:stream';
import type { ExecOutcome, TerminalSize } from './sim-exec-stream.js';

export type RemoteCommandProtocol = 'v5.channel.k8s.io' | 'v4.channel.k8s.io' | 'v3.channel.k8s.io' | 'v2.channel.k8s.io' | 'channel.k8s.io';

/** The protocols a SPDY exec/attach upgrade may negotiate, preferred first (kubelet's order). */
export const SPDY_REMOTECOMMAND_PROTOCOLS: readonly RemoteCommandProtocol[] = Object.freeze(['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io']);

export interface RemoteCommandStreams {
  stdin: Readable | null;
  stdout: Writable | null;
  stderr: Writable | null;
  error: Writable;
  resize: Readable | null;
}

/** Bound on one buffered resize message. */
const MAX_RESIZE_BYTES = 4096;

export function statusJson(cmd: readonly string[] | undefined, outcome: ExecOutcome): string | undefined {
  if (outcome.kind === 'failed') {
    const msg = `error executing command in container: ${outcome.message}`;
    return JSON.stringify({ metadata: {}, status: 'Failure', message: `Internal error occurred: ${msg}`, reason: 'InternalError', details: { causes: [{ message: msg }] }, code: 500 });
  }
  if (outcome.code === 0) return JSON.stringify({ metadata: {}, status: 'Success' });
  const what = cmd === undefined ? 'attach' : `error executing command [${cmd.join(' ')}], exit code ${outcome.code}`;
  return JSON.stringify({
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: ${what}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(outcome.code) }] },
  });
}

function textStatus(cmd: readonly string[] | undefined, outcome: ExecOutcome): string | undefined {
  if (outcome.kind === 'failed') return `error executing command in container: ${outcome.message}`;
  if (outcome.code === 0) return undefined;
  return `command terminated with non-zero exit code: error executing command [${(cmd ?? []).join(' ')}], exit code ${outcome.code}`;
}

/** Tracks the latest terminal size from a resize stream. */
export class ResizeReader {
  #size: TerminalSize | undefined;
  #buf = '';
  #stopped = false;
  /** Resize messages accepted so far. */
  accepted = 0;

  constructor(initial: TerminalSize | undefined) {
    this.#size = initial;
  }

  get size(): TerminalSize | undefined {
    return this.#size;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** Feeds bytes; answers false once reading stopped on garbage (the caller drops the stream). */
  feed(chunk: Buffer | string): boolean {
    if (this.#stopped) return false;
    this.#buf += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    for (;;) {
      const start = this.#buf.search(/\S/);
      if (start === -1) {
        this.#buf = '';
        break;
      }
      if (this.#buf[start] !== '{') return this.#stop();
      const end = this.#buf.indexOf('}', start);
      if (end === -1) break;
      let v: unknown;
      try {
        v = JSON.parse(this.#buf.slice(start, end + 1));
      } catch {
        return this.#stop();
      }
      const o = v as { Width?: unknown; Height?: unknown };
      if (!isDim(o.Width) || !isDim(o.Height)) return this.#stop();
      this.#size = { width: o.Width, height: o.Height };
      this.accepted++;
      this.#buf = this.#buf.slice(end + 1);
    }
    if (this.#buf.length > MAX_RESIZE_BYTES) return this.#stop();
    return true;
  }

  #stop(): false {
    this.#stopped = true;
    this.#buf = '';
    return false;
  }
}

function isDim(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffff;
}

function finish(w: Writable | null): Promise<void> {
  return new Promise((resolve) => {
    if (w === null || w.destroyed || w.writableFinished) return resolve();
    w.once('error', () => resolve());
    w.once('close', () => resolve());
    w.end(() => resolve());
  });
}

/**
 * Ends a session: finishes stdout/stderr, writes the status for `protocol`, finishes the error
 * stream. Resolves when all three were taken by the transport (or are gone).
 */
export async function endRemoteCommand(s: RemoteCommandStreams, protocol: RemoteCommandProtocol, cmd: readonly string[] | undefined, outcome: ExecOutcome): Promise<void> {
  await Promise.all([finish(s.stdout), finish(s.stderr)]);
  const status = protocol === 'v4.channel.k8s.io' || protocol === 'v5.channel.k8s.io' ? statusJson(cmd, outcome) : textStatus(cmd, outcome);
  if (status !== undefined && !s.error.destroyed && !s.error.writableEnded) s.error.write(status);
  await finish(s.error);
}
