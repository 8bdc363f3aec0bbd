/**
 * The workers' prune before a restart and the container GC agree: with the default policy an
 * app container's older dead instances go at its restart together with their log files (the
 * kubelet's removeContainer → removeContainerLog), the newest dead one and its log stay; with
 * pruneAppContainersBeforeStart off (a GC policy that keeps more) app containers keep every
 * dead instance for the GC to decide.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { container, makeHarness, makePod, type Harness } from './kuberuntime-harness.js';

/** Runs the crash loop: `n` exits, each followed by the restart after its backoff; writes each instance's log as the runtime would. */
async function crashLoop(h: Harness, n: number): Promise<string> {
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app')] });
  const dir = path.join(h.logDir, 'default_web_uid-web', 'app');
  fs.mkdirSync(dir, { recursive: true });
  await h.sync(pod);
  fs.writeFileSync(path.join(dir, '0.log'), 'r0\n');
  for (let i = 1; i <= n; i++) {
    h.rt.exitContainer('app', 1);
    const out = await h.sync(pod);
    if (out.requeueAfterMs !== undefined) {
      h.clock.step(out.requeueAfterMs);
      await h.sync(pod);
    }
    fs.writeFileSync(path.join(dir, `${i}.log`), `r${i}\n`);
    fs.writeFileSync(path.join(dir, `${i - 1}.log.20260101-000000.gz`), 'rotated');
  }
  return dir;
}

test('default: older dead instances are pruned at the restart with their log files; the newest dead one keeps its log', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  const dir = await crashLoop(h, 3);
  const st = h.rt.podStatus('uid-web');
  assert.equal(st.containers.filter((c) => c.state === 'CONTAINER_EXITED').length, 1);
  // Instance 2 is the kept dead one, 3 runs: their files stay; 0 and 1 went with their instances.
  assert.deepEqual(fs.readdirSync(dir).sort(), ['2.log', '2.log.20260101-000000.gz', '3.log']);
});

test('pruneAppContainersBeforeStart off: app containers keep every dead instance and their logs (the GC decides)', async (t) => {
  const h = makeHarness({ pruneAppContainersBeforeStart: false });
  t.after(h.cleanup);
  const dir = await crashLoop(h, 3);
  assert.equal(h.rt.podStatus('uid-web').containers.filter((c) => c.state === 'CONTAINER_EXITED').length, 3);
  assert.deepEqual(fs.readdirSync(dir).filter((f) => f.endsWith('.log')).sort(), ['0.log', '1.log', '2.log', '3.log']);
});
