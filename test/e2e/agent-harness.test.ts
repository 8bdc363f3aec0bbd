/**
 * The agent process harness leaves nothing in the temp dir (issue 10 item 21: runs used to
 * leave one `shardlet-agent-*` directory per agent started): the agent's private root goes
 * when the process ends, whether stopped (SIGTERM) or killed (SIGKILL).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { startAgent } from './agent-harness.js';

let sim: SimRuntimeInstance | undefined;
const manifests = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-harness-manifests-'));

before(async () => {
  sim = await startSimRuntime({ profile: 'zero' });
});

after(async () => {
  await sim?.stop();
  fs.rmSync(manifests, { recursive: true, force: true });
});

for (const how of ['stop', 'kill'] as const) {
  test(`the agent's shardlet-agent-* root is removed after ${how}()`, async () => {
    assert.ok(sim);
    const agent = await startAgent({ endpoint: sim.endpoint, manifestDir: manifests, workers: 1 });
    assert.match(path.basename(agent.rootDir), /^shardlet-agent-/);
    assert.equal(fs.existsSync(agent.rootDir), true, 'exists while the agent runs');
    if (how === 'stop') await agent.stop();
    else await agent.kill();
    assert.equal(fs.existsSync(agent.rootDir), false, `${agent.rootDir} left behind`);
  });
}
