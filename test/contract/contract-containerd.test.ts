/**
 * The CRI contract against a real, private containerd (test/harness/containerd-harness.ts).
 * Needs root: as non-root the before hook fails with ERR_HARNESS_NOT_ROOT and every test fails
 * with that message (never skipped). Plus containerd-only facts the contract cannot state for
 * every runtime: pod IPs come from this instance's own bridge subnet.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { startContainerd, type ContainerdInstance } from '../harness/containerd-harness.js';
import { defineCriContract } from './cri-contract.js';
import { runPod, uniqueName } from './cri-contract-fixtures.js';

defineCriContract('containerd', () => startContainerd());

describe('containerd harness specifics', () => {
  let ctrd: ContainerdInstance | undefined;
  before(async () => {
    ctrd = await startContainerd();
  }, { timeout: 60_000 });
  after(async () => {
    await ctrd?.stop();
  }, { timeout: 60_000 });

  it('pod IPs come from the instance subnet; stop() removes the bridge and the temp dir', async () => {
    assert.ok(ctrd);
    const rt = new CriClient({ endpoint: ctrd.endpoint });
    try {
      const pod = await runPod(rt, uniqueName('subnet'), { hostNetwork: false });
      const ip = (await rt.podSandboxStatus(pod.sandboxId)).status?.network?.ip ?? '';
      const prefix = ctrd.network.subnet.replace(/\.0\/24$/, '.');
      assert.ok(ip.startsWith(prefix), `pod IP ${ip} not in ${ctrd.network.subnet}`);
    } finally {
      rt.close();
    }
    const { bridge } = ctrd.network;
    const { tmpDir } = ctrd;
    assert.ok(fs.existsSync(`/sys/class/net/${bridge}`), 'the bridge exists while a pod network is up');
    await ctrd.stop();
    await ctrd.stop(); // idempotent
    assert.equal(fs.existsSync(`/sys/class/net/${bridge}`), false, `${bridge} left behind`);
    assert.equal(fs.existsSync(tmpDir), false, `${tmpDir} left behind`);
  });
});
