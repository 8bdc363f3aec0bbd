/**
 * `--pin` on real processes: a sim runtime started on a CPU set runs there (its every thread, as
 * the kernel reports it), and the bench pinning itself for a ceiling restores its own mask after.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { realClock } from '../../src/shared/clock/clock.js';
import { allowedCpus, withOwnAffinity } from '../../bench/cpu-pinning.js';
import { startSimRuntime } from '../../bench/processes.js';

test('a sim runtime started with cpus runs on those CPUs only, every thread of it', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-pin-'));
  const sim = await startSimRuntime({ clock: realClock, socket: path.join(dir, 'cri.sock'), profile: 'zero', cpus: '0' });
  try {
    assert.equal(allowedCpus(sim.pid), '0');
    const tasks = await fs.readdir(`/proc/${sim.pid}/task`);
    assert.ok(tasks.length > 1, 'node has helper threads');
    for (const t of tasks) assert.equal(allowedCpus(Number(t)), '0', `thread ${t}`);
  } finally {
    await sim.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('withOwnAffinity pins this process for the call and restores its mask after, also on a throw', async () => {
  const before = allowedCpus();
  const last = String(os.availableParallelism() - 1);
  const inside = await withOwnAffinity(last, async () => allowedCpus());
  assert.equal(inside, last);
  assert.equal(allowedCpus(), before);
  await assert.rejects(withOwnAffinity(last, async () => { throw new Error('boom'); }), /boom/);
  assert.equal(allowedCpus(), before);
});
