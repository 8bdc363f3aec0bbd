import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DirUsageWalk } from '../../../workers/eviction/dir-usage.js';

const MiB = 1024 * 1024;

function tmp(t: { after(fn: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dir-usage-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** What `du -s -B1` would say: st_blocks * 512 of everything under `dir`, lstat, hard links once. */
function duBytes(dir: string): number {
  const seen = new Set<number>();
  let total = 0;
  const visit = (p: string): void => {
    const st = fs.lstatSync(p);
    if (st.nlink > 1 && !st.isDirectory()) {
      if (seen.has(st.ino)) return;
      seen.add(st.ino);
    }
    total += st.blocks * 512;
    if (st.isDirectory()) for (const n of fs.readdirSync(p)) visit(path.join(p, n));
  };
  visit(dir);
  return total;
}

async function walkAll(root: string, budget = 1_000_000): Promise<{ bytes: number; entries: number; steps: number; walk: DirUsageWalk }> {
  const walk = new DirUsageWalk(root);
  let steps = 0;
  while (!walk.progress.done) {
    const used = await walk.step(budget);
    assert.ok(used <= budget, `a step used ${used} entries for a budget of ${budget}`);
    steps++;
    assert.ok(steps < 10_000, 'the walk ends');
  }
  await walk.close();
  return { ...walk.progress, steps, walk };
}

test('dir usage: counts blocks of files and directories like du, a hard-linked file once', async (t) => {
  const dir = tmp(t);
  fs.mkdirSync(path.join(dir, 'a', 'b', 'c'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'big'), Buffer.alloc(2 * MiB, 1));
  fs.writeFileSync(path.join(dir, 'a', 'b', 'c', 'deep'), Buffer.alloc(300_000, 2));
  fs.linkSync(path.join(dir, 'big'), path.join(dir, 'a', 'big-again'));
  const r = await walkAll(dir);
  assert.equal(r.bytes, duBytes(dir));
  assert.ok(r.bytes >= 2 * MiB + 300_000 && r.bytes < 3 * MiB, `2 MiB counted once, not twice: ${r.bytes}`);
  assert.equal(r.entries, 7, 'root, a, b, c, deep, big, big-again');
});

test('dir usage: a symlink to a big file or directory outside is one small entry, never followed', async (t) => {
  const dir = tmp(t);
  const outside = tmp(t);
  fs.writeFileSync(path.join(outside, 'huge'), Buffer.alloc(4 * MiB, 3));
  fs.symlinkSync(path.join(outside, 'huge'), path.join(dir, 'to-file'));
  fs.symlinkSync(outside, path.join(dir, 'to-dir'));
  fs.symlinkSync(dir, path.join(dir, 'loop'));
  fs.writeFileSync(path.join(dir, 'small'), 'x');
  const r = await walkAll(dir);
  assert.ok(r.bytes < 64 * 1024, `nothing behind the links counted: ${r.bytes}`);
  assert.equal(r.entries, 5);
});

test('dir usage: the budget bounds each step; the walk resumes where it stopped', async (t) => {
  const dir = tmp(t);
  for (let d = 0; d < 4; d++) {
    fs.mkdirSync(path.join(dir, `d${d}`));
    for (let f = 0; f < 10; f++) fs.writeFileSync(path.join(dir, `d${d}`, `f${f}`), Buffer.alloc(5_000, f));
  }
  const whole = await walkAll(dir);
  const sliced = await walkAll(dir, 3);
  assert.equal(sliced.bytes, whole.bytes);
  assert.equal(sliced.entries, 45);
  assert.ok(sliced.steps >= 15, `45 entries in slices of 3: ${sliced.steps} steps`);
});

test('dir usage: a missing root is 0 bytes and done; files removed mid-walk are skipped', async (t) => {
  const dir = tmp(t);
  const gone = await walkAll(path.join(dir, 'nope'));
  assert.deepEqual([gone.bytes, gone.entries], [0, 0]);
  assert.equal(gone.walk.errors, 0);

  for (let f = 0; f < 20; f++) fs.writeFileSync(path.join(dir, `f${f}`), Buffer.alloc(10_000, f));
  const walk = new DirUsageWalk(dir);
  await walk.step(2);
  for (let f = 0; f < 20; f++) fs.rmSync(path.join(dir, `f${f}`));
  while (!walk.progress.done) await walk.step(100);
  await walk.close();
  assert.equal(walk.errors, 0, 'vanished entries are not errors');
  assert.ok(walk.progress.entries < 21, 'what vanished is not counted');
});

test('dir usage: close() mid-walk releases the directory handle and ends the walk', async (t) => {
  const dir = tmp(t);
  for (let f = 0; f < 50; f++) fs.writeFileSync(path.join(dir, `f${f}`), 'x');
  const walk = new DirUsageWalk(dir);
  await walk.step(5);
  assert.equal(walk.progress.done, false);
  await walk.close();
  await walk.close();
  assert.equal(walk.progress.done, true);
  assert.equal(await walk.step(10), 0);
});
