/**
 * The volume plugins a worker thread uses, by V1Volume source field. Types not listed here fail
 * set-up with a message naming them (volume-manager.ts).
 */
import os from 'node:os';
import { EmptyDirPlugin } from './plugin-empty-dir.js';
import { HostPathPlugin } from './plugin-host-path.js';
import { PayloadVolumePlugin, type PayloadPluginDeps } from './plugin-payload.js';
import type { TmpfsMounter } from './tmpfs-mounter.js';
import type { VolumePlugin } from './volume-plugin.js';

export interface DefaultVolumePluginDeps extends Omit<PayloadPluginDeps, 'mounter'> {
  /** Node allocatable memory (bytes): bounds memory-medium emptyDirs. Default: os.totalmem(). */
  nodeAllocatableMemoryBytes?: number | undefined;
}

export function defaultVolumePlugins(mounter: TmpfsMounter, deps: DefaultVolumePluginDeps): ReadonlyMap<string, VolumePlugin> {
  const { nodeAllocatableMemoryBytes, ...rest } = deps;
  const payload = { ...rest, mounter };
  return new Map<string, VolumePlugin>([
    ['emptyDir', new EmptyDirPlugin(mounter, nodeAllocatableMemoryBytes ?? os.totalmem())],
    ['hostPath', new HostPathPlugin()],
    ['configMap', new PayloadVolumePlugin('configMap', payload)],
    ['secret', new PayloadVolumePlugin('secret', payload)],
    ['downwardAPI', new PayloadVolumePlugin('downwardAPI', payload)],
    ['projected', new PayloadVolumePlugin('projected', payload)],
  ]);
}
