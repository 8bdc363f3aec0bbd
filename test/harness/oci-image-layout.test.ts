import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { buildOciImageLayout } from './oci-image-layout.js';

const sha = (b: Buffer): string => 'sha256:' + crypto.createHash('sha256').update(b).digest('hex');

describe('oci-image-layout', () => {
  it('writes index → manifest → config/layer with matching digests, the image name annotation and Cmd/Env', () => {
    const img = buildOciImageLayout({ name: 'docker.io/local/demo:7', layer: [{ type: 'file', name: 'hello', data: Buffer.from('hi') }], cmd: ['sh'] });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oci-layout-test-'));
    try {
      fs.writeFileSync(path.join(dir, 'img.tar'), img.tar);
      const x = spawnSync('tar', ['-xf', 'img.tar'], { cwd: dir, encoding: 'utf8' });
      assert.equal(x.status, 0, x.stderr);
      const blob = (digest: string): Buffer => fs.readFileSync(path.join(dir, 'blobs', 'sha256', digest.slice('sha256:'.length)));
      assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, 'oci-layout'), 'utf8')), { imageLayoutVersion: '1.0.0' });
      const index = JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8'));
      const desc = index.manifests[0];
      assert.equal(desc.annotations['io.containerd.image.name'], 'docker.io/local/demo:7');
      assert.equal(desc.annotations['org.opencontainers.image.ref.name'], '7');
      assert.equal(desc.digest, img.manifestDigest);
      const manifestBytes = blob(desc.digest);
      assert.equal(sha(manifestBytes), desc.digest);
      assert.equal(manifestBytes.length, desc.size);
      const manifest = JSON.parse(manifestBytes.toString());
      assert.equal(manifest.config.digest, img.configDigest);
      const config = JSON.parse(blob(manifest.config.digest).toString());
      assert.deepEqual(config.config.Cmd, ['sh']);
      assert.equal(config.config.Entrypoint, undefined);
      assert.match(config.config.Env[0], /^PATH=/);
      const layer = blob(manifest.layers[0].digest);
      assert.equal(sha(layer), manifest.layers[0].digest);
      assert.deepEqual(config.rootfs.diff_ids, [manifest.layers[0].digest], 'uncompressed layer: diff_id is the layer digest');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
