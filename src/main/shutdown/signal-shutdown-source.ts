/**
 * SIGUSR1 as a shutdown signal: the kubelet's watch loop takes SIGUSR1 as "shutdown is
 * imminent" beside logind's PrepareForShutdown (nodeshutdown_manager_linux.go, "Received
 * shutdown signal from USR1"). shardlet listens for it whenever graceful shutdown is enabled,
 * also where logind is absent (containers, machines without systemd), so an operator's own
 * shutdown hook can run the graceful sequence: `kill -USR1 <agent pid>`. There is no delay
 * lock: whoever sends it must wait (the Node's Ready condition and the pods' statuses show
 * when it is over). A listener also keeps Node from starting its inspector on SIGUSR1.
 */
import type { ShutdownEventHandler, ShutdownSignalSource } from './shutdown-signal.js';

/** The part of `process` this source uses (tests pass an EventEmitter). */
export interface SignalTarget {
  on(signal: 'SIGUSR1', listener: () => void): unknown;
  off(signal: 'SIGUSR1', listener: () => void): unknown;
}

export class SignalShutdownSource implements ShutdownSignalSource {
  readonly name = 'SIGUSR1';
  readonly #target: SignalTarget;
  #listener: (() => void) | undefined;

  constructor(target: SignalTarget = process) {
    this.#target = target;
  }

  async start(onEvent: ShutdownEventHandler): Promise<void> {
    if (this.#listener) return;
    this.#listener = () => onEvent(true);
    this.#target.on('SIGUSR1', this.#listener);
  }

  async release(): Promise<void> {}

  async reacquire(): Promise<void> {}

  async close(): Promise<void> {
    if (!this.#listener) return;
    this.#target.off('SIGUSR1', this.#listener);
    this.#listener = undefined;
  }
}
