/**
 * The seam between the graceful node shutdown manager and whatever tells it the machine is
 * about to shut down (the kubelet's dbusInhibiter, reduced to a role): systemd-logind's
 * PrepareForShutdown signal with a delay inhibitor lock (logind-shutdown-source.ts), SIGUSR1
 * (signal-shutdown-source.ts), or a test's fake. The manager holds one or more of them.
 */

/** true: shutdown is imminent (PrepareForShutdown(true)); false: a shutdown was cancelled. */
export type ShutdownEventHandler = (shuttingDown: boolean) => void;

export interface ShutdownSignalSource {
  /** For logs: "logind", "SIGUSR1". */
  readonly name: string;
  /**
   * Starts watching. Resolves once events can arrive and, where the source has one, the delay
   * lock is held. Rejects with a {@link ShutdownSignalError} when the source is not available
   * on this machine (no system bus, no logind): the manager logs it and goes on without it.
   */
  start(onEvent: ShutdownEventHandler): Promise<void>;
  /** The pods are handled: let the shutdown proceed (release the delay lock). Idempotent. */
  release(): Promise<void>;
  /** A shutdown was cancelled: take the delay lock again (no-op for sources without one). */
  reacquire(): Promise<void>;
  /** Stops watching and releases everything. Idempotent. */
  close(): Promise<void>;
}

export type ShutdownSignalErrorCode =
  | 'ERR_SHUTDOWN_NO_SYSTEM_BUS'
  | 'ERR_SHUTDOWN_NO_LOGIND'
  | 'ERR_SHUTDOWN_INHIBIT_DELAY'
  | 'ERR_SHUTDOWN_INHIBIT'
  | 'ERR_SHUTDOWN_MONITOR';

export class ShutdownSignalError extends Error {
  override readonly name = 'ShutdownSignalError';
  constructor(readonly code: ShutdownSignalErrorCode, message: string) {
    super(message);
  }
}
