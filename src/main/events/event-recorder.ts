/**
 * Kubernetes events, as client-go's record package does them for the kubelet (EventBroadcaster +
 * EventCorrelator), on the main thread, never blocking the caller:
 *
 *   record() ── aggregate ── dedupe ── spam filter ── bounded queue ──▶ sender ──▶ events client
 *
 * - Aggregation (EventAggregator): events of one object with the same type and reason but
 *   different messages; from the 10th distinct message within 10 min, the message becomes
 *   "(combined from similar events): <message>" and they share one Event object.
 * - Dedupe (eventLogger): an event equal to one already written (same object, type, reason,
 *   message) is a PATCH of that Event's count and lastTimestamp, not a new object.
 * - Spam filter (EventSourceObjectSpamFilter): per object (source + involved object), a token
 *   bucket of 25 refilled at 1 per 5 min; an event without a token is dropped.
 * - The queue holds at most `queueCapacity` (1,000, client-go's maxQueuedEvents); a full queue
 *   drops the event. Every outcome is counted (`onResult`), so drops are visible.
 * - One sender writes through the events client (its own --event-qps / --event-burst throttle).
 *   A PATCH answered 404 (the Event expired: 1 h TTL) becomes a create; any other failure drops
 *   the event (counted; client-go retries 12 times 10 s apart — not worth a queue slot here).
 *
 * Caches (aggregation, dedupe, spam) are bounded LRU maps of `cacheSize` entries (4,096 as
 * client-go), so a flood of distinct objects cannot grow memory without bound.
 */
import type { Clock } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { apiErrorMessage, isNotFound } from '../apiserver/api-errors.js';
import type { EventWriter } from '../apiserver/object-roles.js';
import { apiTime } from '../node-status/node-conditions.js';

export interface InvolvedObject {
  kind: 'Pod' | 'Node';
  /** '' for a Node (its events go to the "default" namespace, as the kubelet's). */
  namespace: string;
  name: string;
  uid: string;
  fieldPath?: string;
}

export type EventType = 'Normal' | 'Warning';
export type EventResult = 'created' | 'aggregated' | 'spam_filtered' | 'dropped' | 'failed';

export interface EventRecorderDeps {
  writer: EventWriter;
  clock: Clock;
  logger: Logger;
  /** source.host and reportingInstance. */
  host: string;
  queueCapacity?: number;
  cacheSize?: number;
  spamBurst?: number;
  spamRefillMs?: number;
  aggregateMaxEvents?: number;
  aggregateIntervalMs?: number;
  onResult?: (result: EventResult) => void;
}

export const EVENT_DEFAULTS = Object.freeze({
  queueCapacity: 1_000,
  cacheSize: 4_096,
  spamBurst: 25,
  spamRefillMs: 300_000,
  aggregateMaxEvents: 10,
  aggregateIntervalMs: 600_000,
  maxMessageLength: 1_024,
});

interface Pending {
  op: 'create' | 'patch';
  namespace: string;
  name: string;
  event: Record<string, unknown>;
}

/** A Map used as an LRU of bounded size: get() refreshes, set() evicts the oldest. */
class Lru<V> {
  readonly #m = new Map<string, V>();
  constructor(readonly max: number) {}
  get(k: string): V | undefined {
    const v = this.#m.get(k);
    if (v !== undefined) {
      this.#m.delete(k);
      this.#m.set(k, v);
    }
    return v;
  }
  set(k: string, v: V): void {
    this.#m.delete(k);
    this.#m.set(k, v);
    if (this.#m.size > this.max) this.#m.delete(this.#m.keys().next().value!);
  }
}

export class EventRecorder {
  readonly #d: EventRecorderDeps;
  readonly #o: typeof EVENT_DEFAULTS;
  readonly #aggregate: Lru<{ messages: Set<string>; lastMs: number }>;
  readonly #written: Lru<{ name: string; count: number; firstTimestamp: string }>;
  readonly #spam: Lru<{ tokens: number; atMs: number }>;
  readonly #queue: Pending[] = [];
  #wake: (() => void) | undefined;
  #sender: Promise<void> | undefined;
  #stopped = false;
  #idleWaiters: (() => void)[] = [];
  #busy = false;
  #seq = 0;

  constructor(deps: EventRecorderDeps) {
    this.#d = deps;
    this.#o = {
      ...EVENT_DEFAULTS,
      ...Object.fromEntries(Object.entries(deps).filter(([k, v]) => k in EVENT_DEFAULTS && typeof v === 'number')),
    } as typeof EVENT_DEFAULTS;
    this.#aggregate = new Lru(this.#o.cacheSize);
    this.#written = new Lru(this.#o.cacheSize);
    this.#spam = new Lru(this.#o.cacheSize);
  }

