/**
 * Validation of the pod's and the containers' securityContext, for manifests that reach the node
 * without an API server (static pod files, manifest URLs): the subset of the API server's
 * ValidatePodSecurityContext / ValidateSecurityContext / validateSysctls / validateSeccompProfileField
 * / ValidateAppArmorProfileField that guards what the node turns into CRI settings and paths,
 * with the API server's field paths and wording. Input is decoded YAML of unknown quality: every
 * field is read as `unknown`.
 *
 * What it guarantees downstream: ids are int32 (0..2147483647); a Localhost seccomp profile is a
 * relative path without `..` (so `<root-dir>/seccomp/<profile>` stays below the profile root);
 * sysctl names have the API's syntax (no empty, `.` or `..` segment; see sysctl-names.ts).
 */
import { fieldErr, type FieldError } from './field-error.js';
import { APPARMOR_ANNOTATION_PREFIX, APPARMOR_LOCALHOST_PREFIX, APPARMOR_RUNTIME_DEFAULT, APPARMOR_UNCONFINED } from '../kubetypes/apparmor-profile.js';
import { isValidSysctlName, sysctlNamespace, SYSCTL_MAX_LENGTH, SYSCTL_NAME_PATTERN } from '../kubetypes/sysctl-names.js';

const MAX_ID = 2147483647;
const PROFILE_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'] as const;
const PROC_MOUNT_TYPES = ['Default', 'Unmasked'] as const;
const FS_GROUP_CHANGE_POLICIES = ['Always', 'OnRootMismatch'] as const;
const SUPPLEMENTAL_GROUPS_POLICIES = ['Merge', 'Strict'] as const;
/** The API server's maxLocalhostProfileLength (AppArmor). */
const MAX_APPARMOR_PROFILE_LENGTH = 4095;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function validateId(v: unknown, field: string, errs: FieldError[]): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_ID) errs.push(fieldErr.invalid(field, v, `must be between 0 and ${MAX_ID}, inclusive`));
}

function validateEnum(v: unknown, field: string, allowed: readonly string[], errs: FieldError[]): void {
  if (v === undefined || v === null) return;
  if (!allowed.includes(v as string)) errs.push(fieldErr.notSupported(field, v, allowed));
}

/** validateSeccompProfileField. */
function validateSeccompProfile(p: unknown, field: string, errs: FieldError[]): void {
  if (p === undefined || p === null) return;
  if (!isObj(p)) return void errs.push(fieldErr.invalid(field, p, 'must be an object'));
  const type = p['type'];
  if (type === undefined || type === null || type === '') return void errs.push(fieldErr.required(`${field}.type`));
  validateEnum(type, `${field}.type`, PROFILE_TYPES, errs);
  const local = p['localhostProfile'];
  const lf = `${field}.localhostProfile`;
  if (type !== 'Localhost') {
    if (local !== undefined && local !== null) errs.push(fieldErr.invalid(lf, local, 'can only be set when seccomp type is Localhost'));
    return;
  }
  if (local === undefined || local === null || local === '') return void errs.push(fieldErr.required(lf, 'must be set when seccomp type is Localhost'));
  if (typeof local !== 'string') return void errs.push(fieldErr.invalid(lf, local, 'must be a string'));
  if (local.startsWith('/')) errs.push(fieldErr.invalid(lf, local, 'must be a relative path'));
  if (local.split('/').includes('..')) errs.push(fieldErr.invalid(lf, local, "must not contain '..'"));
}

/** ValidateAppArmorProfileField. */
function validateAppArmorProfile(p: unknown, field: string, errs: FieldError[]): void {
  if (p === undefined || p === null) return;
  if (!isObj(p)) return void errs.push(fieldErr.invalid(field, p, 'must be an object'));
  const type = p['type'];
  if (type === undefined || type === null || type === '') return void errs.push(fieldErr.required(`${field}.type`));
  validateEnum(type, `${field}.type`, PROFILE_TYPES, errs);
  const local = p['localhostProfile'];
  const lf = `${field}.localhostProfile`;
  if (type !== 'Localhost') {
    if (local !== undefined && local !== null) errs.push(fieldErr.forbidden(lf, 'can only be set when AppArmor type is Localhost'));
    return;
  }
  if (typeof local !== 'string' || local.trim() === '') return void errs.push(fieldErr.required(lf, 'must be set when AppArmor type is Localhost'));
  if (local.length > MAX_APPARMOR_PROFILE_LENGTH) errs.push(fieldErr.invalid(lf, local, `must be no more than ${MAX_APPARMOR_PROFILE_LENGTH} characters`));
}

