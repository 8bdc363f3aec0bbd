/**
 * Validation of a defaulted v1 Pod from a manifest: the subset of the API server's
 * `ValidatePodCreate` (pkg/apis/core/validation) that matters for a node agent, with the same
 * field paths and wording. Returns every problem found (an empty list means valid); never throws.
 *
 * Input is decoded YAML of unknown quality, so every field is read as `unknown` and
 * type-checked before use (pod-schema-decode.ts has already checked JSON types and int32/int64
 * ranges). Every identifier that becomes a path component (uid, namespace, name, container name:
 * `<podLogsDir>/<ns>_<name>_<uid>/<container>/N.log`) is checked here against a pattern without
 * `/` or a leading `.`, so no manifest can name a path outside the agent's directories. Runs after `applyApiDefaults`, before the static-pod conventions
 * (name suffix, uid), so messages show the name the user wrote.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { fieldErr, type FieldError } from './field-error.js';
import { keyPath } from './pod-schema-decode.js';
import { validateSecurityContexts } from './security-context-validation.js';
import { validatePodNaming } from './pod-validation-naming.js';
import { DNS1123_SUBDOMAIN_RE, SUBDOMAIN_DETAIL, validateDnsLabel } from './dns-name-validation.js';
import { isNegative, parseQuantity, milliValue, unitValue, QUANTITY_FORMAT_DETAIL } from '../resources/quantity.js';

const IANA_SVC_NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** A uid given in a manifest: label-value syntax (it is stored in the pod-uid label), non-empty. */
const UID_RE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const UID_MAX = 63;
/** The API server's IsEnvVarName. */
const ENV_VAR_NAME_RE = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
/** Qualified-name parts (annotation and label keys: `[prefix/]name`). */
const QUALIFIED_NAME_RE = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
/** The API server's TotalAnnotationSizeLimitB: keys plus values of all annotations. */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

const RESTART_POLICIES = ['Always', 'Never', 'OnFailure'] as const;
const DNS_POLICIES = ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'] as const;
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'] as const;
const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'] as const;

export interface ValidateOptions {
  /** Appended to metadata.name by the source (`-<nodeName>`); counted in the length limit. */
  nameSuffix?: string;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function get(o: unknown, key: string): unknown {
  return isObj(o) ? o[key] : undefined;
}

function validateNonNegative(v: unknown, field: string, errs: FieldError[]): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'number' || !Number.isInteger(v)) errs.push(fieldErr.invalid(field, v, 'must be an integer'));
  else if (v < 0) errs.push(fieldErr.invalid(field, v, 'must be greater than or equal to 0'));
}

/** A label or annotation key: `[dns-subdomain prefix (≤253)/]name (≤63)` (IsQualifiedName). */
function validateQualifiedName(k: string, field: string, errs: FieldError[]): void {
  const slash = k.indexOf('/');
  const [prefix, name] = slash < 0 ? ['', k] : [k.slice(0, slash), k.slice(slash + 1)];
  const bad =
    name.length === 0 || name.length > 63 || !QUALIFIED_NAME_RE.test(name) ||
    (slash >= 0 && (prefix.length === 0 || prefix.length > 253 || !DNS1123_SUBDOMAIN_RE.test(prefix)));
  if (bad) {
    errs.push(fieldErr.invalid(field, k, "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63), with an optional DNS subdomain prefix and '/'"));
  }
}

function validateStringMap(m: unknown, field: string, errs: FieldError[], labelValues: boolean): void {
  if (m === undefined || m === null) return;
  if (!isObj(m)) return void errs.push(fieldErr.invalid(field, m, 'must be a map of string keys to string values'));
  let total = 0;
  for (const [k, v] of Object.entries(m)) {
    const kf = keyPath(field, k);
    validateQualifiedName(k, field, errs);
    if (typeof v !== 'string') {
      errs.push(fieldErr.invalid(kf, v, 'must be a string'));
      continue;
    }
    total += k.length + v.length;
    if (labelValues && (v.length > 63 || !LABEL_VALUE_RE.test(v))) {
      errs.push(fieldErr.invalid(kf, v, "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"));
    }
  }
  if (!labelValues && total > TOTAL_ANNOTATION_SIZE_LIMIT) {
    errs.push(fieldErr.invalid(field, `<${total} bytes>`, `may not have more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes`));
  }
}

