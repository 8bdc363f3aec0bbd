/**
 * Log rotation failures for thousands of containers do not write one error line per container
 * per pass: through the product's ContainerLogRotation pass (fake runtime whose ContainerStatus
 * and ReopenContainerLog fail for every container), lines are capped per pass, repeats are held
 * back for repeatMs on the injected clock, and each pass that held lines back ends with one
 * summary line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ContainerLogRotation } from '../../../src/main/logs/container-log-rotation.js';
import { ROTATION_FAILURE_LOG_DEFAULTS } from '../../../src/main/logs/rotation-failure-log.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import type { Container } from '../../../src/shared/cri/cri-types.js';
import { createLogger } from '../../../src/shared/logging/logger.js';

function running(n: number): Container[] {
  return Array.from({ length: n }, (_, k) => ({ id: `c${k}`.padEnd(64, '0'), state: 'CONTAINER_RUNNING', labels: {}, annotations: {} }) as unknown as Container);
}

test('10,000 containers failing every pass: at most perPassLines + 1 lines a pass, repeats only after repeatMs, a recovered container is logged at once again', async () => {
  const clock = new FakeClock();
  const lines: { msg: string; failed?: number; notLoggedIndividually?: number; containerId?: string }[] = [];
  const logger = createLogger({ sink: (l: string) => void lines.push(JSON.parse(l) as (typeof lines)[number]), now: () => clock.now() });
  let containers = running(10_000);
  let statusFails = true;
  const runtime = {
    listContainers: async () => containers,
    containerStatus: async (id: string) => {
      if (statusFails) throw new Error(`rpc error: code = NotFound desc = container ${id} log unknown`);
      return { status: { logPath: '/nonexistent/dir/0.log' } } as never;
    },
    reopenContainerLog: async () => {
      throw new Error('reopen refused');
    },
  };
  const rotation = new ContainerLogRotation({ runtime, clock, logger, maxSizeBytes: 1024, maxFiles: 2, intervalMs: 1000 });
  const cap = ROTATION_FAILURE_LOG_DEFAULTS.perPassLines;

  await rotation.rotateOnce();
  assert.equal(lines.length, cap + 1, 'the first pass: cap individual lines and one summary');
  const summary = lines.at(-1)!;
  assert.equal(summary.failed, 10_000);
  assert.equal(summary.notLoggedIndividually, 10_000 - cap);
  const bytes1 = lines.reduce((n, l) => n + JSON.stringify(l).length, 0);
  assert.ok(bytes1 < 8 * 1024, `${bytes1} bytes for 10,000 failures`);

  lines.length = 0;
  clock.step(20_000);
  await rotation.rotateOnce();
  assert.deepEqual(lines.map((l) => l.msg), ['container log rotation failed for many containers; repeated failures are summarized'], 'a repeat pass: the summary only');

  lines.length = 0;
  clock.step(ROTATION_FAILURE_LOG_DEFAULTS.repeatMs);
  await rotation.rotateOnce();
  assert.equal(lines.length, cap + 1, 'after repeatMs the still-failing ones get their own lines again (capped)');

  // The path is learnt now (ContainerStatus works); the file is missing and reopen fails: still failing.
  statusFails = false;
  containers = running(3);
  lines.length = 0;
  clock.step(1000);
  await rotation.rotateOnce();
  assert.deepEqual(lines.map((l) => [l.msg, l.failed]), [[summary.msg, 3]], 'three containers still failing, logged recently: the summary alone');
  // A container that disappears and comes back is new again: logged at once.
  containers = running(2);
  await rotation.rotateOnce();
  containers = running(3);
  lines.length = 0;
  await rotation.rotateOnce();
  assert.deepEqual(lines.map((l) => l.containerId ?? l.msg), [running(3)[2]!.id, summary.msg], 'its own line, then the summary of the other two');
  await rotation.close();
});
