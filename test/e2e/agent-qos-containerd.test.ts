/**
 * The QoS scenario (qos-scenario.ts) on real containerd (private instance from the harness;
 * root only — as non-root the before hook fails loudly, nothing is skipped): the agent creates
 * the kubepods/QoS/pod cgroups on the host under a private --cgroup-root, containers land in
 * their pod cgroup (read inside through ExecSync), the limit files on the host match the spec,
 * and the containerd harness removes the tree at the end.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startContainerd, type ContainerdInstance } from '../harness/containerd-harness.js';
import { cgroupHierarchies } from '../harness/test-cgroups.js';
import { runQosScenario } from './qos-scenario.js';
import { startAgent } from './agent-harness.js';
import os from 'node:os';

let ctrd: ContainerdInstance | undefined;

before(async () => {
  ctrd = await startContainerd();
}, { timeout: 120_000 });

after(async () => {
  const root = ctrd?.agentCgroupRoot;
  await ctrd?.stop();
  // The harness removed the agent's cgroup tree with the instance.
  if (root !== undefined) for (const h of cgroupHierarchies()) assert.equal(fs.existsSync(path.join(h, root)), false, `${h}${root} left behind`);
}, { timeout: 120_000 });

test('QoS classes, pod cgroups, their limits and oom_score_adj on containerd', { timeout: 240_000 }, async () => {
  assert.ok(ctrd);
  // restrict_oom_score_adj (required on these machines): containerd raises a lower value to its own.
  const own = Number(fs.readFileSync(`/proc/${ctrd.pid}/oom_score_adj`, 'utf8').trim());
  await runQosScenario({ endpoint: ctrd.endpoint, hostCgroups: true, effectiveOOMScoreAdj: (v) => Math.max(v, own), cgroupRoot: ctrd.agentCgroupRoot });
});

test('cgroups the agent cannot make with this runtime: it does not start, and says why and how to opt out', { timeout: 120_000 }, async () => {
  assert.ok(ctrd);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-qos-refused-'));
  try {
    await assert.rejects(
      startAgent({ endpoint: ctrd.endpoint, manifestDir: dir, workers: 1, extraArgs: ['--cgroup-driver', 'systemd', '--cgroup-root', '/'] }),
      (err: unknown) => {
        const text = err instanceof Error ? err.message : String(err);
        return /agent failed to start/.test(text) && /--cgroup-driver=systemd/.test(text) && /--cgroups-per-qos=false/.test(text);
      },
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