function validateMetadata(meta: unknown, errs: FieldError[], opts: ValidateOptions): void {
  if (!isObj(meta)) return void errs.push(fieldErr.required('metadata.name', 'name or generateName is required'));
  const name = meta['name'];
  if (name === undefined || name === null || name === '') {
    errs.push(fieldErr.required('metadata.name', 'name or generateName is required'));
  } else if (typeof name !== 'string') {
    errs.push(fieldErr.invalid('metadata.name', name, 'must be a string'));
  } else {
    const max = 253 - (opts.nameSuffix?.length ?? 0);
    if (name.length > max) errs.push(fieldErr.invalid('metadata.name', name, `must be no more than ${max} characters`));
    if (!DNS1123_SUBDOMAIN_RE.test(name)) errs.push(fieldErr.invalid('metadata.name', name, SUBDOMAIN_DETAIL));
  }
  const ns = meta['namespace'];
  if (ns !== undefined && ns !== '') validateDnsLabel(ns, 'metadata.namespace', errs);
  const uid = meta['uid'];
  if (uid !== undefined && uid !== null && uid !== '') {
    if (typeof uid !== 'string') errs.push(fieldErr.invalid('metadata.uid', uid, 'must be a string'));
    else if (uid.length > UID_MAX) errs.push(fieldErr.invalid('metadata.uid', uid, `must be no more than ${UID_MAX} characters`));
    else if (!UID_RE.test(uid)) {
      errs.push(fieldErr.invalid('metadata.uid', uid, "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (it names a log directory)"));
    }
  }
  validateStringMap(meta['labels'], 'metadata.labels', errs, true);
  validateStringMap(meta['annotations'], 'metadata.annotations', errs, false);
}

function validateResourceList(list: unknown, field: string, errs: FieldError[]): Map<string, number> {
  const parsed = new Map<string, number>();
  if (list === undefined || list === null) return parsed;
  if (!isObj(list)) {
    errs.push(fieldErr.invalid(field, list, 'must be a map of resource names to quantities'));
    return parsed;
  }
  for (const [name, raw] of Object.entries(list)) {
    const f = keyPath(field, name);
    const q = parseQuantity(raw);
    if (q === undefined) errs.push(fieldErr.invalid(f, raw, QUANTITY_FORMAT_DETAIL));
    else if (isNegative(q)) errs.push(fieldErr.invalid(f, raw, 'must be greater than or equal to 0'));
    else parsed.set(name, name === 'cpu' ? milliValue(q) : unitValue(q));
  }
  return parsed;
}

function validateResources(res: unknown, field: string, errs: FieldError[]): void {
  if (res === undefined || res === null) return;
  if (!isObj(res)) return void errs.push(fieldErr.invalid(field, res, 'must be an object'));
  const limits = validateResourceList(res['limits'], `${field}.limits`, errs);
  const requests = validateResourceList(res['requests'], `${field}.requests`, errs);
  for (const [name, req] of requests) {
    const lim = limits.get(name);
    if (lim !== undefined && req > lim) {
      const raw = get(res['requests'], name);
      errs.push(fieldErr.invalid(`${field}.requests`, raw, `must be less than or equal to ${name} limit of ${String(get(res['limits'], name))}`));
    }
  }
}

function validatePort(v: unknown, field: string, errs: FieldError[]): void {
  if (v === undefined || v === null || v === '') return void errs.push(fieldErr.required(field));
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 1 || v > 65535) errs.push(fieldErr.invalid(field, v, 'must be between 1 and 65535, inclusive'));
  } else if (typeof v !== 'string' || v.length > 15 || !IANA_SVC_NAME_RE.test(v) || !/[a-z]/.test(v)) {
    errs.push(fieldErr.invalid(field, v, 'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'));
  }
}

