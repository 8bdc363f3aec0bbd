/**
 * The volume plugins a worker thread uses, by V1Volume source field. Types not listed here fail
 * set-up with a message naming them (volume-manager.ts).
 */
import { EmptyDirPlugin } from './plugin-empty-dir.js';
import { HostPathPlugin } from './plugin-host-path.js';
import type { TmpfsMounter } from './tmpfs-mounter.js';
import type { VolumePlugin } from './volume-plugin.js';

export function defaultVolumePlugins(mounter: TmpfsMounter): ReadonlyMap<string, VolumePlugin> {
  return new Map<string, VolumePlugin>([
    ['emptyDir', new EmptyDirPlugin(mounter)],
    ['hostPath', new HostPathPlugin()],
  ]);
}
