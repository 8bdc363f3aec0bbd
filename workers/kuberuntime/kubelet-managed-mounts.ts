/**
 * The mounts the kubelet adds to every container besides its volumes, with the files behind
 * them under `<rootDir>/pods/<uid>` (removed with that directory when the pod is cleaned up:
 * VolumeManager.tearDownPod):
 *
 * 1. /etc/hosts → `<podDir>/etc-hosts` (kubelet_pods.go makeMounts/makeHostsMount; see
 *    etc-hosts.ts for the content and when it is mounted). A failure (a bad hostname, the node's
 *    hosts file unreadable for a host-network pod, a write error) fails the container's start
 *    with CreateContainerConfigError, as GenerateRunContainerOptions' error does.
 * 2. terminationMessagePath → a new empty file `<podDir>/containers/<name>/<8 hex>` per
 *    container instance, mode 0666 so any user in the container can write it (the kubelet's
 *    kuberuntime makeMounts; the random name tells instances apart). A failure to create it is
 *    logged and the container runs without it, as in the kubelet. The message is read back at
 *    inspection (runtime-status/termination-message.ts).
 *
 * Nothing from the spec becomes a path unchecked: the uid and container name each pass
 * checkPathSegment (podDir and here); the file name is ours.
 */
import fs from 'node:fs/promises';
import { constants as C } from 'node:fs';
import path from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { Random } from '../../src/shared/clock/clock.js';
import type { Mount } from '../../src/shared/cri/cri-types.js';
import type { Logger } from '../../src/shared/logging/logger.js';
import { checkPathSegment } from '../../src/shared/paths/path-segment.js';
import type { NodeDnsSettings } from '../../src/shared/protocol/node-dns-settings.js';
import type { MountsResult } from '../volumes/container-mounts.js';
import { podDir } from '../volumes/volume-paths.js';
import { etcHostsPathOf, hostsFileContentFor, hostsMount, shouldMountHostsFile, writeHostsFile } from './etc-hosts.js';
import { DEFAULT_TERMINATION_MESSAGE_PATH } from './labels.js';
import { podHostnameAndDomain } from './pod-hostname.js';
import { isHostNetwork, podUID } from './pod-spec.js';

const POD_CONTAINER_DIR_MODE = 0o750;
const TERMINATION_LOG_MODE = 0o666;
/** Attempts at a fresh random name before giving up (a collision needs 2^32 luck). */
const NAME_ATTEMPTS = 4;

export interface KubeletManagedMountsDeps {
  rootDir: string;
  dns: NodeDnsSettings;
  /** The node's IP: a host-network pod's IP when the sync has none (the kubelet's pod IPs of such pods). */
  hostIP: string;
  random: Random;
  logger: Logger;
}

/** What startContainer needs: the extra mounts for one container instance. */
export type ManagedMountsFn = (pod: V1Pod, container: V1Container, podIPs: readonly string[]) => Promise<MountsResult>;

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function kubeletManagedMounts(d: KubeletManagedMountsDeps): ManagedMountsFn {
  const hexName = (): string => Math.floor(d.random() * 0x1_0000_0000).toString(16).padStart(8, '0');

  /** A new empty termination-log file for one instance; undefined (logged) when it cannot be made. */
  const createTerminationLog = async (dir: string, container: V1Container): Promise<string | undefined> => {
    const bad = checkPathSegment(container.name);
    if (bad !== undefined) {
      d.logger.error('error on creating termination-log file', { containerName: container.name.slice(0, 64), error: `container name: ${bad}` });
      return undefined;
    }
    const containerDir = path.join(dir, 'containers', container.name);
    try {
      await fs.mkdir(containerDir, { recursive: true, mode: POD_CONTAINER_DIR_MODE });
      for (let i = 0; i < NAME_ATTEMPTS; i++) {
        const file = path.join(containerDir, hexName());
        let fh: fs.FileHandle;
        try {
          fh = await fs.open(file, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, TERMINATION_LOG_MODE);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
          throw err;
        }
        try {
          // The umask cut the mode at creation; the kubelet chmods for the same reason.
          await fh.chmod(TERMINATION_LOG_MODE);
        } finally {
          await fh.close();
        }
        return file;
      }
      throw new Error(`no free name in ${containerDir}`);
    } catch (err) {
      d.logger.error('error on creating termination-log file', { containerName: container.name, error: errText(err) });
      return undefined;
    }
  };

  return async (pod, container, podIPs) => {
    let dir: string;
    try {
      dir = podDir(d.rootDir, podUID(pod));
    } catch (err) {
      return { ok: false, message: errText(err) };
    }
    const mounts: Mount[] = [];
    const ips = podIPs.length > 0 ? podIPs : isHostNetwork(pod) && d.hostIP !== '' ? [d.hostIP] : [];
    if (shouldMountHostsFile(ips, container)) {
      const names = podHostnameAndDomain(pod, d.dns.clusterDomain);
      if (!names.ok) return { ok: false, message: names.message };
      if (isHostNetwork(pod) && !d.dns.nodeHosts.ok) return { ok: false, message: d.dns.nodeHosts.message };
      const nodeHosts = d.dns.nodeHosts.ok ? d.dns.nodeHosts.content : '';
      const file = etcHostsPathOf(dir);
      try {
        await fs.mkdir(dir, { recursive: true, mode: POD_CONTAINER_DIR_MODE });
        await writeHostsFile(file, hostsFileContentFor(pod, ips, names.hostname, names.domain, nodeHosts));
      } catch (err) {
        return { ok: false, message: `failed to write the pod's hosts file: ${errText(err)}` };
      }
      mounts.push(hostsMount(file));
    }
    const messagePath = container.terminationMessagePath ?? DEFAULT_TERMINATION_MESSAGE_PATH;
    if (messagePath !== '') {
      const file = await createTerminationLog(dir, container);
      if (file !== undefined) mounts.push({ containerPath: messagePath, hostPath: file, readonly: false, selinuxRelabel: false, propagation: 'PROPAGATION_PRIVATE' });
    }
    return { ok: true, mounts };
  };
}
