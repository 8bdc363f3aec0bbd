/**
 * Encodes a pod's PodSandboxConfig once per sync instead of twice (issue 15: "reuse serialized
 * request parts where the wire allows"). A sync that starts a pod sends the same config object
 * in RunPodSandboxRequest (field 1) and in every CreateContainerRequest (field 3); encoding it
 * (protobufjs fromObject + encode of labels, annotations, the Linux security context) was a
 * tenth of a pod worker's serialization time.
 *
 * The wire allows it: a protobuf message is the concatenation of its fields in any order, and an
 * embedded message is its tag, its length and its own encoding. So RunPodSandbox's request, as
 * encoded, contains the config's bytes right after its first tag and length (protobufjs writes
 * fields in field-number order), and a CreateContainerRequest is its fields 1 and 2 encoded as
 * usual followed by tag 3, the length, and those bytes.
 *
 * Ownership and invariant: the bytes are kept per config object (a WeakMap: they go when the
 * sync's config goes), so the config must not change after RunPodSandbox encoded it. The sync
 * code builds it once per sync (generatePodSandboxConfig) and never writes to it afterwards;
 * tests compare the spliced encoding with the plain one.
 */

/** Wire type 2 (length-delimited) tags. */
const RUN_POD_SANDBOX_CONFIG_TAG = (1 << 3) | 2;
const CREATE_CONTAINER_SANDBOX_CONFIG_TAG = (3 << 3) | 2;

function readVarint(buf: Buffer, at: number): { value: number; next: number } | undefined {
  let value = 0;
  for (let shift = 0, i = at; i < buf.length && shift < 35; shift += 7, i++) {
    const b = buf[i]!;
    value += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return { value, next: i + 1 };
  }
  return undefined;
}

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

export class SandboxConfigWire {
  readonly #bytes = new WeakMap<object, Buffer>();

  /** Keeps the config's bytes out of an encoded RunPodSandboxRequest whose `config` was `config`. */
  remember(config: unknown, runPodSandboxRequest: Buffer): void {
    if (typeof config !== 'object' || config === null || runPodSandboxRequest[0] !== RUN_POD_SANDBOX_CONFIG_TAG) return;
    const len = readVarint(runPodSandboxRequest, 1);
    if (len === undefined || len.next + len.value > runPodSandboxRequest.length) return;
    this.#bytes.set(config, Buffer.from(runPodSandboxRequest.subarray(len.next, len.next + len.value)));
  }

  /**
   * A CreateContainerRequest: `encodeRest()` (its fields 1 and 2) with `sandboxConfig`'s kept
   * bytes as field 3; undefined when there are none (encode the whole request then).
   */
  createContainerRequest(sandboxConfig: unknown, encodeRest: () => Buffer): Buffer | undefined {
    const bytes = typeof sandboxConfig === 'object' && sandboxConfig !== null ? this.#bytes.get(sandboxConfig) : undefined;
    if (bytes === undefined) return undefined;
    return Buffer.concat([encodeRest(), Buffer.of(CREATE_CONTAINER_SANDBOX_CONFIG_TAG), varint(bytes.length), bytes]);
  }
}
