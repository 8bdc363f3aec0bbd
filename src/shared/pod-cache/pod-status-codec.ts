/**
 * Compact binary encoding of a cache entry's {status, error} (the slot PAYLOAD). Plain data in,
 * bytes out; no shared memory here: the cache encodes into a private buffer before taking a
 * slot's seqlock and decodes only from a private copy taken under it.
 *
 * Format (version 1), all integers LEB128 varints (exitCode zigzag), strings varint byte length
 * + UTF-8, enums one byte:
 *   u8 version | str uid name namespace | n × str ips
 *   n × sandbox { str id | u8 state | str createdAtNs | uint attempt | str ip | n × str ips | u8 hostNetwork }
 *   n × container { str id podSandboxId name | u8 state | str createdAtNs startedAtNs finishedAtNs |
 *                   sint exitCode | str reason message image imageRef hash | uint restartCount attempt }
 *   u8 hasError | [str code message]
 * Change the format → bump CODEC_VERSION (and the layout version if old buffers may be attached).
 */
import type { ContainerState, PodSandboxState } from '../cri/cri-types.js';
import type { WireError } from '../cri/cri-errors.js';
import { CacheError } from './pod-cache-errors.js';
import type { RuntimeContainerStatus, RuntimePodStatus, RuntimeSandboxStatus } from './runtime-pod-status.js';
import { readVarint32 } from '../cri/protobuf-varint.js';

export const CODEC_VERSION = 1;

const SANDBOX_STATES: readonly PodSandboxState[] = ['SANDBOX_READY', 'SANDBOX_NOTREADY'];
const CONTAINER_STATES: readonly ContainerState[] = ['CONTAINER_CREATED', 'CONTAINER_RUNNING', 'CONTAINER_EXITED', 'CONTAINER_UNKNOWN'];

/** A growable private write buffer, reused across encodes by one thread. */
export class StatusEncoder {
  #buf: Buffer = Buffer.allocUnsafe(4096);
  #pos = 0;

  /** Encode into the internal buffer; returns a view valid until the next call. */
  encode(status: RuntimePodStatus, error: WireError | null): Buffer {
    this.#pos = 0;
    this.#u8(CODEC_VERSION);
    this.#str(status.uid);
    this.#str(status.name);
    this.#str(status.namespace);
    this.#strs(status.ips);
    this.#uint(status.sandboxes.length);
    for (const s of status.sandboxes) {
      this.#str(s.id);
      this.#u8(SANDBOX_STATES.indexOf(s.state));
      this.#str(s.createdAtNs);
      this.#uint(s.attempt);
      this.#str(s.ip);
      this.#strs(s.ips);
      this.#u8(s.hostNetwork ? 1 : 0);
    }
    this.#uint(status.containers.length);
    for (const c of status.containers) {
      this.#str(c.id);
      this.#str(c.podSandboxId);
      this.#str(c.name);
      this.#u8(CONTAINER_STATES.indexOf(c.state));
      this.#str(c.createdAtNs);
      this.#str(c.startedAtNs);
      this.#str(c.finishedAtNs);
      this.#uint(((c.exitCode << 1) ^ (c.exitCode >> 31)) >>> 0);
      this.#str(c.reason);
      this.#str(c.message);
      this.#str(c.image);
      this.#str(c.imageRef);
      this.#str(c.hash);
      this.#uint(c.restartCount);
      this.#uint(c.attempt);
    }
    if (error) {
      this.#u8(1);
      this.#str(error.code);
      this.#str(error.message);
    } else {
      this.#u8(0);
    }
    return this.#buf.subarray(0, this.#pos);
  }

  #ensure(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.#buf.copy(next, 0, 0, this.#pos);
    this.#buf = next;
  }

  #u8(v: number): void {
    this.#ensure(1);
    this.#buf[this.#pos++] = v;
  }

  #uint(v: number): void {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`cannot encode ${v} as uint32`);
    this.#ensure(5);
    while (v >= 0x80) {
      this.#buf[this.#pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.#buf[this.#pos++] = v;
  }

  #str(s: string): void {
    const n = s.length;
    // ASCII fast path (ids, timestamps, names): bytes = chars, copied by hand.
    this.#ensure(n + 5);
    const start = this.#pos;
    this.#uint(n);
    const buf = this.#buf;
    let p = this.#pos;
    let k = 0;
    for (; k < n; k++) {
      const ch = s.charCodeAt(k);
      if (ch >= 0x80) break;
      buf[p++] = ch;
    }
    if (k === n) {
      this.#pos = p;
      return;
    }
    this.#pos = start;
    const len = Buffer.byteLength(s, 'utf8');
    this.#uint(len);
    this.#ensure(len);
    this.#pos += this.#buf.write(s, this.#pos, 'utf8');
  }

  #strs(list: readonly string[]): void {
    this.#uint(list.length);
    for (const s of list) this.#str(s);
  }
}

/** Decodes one payload; throws CacheError ERR_CACHE_CORRUPT on any malformed input. */
export function decodeEntry(buf: Buffer, len: number): { status: RuntimePodStatus; error: WireError | null } {
  let pos = 0;
  const fail = (what: string): never => {
    throw new CacheError('ERR_CACHE_CORRUPT', `pod cache payload: ${what} at byte ${pos} of ${len}`);
  };
  const u8 = (): number => (pos < len ? (buf[pos++] ?? 0) : fail('truncated'));
  const uint = (): number => {
    const r = readVarint32(buf, pos, len);
    if (r === null) return fail('malformed or truncated varint');
    pos = r[1];
    return r[0];
  };
  const str = (): string => {
    const n = uint();
    if (pos + n > len) fail('string past end');
    const s = buf.toString('utf8', pos, pos + n);
    pos += n;
    return s;
  };
  const strs = (): string[] => {
    const n = uint();
    const out: string[] = new Array<string>(n);
    for (let k = 0; k < n; k++) out[k] = str();
    return out;
  };
  if (u8() !== CODEC_VERSION) fail('unknown codec version');
  const uid = str();
  const name = str();
  const namespace = str();
  const ips = strs();
  const nSandboxes = uint();
  const sandboxes: RuntimeSandboxStatus[] = [];
  for (let k = 0; k < nSandboxes; k++) {
    const id = str();
    const state = SANDBOX_STATES[u8()] ?? fail('sandbox state');
    const createdAtNs = str();
    const attempt = uint();
    const ip = str();
    const sips = strs();
    const hostNetwork = u8() === 1;
    sandboxes.push({ id, state, createdAtNs, attempt, ip, ips: sips, hostNetwork });
  }
  const nContainers = uint();
  const containers: RuntimeContainerStatus[] = [];
  for (let k = 0; k < nContainers; k++) {
    const id = str();
    const podSandboxId = str();
    const cname = str();
    const state = CONTAINER_STATES[u8()] ?? fail('container state');
    const createdAtNs = str();
    const startedAtNs = str();
    const finishedAtNs = str();
    const zz = uint();
    const exitCode = (zz >>> 1) ^ -(zz & 1);
    containers.push({
      id, podSandboxId, name: cname, state, createdAtNs, startedAtNs, finishedAtNs, exitCode,
      reason: str(), message: str(), image: str(), imageRef: str(), hash: str(),
      restartCount: uint(), attempt: uint(),
    });
  }
  let error: WireError | null = null;
  if (u8() === 1) error = { code: str(), message: str() };
  if (pos !== len) fail('trailing bytes');
  return { status: { uid, name, namespace, ips, sandboxes, containers }, error };
}
