/** Typical RuntimePodStatus values for cache tests and the codec bench. */
import type { RuntimeContainerStatus, RuntimePodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';

const hex = (n: number, len = 64): string => n.toString(16).padStart(len, '0').slice(-len);

export function container(pod: number, k: number, version: number, sandboxId: string): RuntimeContainerStatus {
  return {
    id: hex(pod * 1000 + k * 10 + version),
    podSandboxId: sandboxId,
    name: `c${k}`,
    state: version % 2 === 0 ? 'CONTAINER_RUNNING' : 'CONTAINER_EXITED',
    createdAtNs: String(1_700_000_000_000_000_000n + BigInt(version)),
    startedAtNs: String(1_700_000_000_100_000_000n + BigInt(version)),
    finishedAtNs: version % 2 === 0 ? '0' : String(1_700_000_001_000_000_000n + BigInt(version)),
    exitCode: version % 2 === 0 ? 0 : 137,
    reason: version % 2 === 0 ? '' : 'Error',
    message: '',
    image: 'docker.io/library/busybox:1.36',
    imageRef: 'sha256:' + hex(k + 7),
    hash: (0x1234abcd + k).toString(16),
    restartCount: version,
    attempt: version,
  };
}

/**
 * A 2-container pod, as the cache stores it after a relist: one ready sandbox, two running
 * containers. `version` changes every field that a later status would change, so a test can
 * tell versions apart and detect a mix of two versions (torn read): every field embeds it.
 */
export function typicalPodStatus(pod: number, version = 0): RuntimePodStatus {
  const uid = `${hex(pod, 8)}-0000-4000-8000-${hex(version, 12)}`.slice(0, 36);
  const sandboxId = hex(pod * 7 + 1);
  const ip = `10.${(pod >> 8) & 255}.${pod & 255}.${version & 255}`;
  return {
    uid,
    name: `pod-${pod}-v${version}`,
    namespace: 'default',
    ips: [ip],
    sandboxes: [{
      id: sandboxId, state: 'SANDBOX_READY', createdAtNs: String(1_700_000_000_000_000_000n + BigInt(version)),
      attempt: version, ip, ips: [ip], hostNetwork: false,
    }],
    containers: [container(pod, 0, version, sandboxId), container(pod, 1, version, sandboxId)],
  };
}

/** Stable uid of pod `pod`, independent of version (typicalPodStatus's uid changes with version). */
export function podUid(pod: number): string {
  return `${hex(pod, 8)}-1111-4000-8000-000000000000`;
}

/**
 * typicalPodStatus(pod, version) with `containers` running containers in all (c0 … c{n-1}):
 * a pod of many containers whose every field still embeds the version (torn reads show).
 */
export function wideStatus(pod: number, version: number, containers: number): RuntimePodStatus {
  const st = typicalPodStatus(pod, version);
  const sb = st.sandboxes[0]!;
  st.containers = Array.from({ length: containers }, (_, k) => ({ ...container(pod, k, version, sb.id), id: hex(pod * 1_000_000 + k * 1000 + version), name: `c${k}-v${version}`, state: 'CONTAINER_RUNNING' as const }));
  return st;
}
