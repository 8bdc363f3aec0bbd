/**
 * What one pod-worker thread runs, independent of how messages reach it: it owns the thread's
 * PodWorkers and answers the protocol's messages. The Piscina entry (pod-worker-thread.ts) and
 * the inline dispatcher (--workers 0) both drive this class, so the same code runs either way.
 */
import { withoutPlegOnly, type MainToWorker, type PodUpdateMessage, type PodWorkerEndpoint, type WorkerThreadStats } from '../src/shared/protocol/pod-worker-protocol.js';
import type { PodWorkers } from './pod-workers.js';

export class PodWorkerHost implements PodWorkerEndpoint {
  readonly #workers: PodWorkers;
  readonly #onClose: (() => void) | undefined;

  readonly #observe: ((msg: PodUpdateMessage) => boolean) | undefined;

  /**
   * `observe` sees every update before the pod workers queue it (the API objects store) and
   * returns whether it changed what the pod's sync reads: a PLEG-only sync that did is a full sync.
   */
  constructor(workers: PodWorkers, onClose?: () => void, observe?: (msg: PodUpdateMessage) => boolean) {
    this.#workers = workers;
    this.#onClose = onClose;
    this.#observe = observe;
  }

  /** Handles one message; returns stats for a stats request, otherwise null (an acknowledgement). */
  handle(msg: MainToWorker): WorkerThreadStats | null {
    switch (msg.kind) {
      case 'update': {
        const changed = this.#observe?.(msg) === true;
        this.#workers.update(changed && msg.plegOnly === true ? withoutPlegOnly(msg) : msg);
        return null;
      }
      case 'stats':
        return this.#workers.stats();
      default: {
        const never: never = msg;
        throw new TypeError(`unknown message ${JSON.stringify(never)}`);
      }
    }
  }

  close(): void {
    this.#workers.close();
    this.#onClose?.();
  }
}
