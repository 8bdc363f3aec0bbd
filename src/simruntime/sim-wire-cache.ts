/**
 * Pre-encoded list responses: what keeps ListContainers/ListPodSandbox at 20,000 containers
 * fast. A repeated message field on the wire is just its elements' frames (tag, length, bytes)
 * concatenated, so a one-element `ListContainersResponse` encoding IS that element's frame.
 * Each record's frame is cached (keyed by the only field of Container/PodSandbox that changes:
 * `state`) and a list answer is a Buffer.concat of cached frames — no per-call protobuf
 * encoding of unchanged objects.
 *
 * Wiring: handlers return a {@link PreEncoded}; {@link withPreEncoded} wraps the service
 * definition's serializer for the named methods to pass such a value through as-is (other
 * values are encoded normally). The cache is a WeakMap: removed records fall out by themselves.
 */
import type * as grpc from '@grpc/grpc-js';

export class PreEncoded {
  constructor(
    readonly buffer: Buffer,
    /** Elements in the list (for latency that scales with size). */
    readonly count: number,
  ) {}
}

export class ListFrameCache<R extends object> {
  readonly #cache = new WeakMap<R, { key: string; frame: Buffer }>();
  readonly #encodeOne: (r: R) => Buffer;
  readonly #keyOf: (r: R) => string;

  /** `encodeOne` must encode a response holding exactly `[r]` in the list field. */
  constructor(encodeOne: (r: R) => Buffer, keyOf: (r: R) => string) {
    this.#encodeOne = encodeOne;
    this.#keyOf = keyOf;
  }

  encode(records: readonly R[]): PreEncoded {
    const frames: Buffer[] = new Array<Buffer>(records.length);
    for (let i = 0; i < records.length; i++) {
      const r = records[i] as R;
      const key = this.#keyOf(r);
      let hit = this.#cache.get(r);
      if (!hit || hit.key !== key) {
        hit = { key, frame: this.#encodeOne(r) };
        this.#cache.set(r, hit);
      }
      frames[i] = hit.frame;
    }
    return new PreEncoded(Buffer.concat(frames), records.length);
  }
}

/** The original serializer of `method` (to build frames with). */
export function serializerOf(def: grpc.ServiceDefinition, method: string): (value: unknown) => Buffer {
  const m = def[method];
  if (!m) throw new Error(`service has no method ${method}`);
  return m.responseSerialize as (value: unknown) => Buffer;
}

/** A copy of `def` whose `methods` serialize a PreEncoded response as its bytes. */
export function withPreEncoded(def: grpc.ServiceDefinition, methods: readonly string[]): grpc.ServiceDefinition {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = { ...def };
  for (const name of methods) {
    const m = def[name];
    if (!m) throw new Error(`service has no method ${name}`);
    const orig = m.responseSerialize as (value: unknown) => Buffer;
    out[name] = { ...m, responseSerialize: (value: unknown) => (value instanceof PreEncoded ? value.buffer : orig(value)) };
  }
  return out as grpc.ServiceDefinition;
}
