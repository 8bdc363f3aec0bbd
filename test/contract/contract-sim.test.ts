/**
 * The CRI contract against the simulated runtime (`shardlet sim-runtime`, started from
 * dist/src/cli/main.js by test/harness/sim-runtime-harness.ts). The sim treats any image as
 * pullable; the busybox image is pulled first so that it is present as in containerd, where the
 * harness imports it.
 */
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { startSimRuntime } from '../harness/sim-runtime-harness.js';
import { defineCriContract } from './cri-contract.js';
import { BUSYBOX_IMAGE } from './cri-contract-fixtures.js';

defineCriContract('sim-runtime', async () => {
  const sim = await startSimRuntime();
  const rt = new CriClient({ endpoint: sim.endpoint });
  try {
    await rt.pullImage({ image: { image: BUSYBOX_IMAGE } });
  } catch (err) {
    await sim.stop();
    throw err;
  } finally {
    rt.close();
  }
  return sim;
});