function validateProbe(probe: unknown, field: string, errs: FieldError[], mustSucceedOnce: boolean): void {
  if (probe === undefined || probe === null) return;
  if (!isObj(probe)) return void errs.push(fieldErr.invalid(field, probe, 'must be an object'));
  const handlers = PROBE_HANDLERS.filter((h) => probe[h] !== undefined && probe[h] !== null);
  if (handlers.length === 0) errs.push(fieldErr.required(field, 'must specify a handler type'));
  for (const extra of handlers.slice(1)) errs.push(fieldErr.forbidden(`${field}.${extra}`, 'may not specify more than 1 handler type'));
  for (const k of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold']) {
    validateNonNegative(probe[k], `${field}.${k}`, errs);
  }
  if (mustSucceedOnce && probe['successThreshold'] !== undefined && probe['successThreshold'] !== 1) {
    errs.push(fieldErr.invalid(`${field}.successThreshold`, probe['successThreshold'], 'must be 1'));
  }
  if (handlers[0] === 'httpGet') validatePort(get(probe['httpGet'], 'port'), `${field}.httpGet.port`, errs);
  if (handlers[0] === 'tcpSocket') validatePort(get(probe['tcpSocket'], 'port'), `${field}.tcpSocket.port`, errs);
  if (handlers[0] === 'exec' && !Array.isArray(get(probe['exec'], 'command'))) errs.push(fieldErr.required(`${field}.exec.command`));
}

function validateEnv(env: unknown, field: string, errs: FieldError[]): void {
  if (!Array.isArray(env)) return;
  env.forEach((e: unknown, i) => {
    const name = get(e, 'name');
    const f = `${field}[${i}].name`;
    if (name === undefined || name === null || name === '') errs.push(fieldErr.required(f));
    else if (typeof name !== 'string' || !ENV_VAR_NAME_RE.test(name)) {
      errs.push(fieldErr.invalid(f, name, "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit"));
    }
    const vf = get(e, 'valueFrom');
    if (get(e, 'value') !== undefined && get(e, 'value') !== '' && vf !== undefined && vf !== null) {
      errs.push(fieldErr.invalid(`${field}[${i}].valueFrom`, '', 'may not be specified when `value` is not empty'));
    }
  });
}

function validateContainer(c: unknown, field: string, errs: FieldError[], init: boolean, volumes: ReadonlySet<string>): void {
  if (!isObj(c)) return void errs.push(fieldErr.invalid(field, c, 'must be an object'));
  const name = c['name'];
  if (name === undefined || name === null || name === '') errs.push(fieldErr.required(`${field}.name`));
  else validateDnsLabel(name, `${field}.name`, errs);
  const image = c['image'];
  if (image === undefined || image === null || (typeof image === 'string' && image.trim() === '')) errs.push(fieldErr.required(`${field}.image`));
  else if (typeof image !== 'string') errs.push(fieldErr.invalid(`${field}.image`, image, 'must be a string'));
  const pull = c['imagePullPolicy'];
  if (pull !== undefined && !(PULL_POLICIES as readonly unknown[]).includes(pull)) errs.push(fieldErr.notSupported(`${field}.imagePullPolicy`, pull, PULL_POLICIES));
  // Container restartPolicy (KEP-753, 1.33 validation): only "Always", only on an init container (a sidecar).
  if (init && c['restartPolicy'] !== undefined && c['restartPolicy'] !== 'Always') {
    errs.push(fieldErr.notSupported(`${field}.restartPolicy`, c['restartPolicy'], ['Always']));
  } else if (!init && c['restartPolicy'] !== undefined) {
    errs.push(fieldErr.forbidden(`${field}.restartPolicy`, 'may not be set for non-init containers'));
  }
  if (Array.isArray(c['ports'])) {
    c['ports'].forEach((p: unknown, i) => {
      const pf = `${field}.ports[${i}]`;
      const cp = get(p, 'containerPort');
      if (cp === undefined || cp === null) errs.push(fieldErr.required(`${pf}.containerPort`));
      else validatePort(typeof cp === 'number' ? cp : -1, `${pf}.containerPort`, errs);
      const proto = get(p, 'protocol');
      if (proto !== undefined && !(PROTOCOLS as readonly unknown[]).includes(proto)) errs.push(fieldErr.notSupported(`${pf}.protocol`, proto, PROTOCOLS));
    });
  }
  if (Array.isArray(c['volumeMounts'])) {
    c['volumeMounts'].forEach((m: unknown, i) => {
      const mn = get(m, 'name');
      if (typeof mn !== 'string' || mn === '') errs.push(fieldErr.required(`${field}.volumeMounts[${i}].name`));
      else if (!volumes.has(mn)) errs.push(fieldErr.notFound(`${field}.volumeMounts[${i}].name`, mn));
      const mp = get(m, 'mountPath');
      if (typeof mp !== 'string' || mp === '') errs.push(fieldErr.required(`${field}.volumeMounts[${i}].mountPath`));
    });
  }
  validateResources(c['resources'], `${field}.resources`, errs);
  validateEnv(c['env'], `${field}.env`, errs);
  // Init containers take no probes or lifecycle hooks unless they are sidecars (restartPolicy: Always).
  const sidecar = init && c['restartPolicy'] === 'Always';
  if (init && !sidecar && c['lifecycle'] !== undefined) errs.push(fieldErr.forbidden(`${field}.lifecycle`, 'may not be set for init containers without restartPolicy=Always'));
  for (const [k, once] of [['livenessProbe', true], ['readinessProbe', false], ['startupProbe', true]] as const) {
    if (init && !sidecar && c[k] !== undefined) errs.push(fieldErr.forbidden(`${field}.${k}`, 'may not be set for init containers without restartPolicy=Always'));
    else validateProbe(c[k], `${field}.${k}`, errs, once);
  }
}