  /** Events waiting to be written. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Records one event; never blocks and never throws. */
  record(obj: InvolvedObject, type: EventType, reason: string, message: string): void {
    if (this.#stopped) return;
    const now = this.#d.clock.now();
    const objKey = `${obj.kind}/${obj.namespace}/${obj.name}/${obj.uid}`;
    let msg = message.slice(0, this.#o.maxMessageLength);
    // Aggregation: distinct messages of one (object, type, reason) within the interval.
    const aggKey = `${objKey}|${obj.fieldPath ?? ''}|${type}|${reason}`;
    let agg = this.#aggregate.get(aggKey);
    if (agg === undefined || now - agg.lastMs > this.#o.aggregateIntervalMs) agg = { messages: new Set(), lastMs: now };
    agg.lastMs = now;
    if (agg.messages.size < this.#o.aggregateMaxEvents) agg.messages.add(msg);
    this.#aggregate.set(aggKey, agg);
    // From the 10th distinct message on, every event of the key is one aggregated Event.
    let key = `${aggKey}|${msg}`;
    if (agg.messages.size >= this.#o.aggregateMaxEvents) {
      msg = `(combined from similar events): ${msg}`;
      key = aggKey;
    }
    // Spam filter, per object.
    let bucket = this.#spam.get(objKey);
    if (bucket === undefined) bucket = { tokens: this.#o.spamBurst, atMs: now };
    bucket.tokens = Math.min(this.#o.spamBurst, bucket.tokens + Math.max(0, now - bucket.atMs) / this.#o.spamRefillMs);
    bucket.atMs = now;
    this.#spam.set(objKey, bucket);
    if (bucket.tokens < 1) {
      this.#d.onResult?.('spam_filtered');
      return;
    }
    if (this.#queue.length >= this.#o.queueCapacity) {
      this.#d.onResult?.('dropped');
      return;
    }
    bucket.tokens -= 1;
    const namespace = obj.kind === 'Node' ? 'default' : obj.namespace;
    const ts = apiTime(now);
    const seen = this.#written.get(key);
    if (seen !== undefined) {
      seen.count += 1;
      this.#queue.push({ op: 'patch', namespace, name: seen.name, event: { count: seen.count, lastTimestamp: ts, message: msg, ...this.#body(obj, type, reason, msg, seen.name, namespace, seen.firstTimestamp, ts, seen.count) } });
    } else {
      const name = `${obj.name}.${(BigInt(now) * 1_000_000n + BigInt(this.#seq++ % 1_000_000)).toString(16)}`;
      this.#written.set(key, { name, count: 1, firstTimestamp: ts });
      this.#queue.push({ op: 'create', namespace, name, event: this.#body(obj, type, reason, msg, name, namespace, ts, ts, 1) });
    }
    this.#wake?.();
  }

  #body(obj: InvolvedObject, type: EventType, reason: string, message: string, name: string, namespace: string, first: string, last: string, count: number): Record<string, unknown> {
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: { kind: obj.kind, apiVersion: 'v1', name: obj.name, uid: obj.uid, ...(obj.namespace !== '' ? { namespace: obj.namespace } : {}), ...(obj.fieldPath ? { fieldPath: obj.fieldPath } : {}) },
      reason,
      message,
      type,
      source: { component: 'kubelet', host: this.#d.host },
      reportingComponent: 'kubelet',
      reportingInstance: this.#d.host,
      firstTimestamp: first,
      lastTimestamp: last,
      count,
    };
  }

  start(): void {
    this.#sender ??= this.#send();
  }

  /** Stops the sender after the request in flight; queued events are dropped. */
  async close(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#sender;
  }

  /** Resolves once the queue is empty and nothing is in flight (tests, shutdown). */
  idle(): Promise<void> {
    if (this.#queue.length === 0 && !this.#busy) return Promise.resolve();
    return new Promise<void>((r) => this.#idleWaiters.push(r));
  }

  async #send(): Promise<void> {
    while (!this.#stopped) {
      const p = this.#queue.shift();
      if (p === undefined) {
        for (const w of this.#idleWaiters.splice(0)) w();
        await new Promise<void>((r) => (this.#wake = r));
        this.#wake = undefined;
        continue;
      }
      this.#busy = true;
      try {
        if (p.op === 'create') await this.#d.writer.createEvent(p.namespace, p.event);
        else {
          try {
            await this.#d.writer.patchEvent(p.namespace, p.name, { count: p.event['count'], lastTimestamp: p.event['lastTimestamp'], message: p.event['message'] });
          } catch (err) {
            if (!isNotFound(err)) throw err;
            await this.#d.writer.createEvent(p.namespace, p.event);
          }
        }
        this.#d.onResult?.(p.op === 'create' ? 'created' : 'aggregated');
      } catch (err) {
        this.#d.onResult?.('failed');
        this.#d.logger.v(2).info('event not written', { reason: String(p.event['reason']), object: `${p.namespace}/${p.name}`, error: apiErrorMessage(err) });
      } finally {
        this.#busy = false;
      }
    }
    for (const w of this.#idleWaiters.splice(0)) w();
  }
}
