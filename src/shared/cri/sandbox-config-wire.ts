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

import { readVarint32, writeVarint32 } from './protobuf-varint.js';

/** Wire type 2 (length-delimited) tags. */
const RUN_POD_SANDBOX_CONFIG_TAG = (1 << 3) | 2;
const CREATE_CONTAINER_SANDBOX_CONFIG_TAG = (3 << 3) | 2;

export class SandboxConfigWire {
  readonly #bytes = new WeakMap<object, Buffer>();

  /** Keeps the config's bytes out of an encoded RunPodSandboxRequest whose `config` was `config`. */
  remember(config: unknown, runPodSandboxRequest: Buffer): void {
    if (typeof config !== 'object' || config === null || runPodSandboxRequest[0] !== RUN_POD_SANDBOX_CONFIG_TAG) return;
    const len = readVarint32(runPodSandboxRequest, 1);
    if (len === null || len[1] + len[0] > runPodSandboxRequest.length) return;
    this.#bytes.set(config, Buffer.from(runPodSandboxRequest.subarray(len[1], len[1] + len[0])));
  }

  /**
   * A CreateContainerRequest: `encodeRest()` (its fields 1 and 2) with `sandboxConfig`'s kept
   * bytes as field 3; undefined when there are none (encode the whole request then).
   */
  createContainerRequest(sandboxConfig: unknown, encodeRest: () => Buffer): Buffer | undefined {
    const bytes = typeof sandboxConfig === 'object' && sandboxConfig !== null ? this.#bytes.get(sandboxConfig) : undefined;
    if (bytes === undefined) return undefined;
    const head = [CREATE_CONTAINER_SANDBOX_CONFIG_TAG];
    writeVarint32(head, bytes.length);
    return Buffer.concat([encodeRest(), Buffer.from(head), bytes]);
  }
}
