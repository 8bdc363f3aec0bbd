/**
 * containerd SIGKILLed in the middle of a burst (runtime-kill-scenario.ts), on a private
 * containerd from the harness (needs root; as non-root the hook fails loudly, nothing is
 * skipped). containerd keeps its state on disk and its shims keep the containers running, so
 * this is the "state kept" case: every pod converges from the PLEG's next relists after
 * containerd answers again, 0 duplicates, 0 leftover containers. A RunPodSandbox the crash
 * interrupted leaves a not-ready sandbox beside the pod's new one, as it does under the kubelet
 * until its sandbox GC: counted and printed, not failed. A StartContainer the crash interrupted
 * leaves that instance EXITED (exit code 128, never ran) beside the restarted one: the one dead
 * instance per container the kubelet's container GC keeps (MaxPerPodContainer = 1), so it is
 * counted and printed, not failed; a second dead instance, a CREATED or UNKNOWN one, or a
 * container in an unlisted sandbox is a leftover (runtime-kill-scenario.ts audit).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startContainerd, type ContainerdInstance } from '../harness/containerd-harness.js';
import { runtimeKillScenario } from './runtime-kill-scenario.js';

const PODS = 24;
const RELIST_MS = 1_000;

let ctrd: ContainerdInstance | undefined;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-ctrd-kill-'));
const cleanup: (() => Promise<void>)[] = [];

before(async () => {
  ctrd = await startContainerd();
}, { timeout: 120_000 });

after(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
  await ctrd?.stop();
  fs.rmSync(root, { recursive: true, force: true });
}, { timeout: 120_000 });

test('containerd SIGKILLed mid-burst: every pod converges after it returns, 0 duplicates, 0 leftovers', { timeout: 300_000 }, async (t) => {
  const c = ctrd!;
  const r = await runtimeKillScenario({
    endpoint: c.endpoint,
    workDir: root,
    pods: PODS,
    onCleanup: (fn) => cleanup.push(fn),
    killAndRestart: (whileDown) => c.killAndRestart(whileDown),
    convergeTimeoutMs: 120_000,
  });
  t.diagnostic(`containerd: killed with ${r.runningAtKill}/${PODS} running; down ${Math.round(r.downMs)} ms after the agent noticed; all ${PODS} pods converged ${Math.round(r.convergedMs)} ms after its return (${(r.convergedMs / RELIST_MS).toFixed(1)} relist periods); duplicates seen ${r.duplicatesSeen.length}; runtime pods ${r.runtimePods}; pods with a dead sandbox left for sandbox GC ${r.final.deadSandboxes.length}; dead instances kept as the kubelet's GC keeps them ${r.final.keptDead.length}${r.final.keptDead.length > 0 ? `:\n${r.keptDeadDetail}` : ''}`);
  assert.deepEqual(r.duplicatesSeen, []);
  assert.equal(r.runtimePods, PODS);
  assert.deepEqual(r.final.leftovers, []);
  assert.deepEqual(r.pleg, { status: 200, body: 'ok' });
  // containerd re-creates the interrupted pods at its own pace (~10 pods/s here): measured
  // 2.7–3.6 relist periods. Below the 10–15 s error backoff of the syncs the crash failed and
  // far below the periodic resync, either of which fails this.
  assert.ok(r.convergedMs <= 8_000, `converged ${Math.round(r.convergedMs)} ms after containerd returned; agent errors since:\n${r.logSinceReturn.join('\n')}`);
});
