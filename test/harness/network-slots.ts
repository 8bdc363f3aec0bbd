/**
 * Per-instance network identity for harness containerd instances, unique across processes on
 * this machine: slot N (1..250) owns bridge `shardlet-br<N>` and subnet `10.244.<N>.0/24`.
 *
 * Ownership protocol: owned-slots.ts, registry `os.tmpdir()/shardlet-harness-slots/` (atomic
 * `mkdir` claims; a dead owner's slot is reclaimed by the next claim, which hands its temp dir to
 * the caller's `reclaim` hook — ending that instance's processes and removing the dir — and
 * deletes its leftover bridge).
 * - `ip_forward.orig` holds `net.ipv4.ip_forward` as it was before any instance existed (the CNI
 *   bridge plugin turns it on). The first claimer writes it (exclusive create); the last releaser
 *   restores it and deletes the file. A crashed run leaves it behind, which is what we want: its
 *   value is still the machine's original.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BridgeNetwork } from './containerd-config.js';
import { claimSlot, liveSlots } from './owned-slots.js';

const IP_FORWARD = '/proc/sys/net/ipv4/ip_forward';
const MAX_SLOT = 250;

export interface NetworkSlot extends BridgeNetwork {
  readonly slot: number;
  /** Deletes the bridge, gives the slot back, restores ip_forward if it was the last. Idempotent. */
  release(): void;
}

function slotsDir(): string {
  const dir = path.join(os.tmpdir(), 'shardlet-harness-slots');
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

export function deleteBridge(bridge: string): void {
  if (!fs.existsSync(`/sys/class/net/${bridge}`)) return;
  spawnSync('ip', ['link', 'del', bridge], { stdio: 'ignore' });
}

/** Cleans up what a dead owner left in its temp dir (processes, mounts, files). */
export type StaleInstanceReclaimer = (staleTmpDir: string) => void;

function recordIpForward(dir: string): void {
  try {
    fs.writeFileSync(path.join(dir, 'ip_forward.orig'), fs.readFileSync(IP_FORWARD, 'utf8').trim(), { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

function restoreIpForwardIfLast(dir: string): void {
  if (liveSlots(dir).length > 0) return;
  const orig = path.join(dir, 'ip_forward.orig');
  try {
    fs.writeFileSync(IP_FORWARD, fs.readFileSync(orig, 'utf8').trim() + '\n');
    fs.rmSync(orig, { force: true });
  } catch {
    // no record (already restored) or not writable: nothing to restore
  }
}

export interface ClaimNetworkSlotOptions {
  /** The claiming instance's temp dir, recorded so a later run can clean up after a crash. */
  readonly tmpDir: string;
  readonly reclaim: StaleInstanceReclaimer;
}

export function claimNetworkSlot(opts: ClaimNetworkSlotOptions): NetworkSlot {
  const dir = slotsDir();
  if (liveSlots(dir).length === 0) {
    // Nobody is running: any record left is from a crashed run and still holds the original.
    recordIpForward(dir);
  }
  const owned = claimSlot({
    dir,
    max: MAX_SLOT,
    tmpDir: opts.tmpDir,
    reclaim: (n, staleTmp) => {
      if (staleTmp !== undefined) opts.reclaim(staleTmp);
      deleteBridge(`shardlet-br${n}`);
    },
  });
  const n = owned.slot;
  recordIpForward(dir);
  const bridge = `shardlet-br${n}`;
  deleteBridge(bridge); // leftover of a crashed run that never got reclaimed
  let released = false;
  return {
    slot: n,
    bridge,
    subnet: `10.244.${n}.0/24`,
    gateway: `10.244.${n}.1`,
    release(): void {
      if (released) return;
      released = true;
      deleteBridge(bridge);
      owned.release();
      restoreIpForwardIfLast(dir);
    },
  };
}