function validateSysctls(list: unknown, field: string, spec: Obj, errs: FieldError[]): void {
  if (list === undefined || list === null) return;
  if (!Array.isArray(list)) return void errs.push(fieldErr.invalid(field, list, 'must be a list'));
  const seen = new Set<string>();
  list.forEach((s: unknown, i) => {
    const nf = `${field}[${i}].name`;
    const name = isObj(s) ? s['name'] : undefined;
    if (name === undefined || name === null || name === '') return void errs.push(fieldErr.required(nf));
    if (typeof name !== 'string' || !isValidSysctlName(name)) {
      return void errs.push(fieldErr.invalid(nf, name, `must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ${SYSCTL_NAME_PATTERN}`));
    }
    if (seen.has(name)) errs.push(fieldErr.duplicate(nf, name));
    seen.add(name);
    const value = isObj(s) ? s['value'] : undefined;
    if (value !== undefined && value !== null && typeof value !== 'string') errs.push(fieldErr.invalid(`${field}[${i}].value`, value, 'must be a string'));
    // ValidateHostSysctl: a namespaced sysctl cannot be set in a namespace shared with the host.
    const ns = sysctlNamespace(name).ns;
    if (spec['hostNetwork'] === true && ns === 'Net') errs.push(fieldErr.invalid(nf, name, "may not be specified when 'hostNetwork' is true"));
    if (spec['hostIPC'] === true && ns === 'IPC') errs.push(fieldErr.invalid(nf, name, "may not be specified when 'hostIPC' is true"));
  });
}

function validatePodSecurityContext(sc: unknown, spec: Obj, errs: FieldError[]): void {
  const f = 'spec.securityContext';
  if (sc === undefined || sc === null) return;
  if (!isObj(sc)) return void errs.push(fieldErr.invalid(f, sc, 'must be an object'));
  validateId(sc['runAsUser'], `${f}.runAsUser`, errs);
  validateId(sc['runAsGroup'], `${f}.runAsGroup`, errs);
  validateId(sc['fsGroup'], `${f}.fsGroup`, errs);
  const groups = sc['supplementalGroups'];
  if (Array.isArray(groups)) groups.forEach((g: unknown, i) => validateId(g, `${f}.supplementalGroups[${i}]`, errs));
  else if (groups !== undefined && groups !== null) errs.push(fieldErr.invalid(`${f}.supplementalGroups`, groups, 'must be a list'));
  validateEnum(sc['fsGroupChangePolicy'], `${f}.fsGroupChangePolicy`, FS_GROUP_CHANGE_POLICIES, errs);
  validateEnum(sc['supplementalGroupsPolicy'], `${f}.supplementalGroupsPolicy`, SUPPLEMENTAL_GROUPS_POLICIES, errs);
  validateSysctls(sc['sysctls'], `${f}.sysctls`, spec, errs);
  validateSeccompProfile(sc['seccompProfile'], `${f}.seccompProfile`, errs);
  validateAppArmorProfile(sc['appArmorProfile'], `${f}.appArmorProfile`, errs);
}

function validateContainerSecurityContext(sc: unknown, f: string, errs: FieldError[]): void {
  if (sc === undefined || sc === null) return;
  if (!isObj(sc)) return void errs.push(fieldErr.invalid(f, sc, 'must be an object'));
  validateId(sc['runAsUser'], `${f}.runAsUser`, errs);
  validateId(sc['runAsGroup'], `${f}.runAsGroup`, errs);
  validateEnum(sc['procMount'], `${f}.procMount`, PROC_MOUNT_TYPES, errs);
  validateSeccompProfile(sc['seccompProfile'], `${f}.seccompProfile`, errs);
  validateAppArmorProfile(sc['appArmorProfile'], `${f}.appArmorProfile`, errs);
  const caps = sc['capabilities'];
  const adds = isObj(caps) && Array.isArray(caps['add']) ? caps['add'] : [];
  if (sc['allowPrivilegeEscalation'] === false) {
    if (sc['privileged'] === true) errs.push(fieldErr.invalid(f, sc, 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'));
    if (adds.includes('CAP_SYS_ADMIN') || adds.includes('SYS_ADMIN')) errs.push(fieldErr.invalid(f, sc, 'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN'));
  }
}

/** The AppArmor annotations' values (ValidateAppArmorPodAnnotations). */
function validateAppArmorAnnotations(meta: unknown, errs: FieldError[]): void {
  const ann = isObj(meta) ? meta['annotations'] : undefined;
  if (!isObj(ann)) return;
  for (const [k, v] of Object.entries(ann)) {
    if (!k.startsWith(APPARMOR_ANNOTATION_PREFIX)) continue;
    const ok = v === APPARMOR_RUNTIME_DEFAULT || v === APPARMOR_UNCONFINED || (typeof v === 'string' && v.startsWith(APPARMOR_LOCALHOST_PREFIX) && v.length > APPARMOR_LOCALHOST_PREFIX.length);
    if (!ok) errs.push(fieldErr.invalid(`metadata.annotations[${k}]`, v, 'invalid AppArmor profile name'));
  }
}

/** Appends the securityContext errors of a pod (spec already known to be an object). */
export function validateSecurityContexts(meta: unknown, spec: Obj, errs: FieldError[]): void {
  validateAppArmorAnnotations(meta, errs);
  validatePodSecurityContext(spec['securityContext'], spec, errs);
  for (const key of ['initContainers', 'containers'] as const) {
    const list = spec[key];
    if (!Array.isArray(list)) continue;
    list.forEach((c: unknown, i) => {
      if (isObj(c)) validateContainerSecurityContext(c['securityContext'], `spec.${key}[${i}].securityContext`, errs);
    });
  }
}
