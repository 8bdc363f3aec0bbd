/**
 * The runtime's health as the sync loop sees it (the kubelet's runtimeState + updateRuntimeUp):
 * a CRI Status call every 5 s. RuntimeReady=false is an error at once; a failed or timed-out
 * Status call only becomes "container runtime is down" once no check has succeeded for 30 s
 * (the kubelet's baseRuntimeSyncThreshold), so a briefly overloaded main thread or runtime does
 * not stop pod work. Either error makes the sync loop back off. NetworkReady=false is not a
 * runtime error: as the kubelet (runtimeState.networkErrors), it holds back only the pods that
 * are not host-network ({@link RuntimeHealth.networkError}, checked by each pod sync), so
 * host-network pods (the CNI plugin itself, static control-plane pods) still start.
 * Added checks (the PLEG's health, as the kubelet adds "PLEG") are runtime errors too.
 */
import type { Clock, TimerHandle } from '../../shared/clock/clock.js';
import type { VersionResponse } from '../../shared/cri/cri-types.js';
import type { RuntimeService } from '../../shared/cri/runtime-service.js';
import type { Logger } from '../../shared/logging/logger.js';
import { nextBackoffMs } from '../../shared/backoff/exponential-backoff.js';

export interface RuntimeHealthDeps {
  runtime: Pick<RuntimeService, 'status' | 'version'>;
  clock: Clock;
  logger: Logger;
  periodMs?: number;
  /** How long failed checks are tolerated after the last good one (kubelet: 30 s). */
  downThresholdMs?: number;
  /** Called after each Status check has been taken into account (a completion signal for tests). */
  onChecked?: () => void;
}

/** The kubelet's NetworkNotReadyErrorMsg. */
export const NETWORK_NOT_READY_MESSAGE = 'network is not ready';

export class RuntimeHealth {
  readonly #d: RuntimeHealthDeps;
  #errors: string[] = ['container runtime status check may not have completed yet'];
  /**
   * Why the pod network is not ready (NetworkReady=false or missing: the kubelet's
   * runtimeState.networkErrors), undefined when it is; kept while Status calls fail.
   */
  #networkCause: string | undefined;
  /** Monotonic ms of the last Status call that answered (ready or not). */
  #lastAnswerMs: number | undefined;
  #timer: TimerHandle | undefined;
  #stopped = false;
  /** Other readiness checks (the kubelet's runtimeState health checks): name → reason when failing. */
  readonly #checks: { name: string; check: () => string | undefined }[] = [];

  constructor(deps: RuntimeHealthDeps) {
    this.#d = deps;
  }

  /** Waits for the runtime to answer Version, retrying 100 ms → 5 s; logs while it waits. */
  async connect(signal: AbortSignal): Promise<VersionResponse> {
    let backoff = 100;
    for (;;) {
      try {
        return await this.#d.runtime.version({ timeoutMs: 5_000, signal });
      } catch (err) {
        if (signal.aborted) throw err;
        this.#d.logger.error('container runtime not reachable yet; retrying', { error: err instanceof Error ? err.message : String(err), backoffMs: backoff });
        await this.#d.clock.sleep(backoff, signal);
        backoff = nextBackoffMs(backoff, { maxMs: 5_000 });
      }
    }
  }

  start(): void {
    void this.#check();
  }

  /** Adds a readiness check (kubelet runtimeState.addHealthCheck): a reason while it fails. */
  addHealthCheck(name: string, check: () => string | undefined): void {
    this.#checks.push({ name, check });
  }

  /**
   * Why the pod network is not ready, as the kubelet words it ("network is not ready: ..."), or
   * undefined. Until the first Status answer the network counts as ready: the runtime errors
   * above hold every pod back until then anyway.
   */
  networkError(): string | undefined {
    return this.#networkCause === undefined ? undefined : `${NETWORK_NOT_READY_MESSAGE}: ${this.#networkCause}`;
  }

  /** Why the runtime is not ready (empty when ready): the CRI status, then every failing check. */
  errors(): string[] {
    const failing: string[] = [];
    for (const c of this.#checks) {
      const reason = c.check();
      if (reason !== undefined) failing.push(`${c.name} is not healthy: ${reason}`);
    }
    return failing.length === 0 ? this.#errors : [...this.#errors, ...failing];
  }

  /**
   * Why the runtime network is not ready (empty when ready or not yet known), in the kubelet's
   * words. Not a runtime error (the sync loop does not back off): the Node's Ready condition reads it.
   */
  networkErrors(): string[] {
    return this.#networkCause === undefined ? [] : [this.#networkCause];
  }

  async #check(): Promise<void> {
    if (this.#stopped) return;
    try {
      const res = await this.#d.runtime.status({ timeoutMs: 5_000 });
      const conds = res.status?.conditions ?? [];
      const rt = conds.find((c) => c.type === 'RuntimeReady');
      this.#lastAnswerMs = this.#d.clock.monotonic();
      this.#errors = rt?.status ? [] : [`container runtime not ready: ${rt?.reason ?? 'RuntimeReady condition missing'} ${rt?.message ?? ''}`.trim()];
      const net = conds.find((c) => c.type === 'NetworkReady');
      const cause = net?.status ? undefined : `container runtime network not ready: NetworkReady=false reason:${net?.reason ?? 'NetworkReady condition missing'} message:${net?.message ?? ''}`;
      if (cause !== this.#networkCause) {
        if (cause !== undefined) this.#d.logger.error('container runtime network not ready; pods that are not host-network are held back', { error: cause });
        else if (this.#networkCause !== undefined) this.#d.logger.info('container runtime network is ready');
      }
      this.#networkCause = cause;
    } catch (err) {
      const threshold = this.#d.downThresholdMs ?? 30_000;
      const message = err instanceof Error ? err.message : String(err);
      if (this.#lastAnswerMs !== undefined && this.#d.clock.monotonic() - this.#lastAnswerMs >= threshold) {
        this.#errors = [`container runtime is down: no successful status check for ${Math.round(threshold / 1000)}s: ${message}`];
      }
      this.#d.logger.error('container runtime status check failed', { error: message });
    }
    if (!this.#stopped) this.#timer = this.#d.clock.setTimer(this.#d.periodMs ?? 5_000, () => void this.#check(), { unref: true });
    this.#d.onChecked?.();
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
  }
}
