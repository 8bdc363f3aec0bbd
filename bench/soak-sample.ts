/**
 * One sample of what the soak watches: the agent's RSS and open file descriptors (/proc), the
 * runtime's dead containers, not-ready sandboxes and images (CRI listings), and the bytes and
 * entries under the pod logs directory and the agent's pods directory.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { CriClient } from '../src/shared/cri/cri-client.js';
import { readMemory } from './measure.js';

export interface SoakSample {
  /** Seconds since the soak began. */
  atS: number;
  rssMiB: number | null;
  fds: number | null;
  containers: number;
  deadContainers: number;
  sandboxes: number;
  notReadySandboxes: number;
  images: number;
  logBytes: number;
  logEntries: number;
  podDirBytes: number;
  podDirEntries: number;
}

/** Bytes (regular files) and entries under `dir`, recursively; 0/0 when it does not exist. */
export async function diskUsage(dir: string): Promise<{ bytes: number; entries: number }> {
  let bytes = 0;
  let entries = 0;
  const walk = async (d: string): Promise<void> => {
    let list;
    try {
      list = await fs.readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of list) {
      entries++;
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) bytes += (await fs.lstat(p).catch(() => ({ size: 0 }))).size;
    }
  };
  await walk(dir);
  return { bytes, entries };
}

async function openFds(pid: number): Promise<number | null> {
  try {
    return (await fs.readdir(`/proc/${pid}/fd`)).length;
  } catch {
    return null;
  }
}

export async function takeSample(o: { atS: number; agentPid: number; cri: CriClient; podLogsDir: string; podsDir: string }): Promise<SoakSample> {
  const [containers, sandboxes, images, logs, pods, fds] = await Promise.all([
    o.cri.listContainers({}), o.cri.listPodSandbox({}), o.cri.listImages(), diskUsage(o.podLogsDir), diskUsage(o.podsDir), openFds(o.agentPid),
  ]);
  return {
    atS: o.atS,
    rssMiB: readMemory(o.agentPid).rssMiB,
    fds,
    containers: containers.length,
    deadContainers: containers.filter((c) => c.state === 'CONTAINER_EXITED').length,
    sandboxes: sandboxes.length,
    notReadySandboxes: sandboxes.filter((s) => s.state !== 'SANDBOX_READY').length,
    images: images.length,
    logBytes: logs.bytes,
    logEntries: logs.entries,
    podDirBytes: pods.bytes,
    podDirEntries: pods.entries,
  };
}