function validateVolumes(v: unknown, errs: FieldError[]): Set<string> {
  const names = new Set<string>();
  if (v === undefined || v === null) return names;
  if (!Array.isArray(v)) return errs.push(fieldErr.invalid('spec.volumes', v, 'must be a list')), names;
  v.forEach((vol: unknown, i) => {
    const n = get(vol, 'name');
    if (n === undefined || n === '') return void errs.push(fieldErr.required(`spec.volumes[${i}].name`));
    validateDnsLabel(n, `spec.volumes[${i}].name`, errs);
    if (typeof n === 'string') {
      if (names.has(n)) errs.push(fieldErr.duplicate(`spec.volumes[${i}].name`, n));
      names.add(n);
    }
  });
  return names;
}

/** Validates a defaulted pod; returns all field errors (empty when valid). */
export function validatePod(pod: V1Pod, opts: ValidateOptions = {}): FieldError[] {
  const errs: FieldError[] = [];
  validateMetadata(pod.metadata, errs, opts);
  const spec: unknown = pod.spec;
  if (!isObj(spec)) {
    errs.push(fieldErr.required('spec.containers'));
    return errs;
  }
  const volumes = validateVolumes(spec['volumes'], errs);
  const names = new Set<string>();
  const lists = [['initContainers', true], ['containers', false]] as const;
  for (const [key, init] of lists) {
    const list = spec[key];
    if (list === undefined || list === null || (Array.isArray(list) && list.length === 0)) {
      if (!init) errs.push(fieldErr.required(`spec.${key}`));
      continue;
    }
    if (!Array.isArray(list)) {
      errs.push(fieldErr.invalid(`spec.${key}`, list, 'must be a list'));
      continue;
    }
    list.forEach((c: unknown, i) => {
      const field = `spec.${key}[${i}]`;
      validateContainer(c, field, errs, init, volumes);
      const n = get(c, 'name');
      if (typeof n === 'string' && n !== '') {
        if (names.has(n)) errs.push(fieldErr.duplicate(`${field}.name`, n));
        names.add(n);
      }
    });
  }
  const rp = spec['restartPolicy'];
  if (!(RESTART_POLICIES as readonly unknown[]).includes(rp)) errs.push(fieldErr.notSupported('spec.restartPolicy', rp, RESTART_POLICIES));
  const dp = spec['dnsPolicy'];
  if (!(DNS_POLICIES as readonly unknown[]).includes(dp)) errs.push(fieldErr.notSupported('spec.dnsPolicy', dp, DNS_POLICIES));
  validateNonNegative(spec['terminationGracePeriodSeconds'], 'spec.terminationGracePeriodSeconds', errs);
  const ads = spec['activeDeadlineSeconds'];
  if (ads !== undefined && ads !== null && (typeof ads !== 'number' || !Number.isInteger(ads) || ads <= 0)) {
    errs.push(fieldErr.invalid('spec.activeDeadlineSeconds', ads, 'must be between 1 and 2147483647, inclusive'));
  }
  validateStringMap(spec['nodeSelector'], 'spec.nodeSelector', errs, false);
  validateResourceList(spec['overhead'], 'spec.overhead', errs);
  validateSecurityContexts(pod.metadata, spec, errs);
  validatePodNaming(spec, errs);
  return errs;
}
