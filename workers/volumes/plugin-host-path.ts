/**
 * hostPath (the kubelet's kubernetes.io/host-path): the host's own path is mounted, after the
 * kubelet's type check (hostPathTypeChecker, host_path.go checkTypeInternal), with its messages:
 *
 *   ""                 no check
 *   DirectoryOrCreate  created (0755, parents too) when absent; else must be a directory
 *   Directory          must be a directory          → "hostPath type check failed: P is not a directory"
 *   FileOrCreate       created empty (0644) when absent (parent must exist); else must be a file
 *   File               must be a regular file       → "... is not a file"
 *   Socket             "... is not a socket file"; CharDevice "... is not a character device";
 *   BlockDevice        "... is not a block device"
 *   anything else      "T is an invalid volume type"
 *
 * The path must be absolute with no `..` component (API validation; checked again here). The
 * check runs at the pod's first set-up only, as the kubelet's reconciler mounts once.
 */
import fs from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import type { VolumePlugin, VolumeSetUpInput, VolumeSetUpResult } from './volume-plugin.js';
import { errorText } from './volume-errors.js';

export type HostPathType = '' | 'DirectoryOrCreate' | 'Directory' | 'FileOrCreate' | 'File' | 'Socket' | 'CharDevice' | 'BlockDevice';

async function statOf(p: string): Promise<Stats | undefined> {
  try {
    return await fs.stat(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The kubelet's checkTypeInternal: undefined when fine, else the failure message. */
export async function checkHostPathType(p: string, type: string): Promise<string | undefined> {
  const st = await statOf(p);
  const failed = (what: string): string => `hostPath type check failed: ${p} is not ${what}`;
  switch (type) {
    case '':
      return undefined;
    case 'DirectoryOrCreate':
      if (!st) {
        await fs.mkdir(p, { recursive: true, mode: 0o755 });
        return undefined;
      }
      return st.isDirectory() ? undefined : failed('a directory');
    case 'Directory':
      return st?.isDirectory() ? undefined : failed('a directory');
    case 'FileOrCreate':
      if (!st) {
        const fh = await fs.open(p, 'a', 0o644);
        await fh.close();
        return undefined;
      }
      return st.isFile() ? undefined : failed('a file');
    case 'File':
      return st?.isFile() ? undefined : failed('a file');
    case 'Socket':
      return st?.isSocket() ? undefined : failed('a socket file');
    case 'CharDevice':
      return st?.isCharacterDevice() ? undefined : failed('a character device');
    case 'BlockDevice':
      return st?.isBlockDevice() ? undefined : failed('a block device');
    default:
      return `${type.slice(0, 64)} is an invalid volume type`;
  }
}

export class HostPathPlugin implements VolumePlugin {
  readonly name = 'kubernetes.io/host-path';
  readonly dir = null;

  async setUp(input: VolumeSetUpInput): Promise<VolumeSetUpResult> {
    if (input.previous) return { ok: true, state: input.previous };
    const src = input.volume.hostPath;
    const p = src?.path ?? '';
    if (!path.isAbsolute(p) || p.includes('\0') || p.split('/').includes('..')) {
      return { ok: false, message: `hostPath ${JSON.stringify(p.slice(0, 256))}: must be an absolute path without '..'` };
    }
    try {
      const bad = await checkHostPathType(p, src?.type ?? '');
      if (bad !== undefined) return { ok: false, message: bad };
    } catch (err) {
      return { ok: false, message: errorText(err) };
    }
    return { ok: true, state: { hostPath: p } };
  }
}
