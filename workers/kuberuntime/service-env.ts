/**
 * The pod worker's side of service links: the service environment variables the main thread
 * attached to the pod's last update (PodApiObjects.serviceEnv; computed by
 * src/main/config-objects/service-env.ts), as makeEnvironmentVariables merges them
 * (container-env.ts): `$(VAR)` in an env value may name one, a container variable of the same
 * name wins, and the rest are appended after the container's own.
 *
 * No snapshot, or one without serviceEnv: no service variables (standalone mode, as a kubelet
 * without an API server). 'pending': the services were not listed yet, the kubelet's error.
 */
import type { PodApiObjects } from '../../src/shared/protocol/api-object-snapshot.js';

/** The kubelet's message while its service informer has not synced (a CreateContainerConfigError). */
export const SERVICES_NOT_SYNCED_MESSAGE = 'services have not yet been read at least once, cannot construct envvars';

export type ServiceEnvResult = { ok: true; vars: ReadonlyMap<string, string> } | { ok: false; message: string };

const NONE: ReadonlyMap<string, string> = new Map();

export function serviceEnvOf(objects: PodApiObjects | undefined): ServiceEnvResult {
  const l = objects?.serviceEnv;
  if (l === undefined) return { ok: true, vars: NONE };
  switch (l.state) {
    case 'found':
      return { ok: true, vars: new Map(l.object.vars.map((v) => [v.key, v.value])) };
    case 'pending':
      return { ok: false, message: SERVICES_NOT_SYNCED_MESSAGE };
    case 'missing':
      return { ok: true, vars: NONE };
    case 'error':
      return { ok: false, message: `failed to list services when setting up env vars: ${l.message.slice(0, 256)}` };
    default: {
      const never: never = l;
      throw new Error(`unknown service env state ${String(never)}`);
    }
  }
}
