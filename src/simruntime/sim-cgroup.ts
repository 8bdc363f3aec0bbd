/**
 * The cgroup the simulated runtime puts a container in, from the linux.cgroupParent its sandbox
 * was created with, spelled as containerd 1.6 + runc would (containerd's getCgroupsPath):
 *
 *   cgroupfs parent "/kubepods/besteffort/pod<uid>"   → "/kubepods/besteffort/pod<uid>/<id>"
 *   systemd parent  ".../kubepods-besteffort-pod<u>.slice"
 *                                                     → ".../kubepods-besteffort-pod<u>.slice/cri-containerd-<id>.scope"
 *   no parent (cgroups-per-qos off)                   → "/<id>" (containerd's default "/k8s.io/<id>"
 *                                                        is namespace-specific; the sim keeps it flat)
 *
 * What the container reads at /proc/self/cgroup (ExecSync `cat /proc/self/cgroup`) is the one
 * cgroup v2 line "0::<path>", as on a v2 host without a cgroup namespace (the simulated
 * container is no process, so nothing is created on the host); /proc/self/oom_score_adj is the
 * oomScoreAdj it was created with. Also the sandbox's verbose
 * status info: the config it received (cgroupParent included) and the cgroups path its pause
 * container would have. Pure; never imports agent code.
 */
import type { ContainerConfig, PodSandboxConfig } from '../shared/cri/cri-types.js';

/** The path containerd would give a container (or the sandbox's pause container) `id`. */
export function simCgroupsPath(cgroupParent: string | undefined, id: string): string {
  const parent = cgroupParent ?? '';
  if (parent === '') return `/${id}`;
  const base = parent.slice(parent.lastIndexOf('/') + 1);
  if (base.endsWith('.slice')) return `${parent.replace(/\/+$/, '')}/cri-containerd-${id}.scope`;
  return `${parent.replace(/\/+$/, '')}/${id}`;
}

/** The text of /proc/self/cgroup inside the container. */
export function simProcSelfCgroup(cgroupParent: string | undefined, containerId: string): string {
  return `0::${simCgroupsPath(cgroupParent, containerId)}\n`;
}

/**
 * Virtual files a container reads that no mount provides; undefined for any other path.
 * /proc/self/oom_score_adj is what CreateContainer asked for (the runtime default 0 when
 * unset), unclamped (the sim has no restrict_oom_score_adj).
 */
export function simVirtualFile(path: string, sandboxConfig: PodSandboxConfig | undefined, container: { id: string; config: ContainerConfig }): string | undefined {
  switch (path) {
    case '/proc/self/cgroup':
    case '/proc/1/cgroup':
      return simProcSelfCgroup(sandboxConfig?.linux?.cgroupParent, container.id);
    case '/proc/self/oom_score_adj':
    case '/proc/1/oom_score_adj':
      return `${Number(container.config.linux?.resources?.oomScoreAdj ?? 0)}\n`;
    default:
      return undefined;
  }
}

/**
 * PodSandboxStatus verbose info with the cgroup added (containerd's "info" key: JSON with the
 * config and the spec): `base` is the info the runtime already built (security settings, sysctls);
 * this adds `cgroupParent` and `runtimeSpec.linux.cgroupsPath` without dropping any of it.
 */
export function simSandboxVerboseInfo(base: Readonly<Record<string, string>>, sandboxId: string, config: PodSandboxConfig): Record<string, string> {
  const cgroupParent = config.linux?.cgroupParent ?? '';
  let info: { runtimeSpec?: { linux?: Record<string, unknown> } & Record<string, unknown> } & Record<string, unknown> = {};
  try {
    info = JSON.parse(base['info'] ?? '{}') as typeof info;
  } catch {
    info = {};
  }
  const runtimeSpec = info.runtimeSpec ?? {};
  const merged = { ...info, config, cgroupParent, runtimeSpec: { ...runtimeSpec, linux: { ...(runtimeSpec.linux ?? {}), cgroupsPath: simCgroupsPath(cgroupParent, sandboxId) } } };
  return { ...base, info: JSON.stringify(merged) };
}
