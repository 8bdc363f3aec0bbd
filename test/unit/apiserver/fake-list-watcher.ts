/**
 * A scripted {@link PodListWatcher}: every list/watch call becomes a {@link LwCall} the test
 * takes with `next()` and answers (items, events, end, failure). Aborting the caller's signal
 * rejects the call with ERR_API_ABORTED, as the real client does.
 */
import { ApiError } from '../../../src/main/apiserver/api-errors.js';
import type { PodList, PodListWatcher, WatchEnd, WatchEvent } from '../../../src/main/apiserver/api-roles.js';

export interface ListCall {
  kind: 'list';
  rv: string;
  respond(list: PodList): void;
  fail(err: unknown): void;
}

export interface WatchCall {
  kind: 'watch';
  rv: string;
  timeoutSeconds: number;
  emit(ev: WatchEvent): void;
  end(e?: WatchEnd): void;
  fail(err: unknown): void;
  readonly aborted: boolean;
}

export type LwCall = ListCall | WatchCall;

export class FakeListWatcher implements PodListWatcher {
  readonly #calls: LwCall[] = [];
  #waiter: ((c: LwCall) => void) | undefined;

  #push(c: LwCall): void {
    const w = this.#waiter;
    this.#waiter = undefined;
    if (w) w(c);
    else this.#calls.push(c);
  }

  /** The next call the reflector makes (bounded: rejects after `ms` of real time). */
  next(ms = 5_000): Promise<LwCall> {
    const c = this.#calls.shift();
    if (c) return Promise.resolve(c);
    return new Promise<LwCall>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no list/watch call within ${ms} ms`)), ms);
      this.#waiter = (call) => {
        clearTimeout(t);
        resolve(call);
      };
    });
  }

  async nextList(): Promise<ListCall> {
    const c = await this.next();
    if (c.kind !== 'list') throw new Error(`expected a list, got a ${c.kind}`);
    return c;
  }

  async nextWatch(): Promise<WatchCall> {
    const c = await this.next();
    if (c.kind !== 'watch') throw new Error(`expected a watch, got a ${c.kind}`);
    return c;
  }

  listPods(rv: string, signal?: AbortSignal): Promise<PodList> {
    return new Promise<PodList>((resolve, reject) => {
      signal?.addEventListener('abort', () => reject(new ApiError('ERR_API_ABORTED', 'aborted')), { once: true });
      this.#push({ kind: 'list', rv, respond: resolve, fail: reject });
    });
  }

  watchPods(rv: string, timeoutSeconds: number, onEvent: (ev: WatchEvent) => void, signal?: AbortSignal): Promise<WatchEnd> {
    return new Promise<WatchEnd>((resolve, reject) => {
      let aborted = false;
      signal?.addEventListener('abort', () => {
        aborted = true;
        reject(new ApiError('ERR_API_ABORTED', 'aborted'));
      }, { once: true });
      this.#push({
        kind: 'watch', rv, timeoutSeconds,
        emit: (ev) => {
          if (!aborted) onEvent(ev);
        },
        end: (e) => resolve(e ?? { kind: 'closed' }),
        fail: reject,
        get aborted() {
          return aborted;
        },
      });
    });
  }
}

/** A minimal valid API pod bound to `node`, as raw JSON from the server. */
export function apiPod(name: string, uid: string, rv: string, node = 'n1', extra: { deletionTimestamp?: string; phase?: string; image?: string } = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name, namespace: 'default', uid, resourceVersion: rv, creationTimestamp: '2026-11-21T10:00:00Z',
      annotations: { 'team': 'a' },
      ...(extra.deletionTimestamp ? { deletionTimestamp: extra.deletionTimestamp, deletionGracePeriodSeconds: 5 } : {}),
    },
    spec: { nodeName: node, containers: [{ name: 'c', image: extra.image ?? 'busybox' }] },
    status: { phase: extra.phase ?? 'Pending' },
  };
}
