/**
 * Builds an OCI image-layout tar (the format `ctr images import` reads) for a single-layer
 * linux/amd64 image: `oci-layout`, `index.json` (naming the image through the
 * `io.containerd.image.name` annotation), and `blobs/sha256/` holding the uncompressed layer,
 * the image config and the manifest. Deterministic: same inputs, same digests, same bytes.
 */
import crypto from 'node:crypto';
import { writeTar, type TarEntry } from './tar-writer.js';

export interface OciImageSpec {
  /** Full reference, e.g. `docker.io/local/busybox:1`. */
  readonly name: string;
  /** The single layer's entries (paths without a leading `/`). */
  readonly layer: readonly TarEntry[];
  /** Omitted like Docker Hub's busybox, which only sets Cmd. */
  readonly entrypoint?: readonly string[];
  readonly cmd?: readonly string[];
  readonly env?: readonly string[];
}

export interface OciImageLayout {
  /** The image-layout tar to import. */
  readonly tar: Buffer;
  /** `sha256:…` of the image config: what containerd reports as the image id. */
  readonly configDigest: string;
  readonly manifestDigest: string;
}

const MEDIA_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const MEDIA_CONFIG = 'application/vnd.oci.image.config.v1+json';
const MEDIA_LAYER = 'application/vnd.oci.image.layer.v1.tar';
const MEDIA_INDEX = 'application/vnd.oci.image.index.v1+json';
export const DEFAULT_PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

interface Blob {
  readonly digest: string;
  readonly data: Buffer;
}

function blob(data: Buffer): Blob {
  return { digest: 'sha256:' + crypto.createHash('sha256').update(data).digest('hex'), data };
}

function jsonBlob(value: unknown): Blob {
  return blob(Buffer.from(JSON.stringify(value)));
}

export function buildOciImageLayout(spec: OciImageSpec): OciImageLayout {
  const layer = blob(writeTar(spec.layer));
  const config = jsonBlob({
    created: '2020-01-01T00:00:00Z',
    architecture: 'amd64',
    os: 'linux',
    config: {
      ...(spec.entrypoint ? { Entrypoint: spec.entrypoint } : {}),
      ...(spec.cmd ? { Cmd: spec.cmd } : {}),
      Env: spec.env ?? [DEFAULT_PATH_ENV],
      WorkingDir: '/',
    },
    rootfs: { type: 'layers', diff_ids: [layer.digest] },
    history: [{ created: '2020-01-01T00:00:00Z', created_by: 'shardlet test harness' }],
  });
  const manifest = jsonBlob({
    schemaVersion: 2,
    mediaType: MEDIA_MANIFEST,
    config: { mediaType: MEDIA_CONFIG, digest: config.digest, size: config.data.length },
    layers: [{ mediaType: MEDIA_LAYER, digest: layer.digest, size: layer.data.length }],
  });
  const tag = spec.name.slice(spec.name.lastIndexOf(':') + 1);
  const index = {
    schemaVersion: 2,
    mediaType: MEDIA_INDEX,
    manifests: [
      {
        mediaType: MEDIA_MANIFEST,
        digest: manifest.digest,
        size: manifest.data.length,
        platform: { architecture: 'amd64', os: 'linux' },
        annotations: { 'io.containerd.image.name': spec.name, 'org.opencontainers.image.ref.name': tag },
      },
    ],
  };
  const blobEntry = (b: Blob): TarEntry => ({ type: 'file', name: `blobs/sha256/${b.digest.slice('sha256:'.length)}`, data: b.data });
  const tar = writeTar([
    { type: 'file', name: 'oci-layout', data: Buffer.from(JSON.stringify({ imageLayoutVersion: '1.0.0' })) },
    { type: 'file', name: 'index.json', data: Buffer.from(JSON.stringify(index)) },
    { type: 'dir', name: 'blobs' },
    { type: 'dir', name: 'blobs/sha256' },
    blobEntry(layer),
    blobEntry(config),
    blobEntry(manifest),
  ]);
  return { tar, configDigest: config.digest, manifestDigest: manifest.digest };
}
