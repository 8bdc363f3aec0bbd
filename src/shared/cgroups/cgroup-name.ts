/**
 * Cgroup names and their driver-specific spellings (the kubelet's CgroupName, ToCgroupfs,
 * ToSystemd and ParseSystemdToCgroupName, pkg/kubelet/cm/cgroup_manager_linux.go), and the
 * node's QoS hierarchy (qos_container_manager_linux.go, pod_container_manager_linux.go):
 *
 *   <cgroup-root>/kubepods                       Guaranteed pods' parent
 *   <cgroup-root>/kubepods/burstable             Burstable pods' parent
 *   <cgroup-root>/kubepods/besteffort            BestEffort pods' parent
 *   <qos parent>/pod<uid>                        one pod
 *
 * cgroupfs spells a name as a path ("/kubepods/burstable/pod<uid>"); systemd as nested slices
 * with "-" escaped to "_" in each component ("/kubepods.slice/kubepods-burstable.slice/
 * kubepods-burstable-pod<uid_with_underscores>.slice").
 *
 * Invariant: every component of a CgroupName is one safe path component (no "/", not "." or
 * "..", not empty). Names built here from a pod UID check the UID first ({@link checkPodUID}).
 * Pure; no I/O. Used by the main thread (QoS cgroups) and the pod workers (pod cgroups).
 */
import type { QOSClass } from '../resources/pod-qos.js';

/** One cgroup as its components from the hierarchy root; [] is the root itself. */
export type CgroupName = readonly string[];

export type CgroupDriver = 'cgroupfs' | 'systemd';
export const CGROUP_DRIVERS: readonly CgroupDriver[] = Object.freeze(['cgroupfs', 'systemd']);

/** The kubelet's defaultNodeAllocatableCgroupName. */
export const KUBEPODS = 'kubepods';
/** The kubelet's podCgroupNamePrefix. */
export const POD_CGROUP_PREFIX = 'pod';

export class CgroupNameError extends Error {
  override readonly name = 'CgroupNameError';
  readonly code = 'ERR_CGROUP_NAME';
}

/**
 * Pod UIDs that may become a cgroup component: API-server UUIDs and shardlet's static-pod md5
 * hex ids both match; anything else (a manifest's "../x", "a/b", spaces, 300 characters) does not.
 */
const POD_UID_RE = /^[0-9a-zA-Z][0-9a-zA-Z-]{0,63}$/;

/** Undefined when `uid` is fit for a cgroup name, else why not (naming metadata.uid). */
export function checkPodUID(uid: string): string | undefined {
  if (POD_UID_RE.test(uid)) return undefined;
  return `metadata.uid ${JSON.stringify(uid.slice(0, 80))} cannot name a pod cgroup: it must be 1-64 letters, digits and '-', starting with a letter or digit`;
}

function checkComponent(part: string, where: string): void {
  if (part === '' || part === '.' || part === '..' || part.includes('/') || part.includes('\0')) {
    throw new CgroupNameError(`${where}: invalid cgroup name component ${JSON.stringify(part)}`);
  }
}

export function childName(parent: CgroupName, ...parts: string[]): CgroupName {
  for (const p of parts) checkComponent(p, 'cgroup name');
  return Object.freeze([...parent, ...parts]);
}

/** The kubelet's ToCgroupfs: "/" + components joined by "/". */
export function toCgroupfs(name: CgroupName): string {
  return '/' + name.join('/');
}

/** The kubelet's escapeSystemdCgroupName. */
function escapeSystemd(part: string): string {
  return part.replaceAll('-', '_');
}

function unescapeSystemd(part: string): string {
  return part.replaceAll('_', '-');
}

/**
 * The kubelet's ToSystemd: components escaped, joined by "-" with ".slice", then expanded like
 * systemd's ExpandSlice into the slice path ("a-b.slice" → "/a.slice/a-b.slice").
 */
export function toSystemd(name: CgroupName): string {
  if (name.length === 0 || (name.length === 1 && name[0] === '')) return '/';
  const parts = name.map(escapeSystemd);
  let out = '';
  let prefix = '';
  for (const p of parts) {
    prefix = prefix === '' ? p : `${prefix}-${p}`;
    out += `/${prefix}.slice`;
  }
  return out;
}

export function driverName(driver: CgroupDriver, name: CgroupName): string {
  return driver === 'systemd' ? toSystemd(name) : toCgroupfs(name);
}

/**
 * --cgroup-root as a CgroupName. cgroupfs: a path ("/", "/shardlet"), each component checked.
 * systemd: "/" or a slice path whose last slice names the whole ancestry
 * ("/a.slice/a-b.slice" → [a, b]), as the kubelet's ParseSystemdToCgroupName.
 */
export function parseCgroupRoot(driver: CgroupDriver, root: string): CgroupName {
  if (!root.startsWith('/')) throw new CgroupNameError(`--cgroup-root: must be an absolute path, got ${JSON.stringify(root)}`);
  const parts = root.split('/').filter((p) => p !== '');
  if (driver === 'cgroupfs') {
    for (const p of parts) checkComponent(p, '--cgroup-root');
    return Object.freeze(parts);
  }
  if (parts.length === 0) return Object.freeze([]);
  const last = parts[parts.length - 1]!;
  if (!last.endsWith('.slice')) throw new CgroupNameError(`--cgroup-root: with --cgroup-driver=systemd it must be "/" or a slice path like "/shardlet.slice", got ${JSON.stringify(root)}`);
  const out = last.slice(0, -'.slice'.length).split('-').map(unescapeSystemd);
  for (const p of out) checkComponent(p, '--cgroup-root');
  // The expanded form must be what was given (a mistyped ancestry would name another slice).
  if (toSystemd(out) !== '/' + parts.join('/')) {
    throw new CgroupNameError(`--cgroup-root: slice path ${JSON.stringify(root)} is not the expansion of its last slice (${toSystemd(out)})`);
  }
  return Object.freeze(out);
}

/** The QoS parents under the node's pods cgroup (`kubepods`). */
export interface QOSCgroupNames {
  /** <root>/kubepods: the node allocatable cgroup and the Guaranteed pods' parent. */
  readonly kubepods: CgroupName;
  readonly burstable: CgroupName;
  readonly besteffort: CgroupName;
}

export function qosCgroupNames(root: CgroupName): QOSCgroupNames {
  const kubepods = childName(root, KUBEPODS);
  return Object.freeze({ kubepods, burstable: childName(kubepods, 'burstable'), besteffort: childName(kubepods, 'besteffort') });
}

export function qosParent(names: QOSCgroupNames, qos: QOSClass): CgroupName {
  switch (qos) {
    case 'Guaranteed':
      return names.kubepods;
    case 'Burstable':
      return names.burstable;
    case 'BestEffort':
      return names.besteffort;
    default: {
      const never: never = qos;
      return never;
    }
  }
}

/** The pod's cgroup (GetPodContainerName); throws CgroupNameError for a UID unfit for a path. */
export function podCgroupName(names: QOSCgroupNames, qos: QOSClass, uid: string): CgroupName {
  const bad = checkPodUID(uid);
  if (bad !== undefined) throw new CgroupNameError(bad);
  return childName(qosParent(names, qos), POD_CGROUP_PREFIX + uid);
}

/** The pod UID of a `pod<uid>` component, else undefined (for listing a QoS parent's pods). */
export function podUIDOfComponent(component: string): string | undefined {
  if (!component.startsWith(POD_CGROUP_PREFIX)) return undefined;
  const uid = component.slice(POD_CGROUP_PREFIX.length);
  return checkPodUID(uid) === undefined ? uid : undefined;
}
