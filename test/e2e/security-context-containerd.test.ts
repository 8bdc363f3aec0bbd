/**
 * The security-context scenario (security-context-scenario.ts) on real containerd (private
 * instance from the harness; needs root — as non-root the before hook fails loudly): the
 * container's uid/gid/groups, capabilities, no_new_privs, seccomp mode and read-only root as
 * the kernel reports them inside the container, through ExecSync.
 */
import { after, before, test } from 'node:test';
import { startContainerd, type ContainerdInstance } from '../harness/containerd-harness.js';
import { runSecurityContextScenario } from './security-context-scenario.js';

let ctrd: ContainerdInstance | undefined;

before(async () => {
  ctrd = await startContainerd();
}, { timeout: 120_000 });

after(async () => {
  await ctrd?.stop();
}, { timeout: 120_000 });

test('security context on containerd: id, /proc/self/status, read-only root, sysctls, refusals', { timeout: 240_000 }, async () => {
  await runSecurityContextScenario({ endpoint: ctrd!.endpoint });
});
