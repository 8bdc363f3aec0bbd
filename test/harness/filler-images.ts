/**
 * Single-layer images of a set size for image GC tests: one file of `bytes` bytes (a distinct
 * byte pattern per name, so containerd stores each layer apart), as OCI image-layout tars for
 * `ctr images import` (startContainerd's extraImageTars). No command: never run, only stored.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildOciImageLayout } from './oci-image-layout.js';

export interface FillerImage {
  readonly name: string;
  readonly tarPath: string;
  /** `sha256:…` config digest: the image id CRI reports. */
  readonly id: string;
}

export function buildFillerImages(dir: string, names: readonly string[], bytes: number): FillerImage[] {
  fs.mkdirSync(dir, { recursive: true });
  return names.map((name, i) => {
    const data = Buffer.alloc(bytes, (i * 37 + 11) % 256);
    data.write(name, 0);
    const layout = buildOciImageLayout({ name, layer: [{ type: 'file', name: 'filler', data, mode: 0o644 }], cmd: ['/filler'] });
    const tarPath = path.join(dir, `filler-${i}.tar`);
    fs.writeFileSync(tarPath, layout.tar);
    return { name, tarPath, id: layout.configDigest };
  });
}
