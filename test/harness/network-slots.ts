/**
 * Per-instance network identity for harness containerd instances, unique across processes on
 * this machine: slot N (1..250) owns bridge `shardlet-br<N>` and subnet `10.244.<N>.0/24`.
 *
 * Ownership protocol (all under `os.tmpdir()/shardlet-harness-slots/`):
 * - `slot-<N>/` is claimed with an atomic `mkdir`; `slot-<N>/owner` holds the owning PID and
 *   `slot-<N>/tmpdir` the instance's temp dir. A slot whose owner is dead is stale (a killed test
 *   run): it is reclaimed by renaming it away (atomic, one winner), handing its temp dir to the
 *   caller's `reclaim` hook (which ends that instance's processes and removes the dir), and
 *   deleting its leftover bridge.
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
import { isAlive } from './host-processes.js';

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

function ownerOf(slotPath: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(slotPath, 'owner'), 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function liveSlots(dir: string): number[] {
  return fs
    .readdirSync(dir)
    .filter((n) => /^slot-\d+$/.test(n))
    .filter((n) => {
      const owner = ownerOf(path.join(dir, n));
      return owner !== undefined && isAlive(owner);
    })
    .map((n) => Number(n.slice('slot-'.length)));
}

/** Cleans up what a dead owner left in its temp dir (processes, mounts, files). */
export type StaleInstanceReclaimer = (staleTmpDir: string) => void;

/** A slot with no owner file may be mid-claim; only a dead owner makes it stale. */
function reclaimIfStale(dir: string, n: number, reclaim: StaleInstanceReclaimer): void {
  const p = path.join(dir, `slot-${n}`);
  const owner = ownerOf(p);
  if (owner === undefined || isAlive(owner)) return;
  const grave = path.join(dir, `.stale-${n}-${process.pid}-${Date.now()}`);
  try {
    fs.renameSync(p, grave);
  } catch {
    return; // someone else reclaimed it first
  }
  try {
    const staleTmp = fs.readFileSync(path.join(grave, 'tmpdir'), 'utf8').trim();
    if (staleTmp !== '') reclaim(staleTmp);
  } catch {
    // no tmpdir recorded (crashed before it was written): only the bridge to delete
  }
  deleteBridge(`shardlet-br${n}`);
  fs.rmSync(grave, { recursive: true, force: true });
}

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
  for (let n = 1; n <= MAX_SLOT; n++) {
    reclaimIfStale(dir, n, opts.reclaim);
    const p = path.join(dir, `slot-${n}`);
    try {
      fs.mkdirSync(p);
    } catch {
      continue;
    }
    fs.writeFileSync(path.join(p, 'tmpdir'), opts.tmpDir);
    fs.writeFileSync(path.join(p, 'owner'), String(process.pid)); // written last: the claim is complete
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
        fs.rmSync(p, { recursive: true, force: true });
        restoreIpForwardIfLast(dir);
      },
    };
  }
  throw new Error(`no free harness network slot in ${dir} (all ${MAX_SLOT} taken by live processes)`);
}
