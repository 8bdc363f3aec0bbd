/**
 * Numbered slots owned by live processes, shared by every harness process on this machine: the
 * way two test runs at once pick distinct resources (ports, bridges) and the way a run killed
 * before its cleanup gets cleaned up by the next one.
 *
 * Ownership protocol (all under one registry directory per kind of resource):
 * - `slot-<N>/` is claimed with an atomic `mkdir`; `slot-<N>/tmpdir` holds the owner's temp dir and
 *   `slot-<N>/owner` its PID, written LAST: a slot without an owner file may be mid-claim and is
 *   never touched by anyone else.
 * - A slot whose owner PID is dead is stale (a killed test run). It is reclaimed by renaming it away
 *   (atomic: one winner), handing its recorded temp dir to the caller's `reclaim` hook (which ends
 *   that instance's processes and removes the dir), then deleting it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isAlive } from './host-processes.js';

/** Cleans up what a dead owner left behind. `staleTmpDir` is undefined when none was recorded. */
export type StaleSlotReclaimer = (slot: number, staleTmpDir: string | undefined) => void;

export interface OwnedSlot {
  readonly slot: number;
  /** Gives the slot back. Idempotent. */
  release(): void;
}

export interface ClaimSlotOptions {
  /** Registry directory (created when missing). */
  readonly dir: string;
  /** Slots are 1..max. */
  readonly max: number;
  /** The claiming instance's temp dir, recorded so a later run can clean up after a crash. */
  readonly tmpDir: string;
  readonly reclaim: StaleSlotReclaimer;
  /** Slots not to take (e.g. already found unusable by this caller). */
  readonly skip?: ReadonlySet<number>;
}

function ownerOf(slotPath: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(slotPath, 'owner'), 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Slot numbers whose owner is alive. */
export function liveSlots(dir: string): number[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((n) => /^slot-\d+$/.test(n))
    .filter((n) => {
      const owner = ownerOf(path.join(dir, n));
      return owner !== undefined && isAlive(owner);
    })
    .map((n) => Number(n.slice('slot-'.length)));
}

function reclaimIfStale(dir: string, n: number, reclaim: StaleSlotReclaimer): void {
  const p = path.join(dir, `slot-${n}`);
  const owner = ownerOf(p);
  if (owner === undefined || isAlive(owner)) return;
  const grave = path.join(dir, `.stale-${n}-${process.pid}-${Date.now()}`);
  try {
    fs.renameSync(p, grave);
  } catch {
    return; // someone else reclaimed it first
  }
  let staleTmp: string | undefined;
  try {
    const t = fs.readFileSync(path.join(grave, 'tmpdir'), 'utf8').trim();
    if (t !== '') staleTmp = t;
  } catch {
    // no tmpdir recorded (crashed before it was written)
  }
  reclaim(n, staleTmp);
  fs.rmSync(grave, { recursive: true, force: true });
}

/**
 * Claims the lowest free slot. Every stale slot in the registry is reclaimed first, not only
 * those below the one taken: a killed run's processes never outlive the next claim.
 * Throws when all are taken.
 */
export function claimSlot(opts: ClaimSlotOptions): OwnedSlot {
  fs.mkdirSync(opts.dir, { recursive: true });
  for (const name of fs.readdirSync(opts.dir)) {
    if (/^slot-\d+$/.test(name)) reclaimIfStale(opts.dir, Number(name.slice('slot-'.length)), opts.reclaim);
  }
  for (let n = 1; n <= opts.max; n++) {
    if (opts.skip?.has(n)) continue;
    const p = path.join(opts.dir, `slot-${n}`);
    try {
      fs.mkdirSync(p);
    } catch {
      continue;
    }
    fs.writeFileSync(path.join(p, 'tmpdir'), opts.tmpDir);
    fs.writeFileSync(path.join(p, 'owner'), String(process.pid)); // written last: the claim is complete
    let released = false;
    return {
      slot: n,
      release(): void {
        if (released) return;
        released = true;
        fs.rmSync(p, { recursive: true, force: true });
      },
    };
  }
  throw new Error(`no free harness slot in ${opts.dir} (all ${opts.max} taken by live processes)`);
}
