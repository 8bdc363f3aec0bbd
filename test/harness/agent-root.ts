/**
 * Removing an agent's --root-dir after it is gone: pod volumes on tmpfs (secret and projected
 * volumes, emptyDir medium Memory) may still be mounted below it when the agent was killed or
 * left its pods running, and rm -rf cannot remove a mount point. Used by the e2e harness and
 * the bench.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Lazily unmounts whatever is mounted below `root` (tmpfs pod volumes), then removes it. */
export function removeAgentRoot(root: string): void {
  const prefix = `${path.resolve(root)}/`;
  let mounts: string[] = [];
  try {
    mounts = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4] ?? '').filter((m) => m.startsWith(prefix));
  } catch {
    // no mount table: nothing to unmount
  }
  for (const m of mounts.sort((a, b) => b.length - a.length)) spawnSync('umount', ['-l', m], { timeout: 10_000 });
  fs.rmSync(root, { recursive: true, force: true, maxRetries: 3 });
}

/** Roots whose removal failed while something still wrote into them (see removeAgentRootWhenIdle). */
const deferredRoots = new Set<string>();
let exitHookInstalled = false;

/**
 * For a root removed the moment its agent exits: a runtime that outlives the agent may still be
 * writing into it (a SIGKILLed agent's in-flight CreateContainer/StartContainer calls land after
 * its death and make container log files under `<root>/pods`), so rm -rf can race them and fail
 * with ENOTEMPTY. Such a failure is not the test's: the removal is deferred to the test process's
 * exit (each test file is its own process, and its after() hooks have stopped the runtime by
 * then), never thrown from an exit handler.
 */
export function removeAgentRootWhenIdle(root: string): void {
  try {
    removeAgentRoot(root);
  } catch {
    deferredRoots.add(root);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.once('exit', () => {
        for (const r of deferredRoots) {
          try {
            removeAgentRoot(r);
          } catch (err) {
            process.stderr.write(`agent-root: could not remove ${r}: ${String(err)}\n`);
          }
        }
      });
    }
  }
}
