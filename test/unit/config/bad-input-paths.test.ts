/**
 * Item 15 at the worker: a pod whose uid climbs (admission rejects it, see bad-input-decode; this
 * is the second line, for a pod that reached a worker some other way) can make the kuberuntime
 * neither create nor delete anything outside `--pod-logs-dir`, nor another pod's directory.
 * Uses the syncer's default log-directory wiring (resolveDeps → nodePodLogDirs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PathOutsideRootError, resolveWithinRoot } from '../../../workers/kuberuntime/pod-log-dirs.js';
import { container, makeHarness, makePod } from '../kuberuntime/kuberuntime-harness.js';

test('15: resolveWithinRoot refuses the root, its parents, siblings and (for pod dirs) grandchildren', () => {
  assert.equal(resolveWithinRoot('/var/log/pods', 'default_web_u1'), '/var/log/pods/default_web_u1');
  assert.equal(resolveWithinRoot('/var/log/pods', '/var/log/pods/default_web_u1', { directChild: true }), '/var/log/pods/default_web_u1');
  for (const bad of ['', '.', '..', '../x', '/etc', '/var/log/pods', '/var/log/podsx/a', 'a\u0000b', 'default_x_../../../etc']) {
    assert.throws(() => resolveWithinRoot('/var/log/pods', bad), PathOutsideRootError, JSON.stringify(bad));
  }
  assert.throws(() => resolveWithinRoot('/var/log/pods', 'a/b', { directChild: true }), PathOutsideRootError);
  assert.throws(() => resolveWithinRoot('/var/log/pods', '/var/log/pods/default_x_../../default_other_u2/c', { directChild: true }), PathOutsideRootError);
});

test('15: a climbing uid at the worker: no directory created outside, RunPodSandbox never called, cleanup deletes nothing outside', async () => {
  const base = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'shardlet-paths-'));
  const podLogsDir = path.join(base, 'pods');
  const victim = path.join(base, 'victim');
  const neighbour = path.join(podLogsDir, 'default_other_u2');
  fs.mkdirSync(victim, { recursive: true });
  fs.writeFileSync(path.join(victim, 'precious'), 'x');
  fs.mkdirSync(neighbour, { recursive: true });
  fs.writeFileSync(path.join(neighbour, 'log'), 'x');
  const h = makeHarness({ podLogsDir });
  try {
    for (const uid of ['../../../victim', '../../default_other_u2']) {
      const pod = makePod({ containers: [container('app')] }, { name: 'x', uid });
      const out = await h.sync(pod);
      assert.ok(!h.take().includes('RunPodSandbox'), 'no sandbox for a pod whose log directory is outside');
      assert.match(JSON.stringify(out), /refusing to touch/);
      const res = await h.syncer.cleanupPod({ pod, runtimeStatus: h.rt.podStatus(uid), signal: new AbortController().signal });
      assert.match(res.error?.message ?? '', /refusing to touch/);
    }
    assert.ok(fs.existsSync(path.join(victim, 'precious')), 'outside the logs dir: untouched');
    assert.ok(fs.existsSync(path.join(neighbour, 'log')), "another pod's directory: untouched");
    assert.deepEqual(fs.readdirSync(base).sort(), ['pods', 'victim']);
  } finally {
    h.cleanup();
    fs.rmSync(base, { recursive: true, force: true });
  }
});
