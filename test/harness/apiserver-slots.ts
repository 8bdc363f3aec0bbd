/**
 * Where a harness control plane lives on this machine, and cleaning up after one whose owner died.
 *
 * - Temp dir: `/dev/shm/shardlet-kapi-*` when /dev/shm exists (etcd's fsyncs then cost nothing),
 *   else the OS temp dir. It holds etcd's data, both logs, the PKI and kubeconfigs.
 * - Ports: from an owned slot (owned-slots.ts, registry `<os tmpdir>/shardlet-harness-apiserver-slots`).
 *   Slot N (1..200) owns 24000+10N (etcd client), +1 (etcd peer), +2 (apiserver): below the
 *   kernel's ephemeral range (32768+), so outgoing connections never hold them, and each is
 *   checked free before the slot is kept (a foreign listener makes us take the next slot).
 * - Reclaim: a dead owner's slot names its temp dir; the daemons whose command line contains that
 *   dir are SIGKILLed and the dir removed (only dirs named `shardlet-kapi-*`).
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { findProcesses, signal } from './host-processes.js';
import { claimSlot, type OwnedSlot } from './owned-slots.js';

const TMP_PREFIX = 'shardlet-kapi-';
const MAX_SLOT = 200;
const PORT_BASE = 24_000;

function slotRegistry(): string {
  return path.join(os.tmpdir(), 'shardlet-harness-apiserver-slots');
}

export function slotPorts(slot: number): { etcdClient: number; etcdPeer: number; apiserver: number } {
  const base = PORT_BASE + 10 * slot;
  return { etcdClient: base, etcdPeer: base + 1, apiserver: base + 2 };
}

/** A new, empty instance temp dir (see module comment). */
export function makeInstanceDir(): string {
  const parent = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
  return fs.mkdtempSync(path.join(parent, TMP_PREFIX));
}

/** SIGKILLs the daemons whose command line names `tmpDir` (only ever our own dirs). */
export function killInstanceProcesses(tmpDir: string): number[] {
  const pids = [...findProcesses('kube-apiserver', tmpDir), ...findProcesses('etcd', tmpDir)].map((p) => p.pid);
  for (const pid of pids) signal(pid, 'SIGKILL');
  return pids;
}

/** Reclaims what a killed earlier run left (owned-slots.ts calls this for a dead owner's slot). */
function reclaimStaleInstance(_slot: number, staleTmpDir: string | undefined): void {
  if (staleTmpDir === undefined || !path.basename(staleTmpDir).startsWith(TMP_PREFIX)) return;
  killInstanceProcesses(staleTmpDir);
  fs.rmSync(staleTmpDir, { recursive: true, force: true, maxRetries: 3 });
}

export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** A slot whose three ports are free right now. Slots found busy are held while searching, then given back. */
export async function claimPortSlot(tmpDir: string): Promise<OwnedSlot> {
  const busy: OwnedSlot[] = [];
  const skip = new Set<number>();
  try {
    for (;;) {
      const slot = claimSlot({ dir: slotRegistry(), max: MAX_SLOT, tmpDir, reclaim: reclaimStaleInstance, skip });
      const ports = Object.values(slotPorts(slot.slot));
      const free = await Promise.all(ports.map(portFree));
      if (free.every(Boolean)) return slot;
      busy.push(slot);
      skip.add(slot.slot);
    }
  } finally {
    for (const b of busy) b.release();
  }
}

