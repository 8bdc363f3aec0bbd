/**
 * A reusable buffer for the large replies of one method (any thread; one per method per
 * transport, h2 only). The PLEG lists every sandbox and container each second: at 5,000 pods
 * two replies of 1–2 MB, each assembled in a fresh buffer, were megabytes of ArrayBuffers per
 * second, and V8 answers that much external memory with a full collection of the thread's heap
 * every second or two (`--trace-gc`: "external memory pressure").
 *
 * Only for a method whose deserializer keeps nothing that aliases the reply bytes (the list
 * memo, cri-list-memo.ts, copies what it keeps): the buffer is overwritten by the next reply.
 *
 * Ownership: `borrow` hands the held buffer to one call (or a fresh one when it is lent out,
 * too small, or more than SHRINK_FACTOR × the size asked: a node that drained gives the large
 * one up); the call hands it back once its reply was deserialized (H2UnaryCall.complete), and
 * the larger of the held and returned buffers is kept. At most one buffer is held.
 */

/** A held buffer more than this many times the size asked is dropped (see above). */
const SHRINK_FACTOR = 4;

export class ReplyBuffers {
  #held: Buffer | null = null;

  /** A buffer of at least `length` octets, the caller's until {@link giveBack}. */
  borrow(length: number): Buffer {
    const held = this.#held;
    if (held !== null && held.length >= length && held.length <= SHRINK_FACTOR * length) {
      this.#held = null;
      return held;
    }
    if (held !== null && held.length > SHRINK_FACTOR * length) this.#held = null;
    // An eighth of headroom: a list that grows by a few items still fits.
    return Buffer.allocUnsafe(length + (length >>> 3));
  }

  /** Returns a buffer from {@link borrow}; the caller keeps no view of it. */
  giveBack(buf: Buffer): void {
    if (this.#held === null || buf.length > this.#held.length) this.#held = buf;
  }

  /** Octets held now (tests). */
  get heldBytes(): number {
    return this.#held?.length ?? 0;
  }
}
