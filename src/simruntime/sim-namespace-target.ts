/**
 * A container that joins another container's PID namespace (NamespaceOption pid TARGET with
 * target_id: the kubelet's ephemeral containers with a targetContainerName), checked as
 * containerd 1.6 does at CreateContainer (pkg/cri/server validateTargetContainer): the target
 * must exist, belong to the same sandbox and be running. The simulated processes have no real
 * PID namespace; what a TARGET container sees is the target's (it is not PID 1 there, so
 * SIGTERM ends it, sim-runtime.ts). Pure over the store's lookups.
 */
import type { ContainerConfig } from '../shared/cri/cri-types.js';

export interface TargetLookup {
  /** The container by id or unique prefix, undefined when absent. */
  container(id: string): { sandboxId: string; state: string } | undefined;
}

/** containerd's "invalid target container: ..." cause, or undefined when the config is acceptable. */
export function targetNamespaceError(config: ContainerConfig, sandboxId: string, lookup: TargetLookup): string | undefined {
  const ns = config.linux?.securityContext?.namespaceOptions;
  if (ns?.pid !== 'TARGET') return undefined;
  const targetId = ns.targetId ?? '';
  const target = targetId === '' ? undefined : lookup.container(targetId);
  if (target === undefined) return `invalid target container: container "${targetId}" does not exist: not found`;
  if (target.sandboxId !== sandboxId) return `invalid target container: container "${targetId}" (sandbox ${target.sandboxId}) does not belong to sandbox ${sandboxId}`;
  if (target.state !== 'CONTAINER_RUNNING') return `invalid target container: container "${targetId}" is not running - in state ${target.state}`;
  return undefined;
}
