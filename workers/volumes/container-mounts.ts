/**
 * CRI mounts of one container from its volumeMounts (the kubelet's makeMounts,
 * kubelet_pods.go), given the host path of each of the pod's volumes (volume-manager.ts):
 *
 * - hostPath = the volume's path, joined with `subPath` (or `subPathExpr` expanded from the
 *   container's env, `$(VAR)` as in command expansion); the subPath must be relative without
 *   `..`; a missing subPath directory is created (0750), and the resolved path (symlinks
 *   followed) must stay inside the volume, so a symlink planted by a container cannot make the
 *   next container mount a host directory (the kubelet's safe subpath, simplified: the resolved
 *   path is what the runtime gets).
 * - readonly = the mount's readOnly, or always for configMap/secret/downwardAPI/projected
 *   volumes (the kubelet mounts those read-only since CVE-2017-1002102).
 * - propagation from mountPropagation (None/absent → private); SELinux relabel off.
 *
 * A failure is a CreateContainerConfigError message for the container, as in the kubelet.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { V1Container, V1Pod, V1Volume } from '@kubernetes/client-node';
import type { KeyValue, Mount, MountPropagation } from '../../src/shared/cri/cri-types.js';
import { expand } from '../kuberuntime/container-env.js';
import { volumeSourceType } from './volume-manager.js';
import { isWithin } from '../path-containment.js';
import { checkRelativePath } from './volume-paths.js';
import { errorText } from './volume-errors.js';

const READ_ONLY_TYPES = new Set(['configMap', 'secret', 'downwardAPI', 'projected']);

export type MountsResult = { ok: true; mounts: Mount[] } | { ok: false; message: string };

function propagationOf(p: string | undefined): MountPropagation | undefined {
  switch (p) {
    case undefined:
    case '':
    case 'None':
      return 'PROPAGATION_PRIVATE';
    case 'HostToContainer':
      return 'PROPAGATION_HOST_TO_CONTAINER';
    case 'Bidirectional':
      return 'PROPAGATION_BIDIRECTIONAL';
    default:
      return undefined;
  }
}

export async function makeMounts(pod: V1Pod, container: V1Container, hostPaths: ReadonlyMap<string, string>, envs: readonly KeyValue[]): Promise<MountsResult> {
  const byName = new Map<string, V1Volume>((pod.spec?.volumes ?? []).map((v) => [v.name, v]));
  const vars = new Map(envs.map((kv) => [kv.key, kv.value]));
  const mounts: Mount[] = [];
  for (const m of container.volumeMounts ?? []) {
    const vol = byName.get(m.name);
    const volPath = hostPaths.get(m.name);
    if (!vol || volPath === undefined) return { ok: false, message: `cannot find volume ${JSON.stringify(m.name)} to mount into container ${JSON.stringify(container.name)}` };
    if (m.subPath && m.subPathExpr) return { ok: false, message: `volumeMount ${JSON.stringify(m.name)}: subPath and subPathExpr are mutually exclusive` };
    const propagation = propagationOf(m.mountPropagation);
    if (propagation === undefined) return { ok: false, message: `invalid mountPropagation ${JSON.stringify(String(m.mountPropagation).slice(0, 64))}` };
    let hostPath = volPath;
    const subPath = m.subPathExpr ? expand(m.subPathExpr, (n) => vars.get(n)) : (m.subPath ?? '');
    if (subPath !== '') {
      const bad = checkRelativePath(subPath);
      if (bad !== undefined) return { ok: false, message: `error SubPath ${bad}` };
      try {
        hostPath = await prepareSubPath(volPath, subPath);
      } catch (err) {
        return { ok: false, message: `failed to prepare subPath for volumeMount ${JSON.stringify(m.name)} of container ${JSON.stringify(container.name)}: ${errorText(err)}` };
      }
    }
    mounts.push({
      containerPath: m.mountPath,
      hostPath,
      readonly: m.readOnly === true || READ_ONLY_TYPES.has(volumeSourceType(vol)),
      selinuxRelabel: false,
      propagation,
    });
  }
  return { ok: true, mounts };
}

/**
 * `volPath/subPath`, each missing component created (0750) one at a time below the resolved
 * parent, every component resolved (symlinks followed) and checked to stay inside the resolved
 * volume before anything is created through it.
 */
async function prepareSubPath(volPath: string, subPath: string): Promise<string> {
  const root = await fs.realpath(volPath);
  let cur = root;
  for (const seg of subPath.split('/')) {
    if (seg === '' || seg === '.') continue;
    const next = path.join(cur, seg);
    let real: string;
    try {
      real = await fs.realpath(next);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await fs.mkdir(next, { mode: 0o750 });
      real = next;
    }
    if (!isWithin(root, real)) throw new Error(`subpath ${JSON.stringify(subPath.slice(0, 256))} resolves outside the volume`);
    cur = real;
  }
  return cur;
}
