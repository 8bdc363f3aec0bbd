/**
 * ContainerConfig for CreateContainer (the kubelet's generateContainerConfig and
 * generateLinuxContainerResources, kuberuntime_container.go / kuberuntime_container_linux.go).
 *
 * - metadata.attempt = restartCount; the image is the resolved image reference from the pull
 *   (with the user's spelling in userSpecifiedImage), like the kubelet.
 * - command = spec.command, args = spec.args, both with `$(VAR)` expanded from the env.
 * - logPath is relative to the sandbox's logDirectory: `<containerName>/<restartCount>.log`.
 * - resources: cpu shares from the request (or the limit when only a limit is set, min 2),
 *   CFS quota from the limit over a 100 ms period (min 1 ms), memory limit in bytes.
 *   oom_score_adj by QoS (oom-score-adj.ts) when the caller computed it (containerd with
 *   restrict_oom_score_adj raises a lower value to its own).
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { ContainerConfig, LinuxContainerResources } from '../../src/shared/cri/cri-types.js';
import { expandCommandAndArgs, makeEnvironmentVariables, type EnvContext } from './container-env.js';
import { newContainerAnnotations, newContainerLabels } from './labels.js';
import { cpuMillisOrZero, unitValueOrZero } from '../../src/shared/resources/quantity.js';
import { containerLogFileOf } from '../../src/shared/kubetypes/pod-log-paths.js';
import { namespaceOptionsForPod } from './sandbox-config.js';
import { containerSecurityContext } from './security-context.js';
import type { ImageUser } from './image-user.js';
import { verifyRunAsNonRoot } from './run-as-non-root.js';
import { CPU_QUOTA_PERIOD_US, milliCPUToQuota, milliCPUToShares } from '../../src/shared/cgroups/cgroup-resources.js';

// The conversions live with the cgroup code (the pod cgroup uses them too); re-exported for callers.
export { CPU_QUOTA_PERIOD_US, MAX_CPU_SHARES, MIN_CPU_QUOTA_US, MIN_CPU_SHARES, SHARES_PER_CPU, milliCPUToQuota, milliCPUToShares } from '../../src/shared/cgroups/cgroup-resources.js';

/** `<containerName>/<restartCount>.log` (the kubelet's BuildContainerLogsPath). */
export function containerLogPath(containerName: string, restartCount: number): string {
  return containerLogFileOf(containerName, restartCount);
}

export function linuxContainerResources(container: V1Container): LinuxContainerResources {
  const requests = container.resources?.requests ?? {};
  const limits = container.resources?.limits ?? {};
  const cpuRequest = cpuMillisOrZero(requests['cpu']);
  const cpuLimit = cpuMillisOrZero(limits['cpu']);
  const r: LinuxContainerResources = {
    cpuShares: milliCPUToShares(cpuRequest === 0 && cpuLimit !== 0 ? cpuLimit : cpuRequest),
    memoryLimitInBytes: unitValueOrZero(limits['memory']),
  };
  if (cpuLimit !== 0) {
    r.cpuPeriod = CPU_QUOTA_PERIOD_US;
    r.cpuQuota = milliCPUToQuota(cpuLimit, CPU_QUOTA_PERIOD_US);
  }
  return r;
}

export interface ContainerConfigInput {
  pod: V1Pod;
  container: V1Container;
  restartCount: number;
  /** The image reference the pull resolved (ImageStatus/PullImage id). */
  imageRef: string;
  env: EnvContext;
  /** The image's user (ImageStatus), for runAsNonRoot and the default runAsUser. */
  imageUser: ImageUser;
  /** Seccomp settings of the node (security-context.ts). */
  seccomp: { profileRoot: string; defaultRuntimeProfile: boolean };
  /** The kubelet's GetContainerOOMScoreAdjust (oom-score-adj.ts); absent: left to the runtime. */
  oomScoreAdj?: number;
  /** An ephemeral container's target: PID namespace TARGET with this container id (ephemeral-containers.ts). */
  targetContainerId?: string;
}

/** `spec.containers[i].securityContext` (or initContainers), for messages naming the field. */
function securityContextPath(pod: V1Pod, container: V1Container): string {
  const init = (pod.spec?.initContainers ?? []).indexOf(container);
  if (init >= 0) return `spec.initContainers[${init}].securityContext`;
  const app = (pod.spec?.containers ?? []).indexOf(container);
  if (app >= 0) return `spec.containers[${app}].securityContext`;
  const eph = (pod.spec?.ephemeralContainers ?? []).findIndex((c) => c.name === container.name);
  return eph >= 0 ? `spec.ephemeralContainers[${eph}].securityContext` : `container ${JSON.stringify(container.name)} securityContext`;
}

export type ContainerConfigResult = { ok: true; config: ContainerConfig } | { ok: false; message: string };

/**
 * A failure here is a CreateContainerConfigError (e.g. an env reference shardlet cannot resolve,
 * runAsNonRoot with a root image, a seccomp profile outside the profile root).
 */
export function generateContainerConfig(input: ContainerConfigInput): ContainerConfigResult {
  const { pod, container, restartCount } = input;
  const env = makeEnvironmentVariables(pod, container, input.env);
  if (!env.ok) return env;
  const nonRoot = verifyRunAsNonRoot(pod, container, input.imageUser);
  if (nonRoot !== undefined) return { ok: false, message: nonRoot };
  const security = containerSecurityContext(pod, container, input.imageUser, {
    seccompProfileRoot: input.seccomp.profileRoot, seccompDefault: input.seccomp.defaultRuntimeProfile,
    fieldPath: securityContextPath(pod, container),
    namespaceOptions: input.targetContainerId !== undefined ? { ...namespaceOptionsForPod(pod), pid: 'TARGET', targetId: input.targetContainerId } : namespaceOptionsForPod(pod),
  });
  if (!security.ok) return security;
  const { command, args } = expandCommandAndArgs(container, env.envs);
  const image = container.image ?? '';
  const config: ContainerConfig = {
    metadata: { name: container.name, attempt: restartCount },
    image: { image: input.imageRef, userSpecifiedImage: image },
    command,
    args,
    envs: env.envs,
    labels: newContainerLabels(container, pod),
    annotations: newContainerAnnotations(container, pod, restartCount),
    logPath: containerLogPath(container.name, restartCount),
    stdin: container.stdin === true,
    stdinOnce: container.stdinOnce === true,
    tty: container.tty === true,
    linux: {
      resources: linuxContainerResources(container),
      securityContext: security.securityContext,
    },
  };
  if (input.oomScoreAdj !== undefined) config.linux!.resources!.oomScoreAdj = input.oomScoreAdj;
  if (container.workingDir) config.workingDir = container.workingDir;
  return { ok: true, config };
}
