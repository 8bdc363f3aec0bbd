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
