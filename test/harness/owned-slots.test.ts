/**
 * owned-slots: claims are exclusive, released slots are reused, a dead owner's slot is reclaimed
 * (its recorded temp dir handed to the hook) wherever it sits in the registry, and a slot that is
 * mid-claim (no owner file yet) or owned by a live process is never touched.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { claimSlot, liveSlots } from './owned-slots.js';

function registry(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-owned-slots-test-'));
}

/** A PID that has exited (a child we ran to completion). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '']);
  assert.ok(r.pid !== undefined && r.pid > 0);
  return r.pid;
}

function plantSlot(dir: string, n: number, owner: number | undefined, tmpDir: string): void {
  fs.mkdirSync(path.join(dir, `slot-${n}`));
  fs.writeFileSync(path.join(dir, `slot-${n}`, 'tmpdir'), tmpDir);
  if (owner !== undefined) fs.writeFileSync(path.join(dir, `slot-${n}`, 'owner'), String(owner));
}

test('claims are exclusive and released slots are reused; release is idempotent', () => {
  const dir = registry();
  try {
    const reclaimed: number[] = [];
    const opts = { dir, max: 3, tmpDir: '/tmp/x', reclaim: (n: number) => reclaimed.push(n) };
    const a = claimSlot(opts);
    const b = claimSlot(opts);
    assert.deepEqual([a.slot, b.slot], [1, 2]);
    assert.deepEqual(liveSlots(dir).sort(), [1, 2]);
    a.release();
    a.release();
    assert.deepEqual(liveSlots(dir), [2]);
    assert.equal(claimSlot(opts).slot, 1);
    assert.equal(claimSlot(opts).slot, 3);
    assert.throws(() => claimSlot(opts), /no free harness slot/);
    assert.deepEqual(reclaimed, [], 'live owners are never reclaimed');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('every stale slot is reclaimed on a claim, even above the one taken; mid-claim slots are left alone', () => {
  const dir = registry();
  try {
    plantSlot(dir, 2, undefined, '/tmp/mid-claim'); // being claimed right now by someone
    plantSlot(dir, 5, deadPid(), '/tmp/dead-owner-tmp');
    const calls: Array<[number, string | undefined]> = [];
    const s = claimSlot({ dir, max: 10, tmpDir: '/tmp/mine', reclaim: (n, t) => calls.push([n, t]) });
    assert.equal(s.slot, 1);
    assert.deepEqual(calls, [[5, '/tmp/dead-owner-tmp']]);
    assert.equal(fs.existsSync(path.join(dir, 'slot-5')), false, 'stale slot gone');
    assert.equal(fs.existsSync(path.join(dir, 'slot-2')), true, 'mid-claim slot untouched');
    assert.equal(fs.readFileSync(path.join(dir, 'slot-1', 'tmpdir'), 'utf8'), '/tmp/mine');
    assert.equal(Number(fs.readFileSync(path.join(dir, 'slot-1', 'owner'), 'utf8')), process.pid);
    // The mid-claim slot is skipped, not taken.
    assert.equal(claimSlot({ dir, max: 10, tmpDir: '/tmp/mine2', reclaim: () => undefined }).slot, 3);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a stale slot is reused after reclaim; skip leaves slots out', () => {
  const dir = registry();
  try {
    plantSlot(dir, 1, deadPid(), '/tmp/old');
    const calls: number[] = [];
    const s = claimSlot({ dir, max: 4, tmpDir: '/tmp/new', reclaim: (n) => calls.push(n), skip: new Set([2]) });
    assert.equal(s.slot, 1);
    assert.deepEqual(calls, [1]);
    assert.equal(claimSlot({ dir, max: 4, tmpDir: '/tmp/new', reclaim: () => undefined, skip: new Set([2]) }).slot, 3);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
