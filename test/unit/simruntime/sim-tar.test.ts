/**
 * The simulated `tar` (sim-tar.ts): GNU tar reads what we write; we read what GNU tar writes
 * (ustar, PAX and GNU long names, directories); arbitrary bytes give entries or TarError only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { TarError, TarReader, writeTar, type TarEntry } from '../../../src/simruntime/sim-tar.js';

function readAll(b: Buffer, chunk: number): TarEntry[] {
  const r = new TarReader({ maxEntryBytes: 1 << 24 });
  const out: TarEntry[] = [];
  for (let o = 0; o < b.length; o += chunk) out.push(...r.push(b.subarray(o, o + chunk)));
  return out;
}

test('GNU tar lists and extracts what writeTar writes (a long name through PAX included)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simtar-'));
  try {
    const long = `d/${'n'.repeat(120)}/${'f'.repeat(90)}.txt`;
    const archive = writeTar([
      { type: 'dir', name: 'd', mode: 0o755, mtimeSec: 1_700_000_000 },
      { type: 'file', name: 'd/hello.txt', mode: 0o644, mtimeSec: 1_700_000_000, data: Buffer.from('hello\n') },
      { type: 'file', name: long, mode: 0o600, mtimeSec: 1_700_000_000, data: Buffer.alloc(1000, 7) },
    ]);
    fs.writeFileSync(path.join(dir, 'a.tar'), archive);
    execFileSync('tar', ['-xf', 'a.tar'], { cwd: dir });
    assert.equal(fs.readFileSync(path.join(dir, 'd/hello.txt'), 'utf8'), 'hello\n');
    assert.equal(fs.readFileSync(path.join(dir, long)).length, 1000);
    assert.deepEqual(readAll(archive, 100).map((e) => e.name), ['d/', 'd/hello.txt', long]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('TarReader reads GNU tar archives in every format, split anywhere', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simtar-'));
  try {
    const long = `sub/${'x'.repeat(150)}`;
    fs.mkdirSync(path.join(dir, 'src', 'sub'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'src', 'sub', 'a.txt'), 'aaa');
    fs.writeFileSync(path.join(dir, 'src', long), 'long');
    for (const format of ['ustar', 'pax', 'gnu']) {
      if (format === 'ustar') {
        execFileSync('tar', ['--format=ustar', '-cf', '../u.tar', 'sub/a.txt'], { cwd: path.join(dir, 'src') });
        const e = readAll(fs.readFileSync(path.join(dir, 'u.tar')), 77);
        assert.deepEqual(e.map((x) => [x.name, x.type === 'file' ? x.data.toString() : '']), [['sub/a.txt', 'aaa']]);
        continue;
      }
      execFileSync('tar', [`--format=${format}`, '-cf', `../${format}.tar`, 'sub'], { cwd: path.join(dir, 'src') });
      const e = readAll(fs.readFileSync(path.join(dir, `${format}.tar`)), 333);
      const files = e.filter((x) => x.type === 'file').map((x) => [x.name, x.type === 'file' ? x.data.toString() : '']).sort();
      assert.deepEqual(files, [['sub/a.txt', 'aaa'], [long, 'long']].sort(), format);
      assert.ok(e.some((x) => x.type === 'dir' && x.name.replace(/\/$/, '') === 'sub'), format);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('arbitrary bytes: entries or TarError only; an entry over the limit is refused', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 3000 }), fc.boolean(), (bytes, withValidHead) => {
      const head = withValidHead ? writeTar([{ type: 'file', name: 'x', mode: 0o644, mtimeSec: 0, data: Buffer.from('y') }]).subarray(0, 512) : Buffer.alloc(0);
      const r = new TarReader({ maxEntryBytes: 1024 });
      try {
        r.push(Buffer.concat([head, Buffer.from(bytes)]));
      } catch (err) {
        if (!(err instanceof TarError)) throw err;
      }
    }),
    { seed: 20261127, numRuns: 3000 },
  );
  const big = writeTar([{ type: 'file', name: 'big', mode: 0o644, mtimeSec: 0, data: Buffer.alloc(5000) }]);
  assert.throws(() => new TarReader({ maxEntryBytes: 4096 }).push(big), (e: unknown) => e instanceof TarError && /exceeds the limit/.test(e.message));
});
