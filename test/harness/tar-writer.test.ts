import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { TarWriterError, writeTar, type TarEntry } from './tar-writer.js';

const ENTRIES: TarEntry[] = [
  { type: 'dir', name: 'bin' },
  { type: 'dir', name: 'tmp', mode: 0o1777 },
  { type: 'file', name: 'bin/tool', data: Buffer.from('#!/bin/sh\necho hi\n'), mode: 0o755 },
  { type: 'file', name: 'empty', data: Buffer.alloc(0) },
  { type: 'file', name: 'block', data: Buffer.alloc(512, 7) },
  { type: 'symlink', name: 'bin/sh', target: 'tool' },
];

describe('tar-writer', () => {
  it('writes an archive GNU tar lists and extracts byte-exactly (modes, symlinks, empty and block-sized files)', () => {
    const tar = writeTar(ENTRIES);
    assert.equal(tar.length % 512, 0);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tar-writer-test-'));
    try {
      const file = path.join(dir, 'a.tar');
      fs.writeFileSync(file, tar);
      const out = path.join(dir, 'out');
      fs.mkdirSync(out);
      const x = spawnSync('tar', ['-xf', file, '-C', out], { encoding: 'utf8' });
      assert.equal(x.status, 0, x.stderr);
      assert.equal(fs.readFileSync(path.join(out, 'bin/tool'), 'utf8'), '#!/bin/sh\necho hi\n');
      assert.equal(fs.statSync(path.join(out, 'bin/tool')).mode & 0o7777, 0o755);
      assert.equal(fs.statSync(path.join(out, 'tmp')).mode & 0o7777, 0o1777);
      assert.equal(fs.readlinkSync(path.join(out, 'bin/sh')), 'tool');
      assert.equal(fs.statSync(path.join(out, 'empty')).size, 0);
      assert.deepEqual(fs.readFileSync(path.join(out, 'block')), Buffer.alloc(512, 7));
      const list = spawnSync('tar', ['-tvf', file], { encoding: 'utf8' });
      assert.equal(list.status, 0, list.stderr);
      assert.match(list.stdout, /root\/root/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is deterministic: same entries, same bytes', () => {
    assert.deepEqual(writeTar(ENTRIES), writeTar(ENTRIES));
  });

  it('rejects names that do not fit a ustar header', () => {
    assert.throws(() => writeTar([{ type: 'file', name: 'x'.repeat(101), data: Buffer.alloc(0) }]), TarWriterError);
  });
});
