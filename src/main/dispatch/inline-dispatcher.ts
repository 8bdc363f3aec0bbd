/**
 * `--workers 0`: the same pod-worker code (workers/pod-worker-host.ts, through PodWorkerEndpoint) runs on the main thread. The
 * benchmark's baseline for what threads buy.
 */
import type { PodUpdateMessage, PodWorkerEndpoint, WorkerThreadStats } from '../../shared/protocol/pod-worker-protocol.js';
import type { PodDispatcher } from './pod-dispatcher.js';

export class InlineDispatcher implements PodDispatcher {
  readonly threads = 0;
  readonly #host: PodWorkerEndpoint;
  #closed = false;

  constructor(host: PodWorkerEndpoint) {
    this.#host = host;
  }

  send(msg: PodUpdateMessage): void {
    if (!this.#closed) this.#host.handle(msg);
  }

  async stats(): Promise<WorkerThreadStats[]> {
    const s = this.#host.handle({ kind: 'stats' });
    return s ? [s] : [];
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#host.close();
  }
}
