/**
 * Validation of a pod's ephemeral containers (`kubectl debug`), the API server's
 * validateEphemeralContainers (pkg/apis/core/validation, v1.20): the same field paths and
 * wording, so a refusal reads as `kubectl` users know it.
 *
 *  - name: required, a DNS label, unique among all of the pod's containers;
 *  - image: required;
 *  - ports, resources, livenessProbe, readinessProbe, startupProbe, lifecycle: Forbidden,
 *    "cannot be set for an Ephemeral Container" (they exist for the pod's own services, which an
 *    ephemeral container must not provide); volumeMounts[].subPath likewise;
 *  - targetContainerName: when set, must name a container or init container of the pod
 *    (NotFound otherwise).
 *
 * Two callers: a static pod may not carry ephemeral containers at all (the kubelet's
 * ValidatePodCreate: "cannot be set on create"), and the pod worker checks each ephemeral
 * container before it starts it, so a bad one is refused alone (waiting with
 * CreateContainerConfigError and this message) while the running pod is left alone. Input is of
 * unknown quality: every field is type-checked before use; never throws.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { validateDnsLabel } from './dns-name-validation.js';
import { fieldErr, type FieldError } from './field-error.js';

/** Fields an ephemeral container may not set (JSON names, the API server's allow list negated). */
export const FORBIDDEN_EPHEMERAL_FIELDS: readonly string[] = Object.freeze(['ports', 'resources', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle']);

export const FORBIDDEN_EPHEMERAL_DETAIL = 'cannot be set for an Ephemeral Container';

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Set in the Go sense: present and not the zero value (an empty list or object is unset). */
function isSet(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isObj(v)) return Object.values(v).some(isSet);
  return true;
}

function containerNames(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((c: unknown) => (isObj(c) && typeof c['name'] === 'string' ? [c['name']] : []));
}

/** The errors of `spec.ephemeralContainers[index]` (empty: it may start). */
export function validateEphemeralContainer(pod: V1Pod, index: number): FieldError[] {
  const spec: unknown = pod.spec;
  const list = isObj(spec) ? spec['ephemeralContainers'] : undefined;
  const field = `spec.ephemeralContainers[${index}]`;
  const errs: FieldError[] = [];
  const ec: unknown = Array.isArray(list) ? list[index] : undefined;
  if (!isObj(ec)) return [fieldErr.invalid(field, ec, 'must be an object')];
  const others = isObj(spec) ? [...containerNames(spec['initContainers']), ...containerNames(spec['containers'])] : [];

  const name = ec['name'];
  if (name === undefined || name === '') errs.push(fieldErr.required(`${field}.name`));
  else {
    validateDnsLabel(name, `${field}.name`, errs);
    const earlier = containerNames(Array.isArray(list) ? list.slice(0, index) : []);
    if (typeof name === 'string' && (others.includes(name) || earlier.includes(name))) errs.push(fieldErr.duplicate(`${field}.name`, name));
  }
  const image = ec['image'];
  if (typeof image !== 'string' || image.trim() === '') errs.push(fieldErr.required(`${field}.image`));

  for (const f of FORBIDDEN_EPHEMERAL_FIELDS) {
    if (isSet(ec[f])) errs.push(fieldErr.forbidden(`${field}.${f}`, FORBIDDEN_EPHEMERAL_DETAIL));
  }
  const mounts = ec['volumeMounts'];
  if (Array.isArray(mounts)) {
    mounts.forEach((m: unknown, i) => {
      if (isObj(m) && isSet(m['subPath'])) errs.push(fieldErr.forbidden(`${field}.volumeMounts[${i}].subPath`, FORBIDDEN_EPHEMERAL_DETAIL));
    });
  }
  const target = ec['targetContainerName'];
  if (target !== undefined && target !== null && target !== '') {
    if (typeof target !== 'string') errs.push(fieldErr.invalid(`${field}.targetContainerName`, target, 'must be a string'));
    else if (!others.includes(target)) errs.push(fieldErr.notFound(`${field}.targetContainerName`, target));
  }
  return errs;
}

/** A static pod may not carry ephemeral containers (the kubelet's ValidatePodCreate). */
export function validateNoEphemeralContainersOnCreate(pod: V1Pod): FieldError[] {
  const spec: unknown = pod.spec;
  const list = isObj(spec) ? spec['ephemeralContainers'] : undefined;
  if (list === undefined || list === null || (Array.isArray(list) && list.length === 0)) return [];
  return [fieldErr.forbidden('spec.ephemeralContainers', 'cannot be set on create')];
}
