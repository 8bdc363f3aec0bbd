/** The soak's flags (bench/soak-config.ts): the full size by default, bounds named by flag. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSoakArgs } from '../../../bench/soak-config.js';
import { soakImage, soakManifest } from '../../../bench/soak-pods.js';

test('defaults are the full size; flags scale it; bad values name the flag', () => {
  const d = parseSoakArgs(['--soak'], new Date(0));
  assert.deepEqual([d.pods, d.lifecycles, d.minutes, d.workers], [1000, 50_000, 30, 2]);
  const s = parseSoakArgs(['--soak', '--soak-pods', '200', '--soak-lifecycles', '5000', '--soak-minutes', '10', '--out', '/tmp/x'], new Date(0));
  assert.deepEqual([s.pods, s.lifecycles, s.minutes, s.outDir], [200, 5000, 10, '/tmp/x']);
  assert.throws(() => parseSoakArgs(['--soak', '--soak-minutes', '0'], new Date(0)), /--soak-minutes must be an integer in 1–1440/);
  assert.throws(() => parseSoakArgs(['--soak', '--soak-pods', 'many'], new Date(0)), /--soak-pods/);
  assert.throws(() => parseSoakArgs(['--soak', '--bogus'], new Date(0)));
});

test('churn pods: crash loops restart, completions do not; the image tag rotates', () => {
  const crash = soakManifest('c', 'crashloop', 'img') as { spec: { restartPolicy: string; containers: Array<{ command: string[] }> } };
  assert.equal(crash.spec.restartPolicy, 'Always');
  assert.deepEqual(crash.spec.containers[0]!.command, ['sh', '-c', 'exit 1']);
  const done = soakManifest('d', 'completion', 'img') as { spec: { restartPolicy: string } };
  assert.equal(done.spec.restartPolicy, 'Never');
  assert.equal(soakImage(0, 250), soakImage(249, 250));
  assert.notEqual(soakImage(249, 250), soakImage(250, 250));
});
