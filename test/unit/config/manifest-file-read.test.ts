/**
 * Static-pod files are read where they are decoded (manifest-file-read.ts): on the decoder thread
 * in the agent. Every hostile kind of directory entry is told apart on the descriptor, before a
 * byte of it is read, on the product's thread and inline alike.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ThreadManifestDecoder } from '../../../src/main/config/manifest-decode-thread-client.js';
import { createFileSource } from '../../../src/main/config/source-file.js';
import { PodConfig } from '../../../src/main/config/pod-config.js';
import { realClock } from '../../../src/shared/clock/clock.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { inlineManifestDecoder, type ManifestDecoder } from '../../../src/shared/manifest/manifest-decoder.js';
import { manifestDigest } from '../../../src/shared/manifest/manifest-digest.js';
import type { FileDecodeResult } from '../../../src/shared/manifest/manifest-file-read.js';
import { within } from '../../harness/poll.js';

const manifest = (name: string): string => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n  - name: app\n    image: nginx:1\n`;

function summary(r: FileDecodeResult): string {
  switch (r.kind) {
    case 'decoded':
      return r.result.ok ? `decoded:${r.result.pods.map((p) => p.metadata?.name).join(',')}` : `decoded:${r.result.error.code}`;
    case 'too-large':
      return `too-large:${r.size}`;
    case 'failed':
      return `failed:${r.error.code}`;
    default:
      return r.kind;
  }
}

async function entries(): Promise<{ dir: string; file(name: string): string }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-file-read-'));
  await fs.writeFile(path.join(dir, 'web.yaml'), manifest('web'));
  await fs.writeFile(path.join(dir, 'big.yaml'), manifest('big') + '#'.repeat(2048));
  await fs.mkdir(path.join(dir, 'dir.yaml'));
  await fs.symlink(path.join(dir, 'web.yaml'), path.join(dir, 'link.yaml'));
  execFileSync('mkfifo', [path.join(dir, 'fifo.yaml')]);
  return { dir, file: (name) => path.join(dir, name) };
}

for (const [label, make] of [
  ['the product decoder thread', (): ManifestDecoder => new ThreadManifestDecoder({ clock: realClock, logger: silentLogger })],
  ['inline', (): ManifestDecoder => inlineManifestDecoder],
] as const) {
  test(`decodeFile (${label}): files decoded, a symlink followed; a FIFO, a directory, a missing or oversized file never read`, async () => {
    const { dir, file } = await entries();
    const d = make();
    const ctx = (name: string) => ({ source: 'file' as const, origin: file(name), nodeName: 'n1', allowLists: false });
    const req = (name: string, lastDigest?: string) => ({ file: file(name), ctx: ctx(name), maxBytes: 1024, lastDigest });
    try {
      // A FIFO with no writer would block a plain open forever: within() bounds the whole batch.
      const rs = await within(Promise.all(['web.yaml', 'link.yaml', 'fifo.yaml', 'dir.yaml', 'gone.yaml', 'big.yaml'].map((n) => d.decodeFile(req(n)))), 'every entry answered');
      assert.deepEqual(rs.map(summary), ['decoded:web-n1', 'decoded:web-n1', 'not-file', 'not-file', 'missing', `too-large:${manifest('big').length + 2048}`]);
      const st = await fs.stat(file('web.yaml'));
      const web = rs[0];
      assert.ok(web?.kind === 'decoded');
      assert.deepEqual(web.stamp, { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs }, 'the stamp is the read descriptor\'s');
      assert.equal(web.digest, manifestDigest(manifest('web')));
      // The same text again is not decoded.
      assert.equal(summary(await d.decodeFile(req('web.yaml', web.digest))), 'unchanged');
    } finally {
      await d.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
}

test('fs.watch names hostile entries beside a valid file: the valid pod is added, the rest skipped or reported by file', async () => {
  const { dir, file } = await entries();
  const clock = new FakeClock(Date.now() + 60_000);
  const decoder = new ThreadManifestDecoder({ clock, logger: silentLogger });
  const cfg = new PodConfig({ clock, logger: silentLogger });
  const errors: string[] = [];
  const debounceMs = 50;
  const src = createFileSource({ path: dir, nodeName: 'n1', sink: cfg.channel('file'), clock, logger: silentLogger, watch: false, decoder, debounceMs, maxFileBytes: 1024, onError: (e) => errors.push(`${path.basename(e.origin)}:${e.code}`) });
  try {
    await fs.rm(file('link.yaml'));
    await fs.rename(file('web.yaml'), path.join(dir, '.web.yaml'));
    src.start();
    await within(src.syncNow(), 'the first full read');
    while (cfg.tryNext() !== undefined);
    errors.length = 0;
    await fs.rename(path.join(dir, '.web.yaml'), file('web.yaml'));
    for (const n of ['fifo.yaml', 'dir.yaml', 'big.yaml', 'gone.yaml', 'web.yaml']) src.noteChanged(n);
    clock.step(debounceMs);
    const u = await within(cfg.next(), 'the update with the valid pod');
    assert.equal(u?.op, 'ADD');
    assert.deepEqual(u?.pods.map((p) => p.metadata?.name), ['web-n1']);
    assert.deepEqual(errors, [], 'the oversized file was already reported by the full read (each problem once)');
  } finally {
    await src.close();
    await decoder.close();
    cfg.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});
