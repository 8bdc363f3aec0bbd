/**
 * The defaults the API server applies to a v1 Pod (pkg/apis/core/v1/defaults.go), applied to
 * static and URL pods so they look exactly like pods that came through the API: the sync loop,
 * the hash labels on containers and the status manager all assume a defaulted spec.
 *
 * Runs before validation, on decoded input of unknown quality: it only fills fields whose
 * parent has the expected shape and leaves anything malformed for the validator to report.
 * Mutates the pod it is given (callers pass a private copy).
 */
import type { V1Container, V1Pod, V1Probe } from '@kubernetes/client-node';

export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;
export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
/** Volume source defaultMode 0644, as the API server writes it (decimal). */
const DEFAULT_VOLUME_MODE = 0o644;

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * `Always` for `:latest` or an untagged image without digest, else `IfNotPresent`
 * (SetDefaults_Container via parsers.ParseImageName).
 */
export function defaultImagePullPolicy(image: string): 'Always' | 'IfNotPresent' {
  if (image.includes('@')) return 'IfNotPresent';
  const lastSlash = image.lastIndexOf('/');
  const lastPart = image.slice(lastSlash + 1);
  const colon = lastPart.lastIndexOf(':');
  if (colon < 0) return 'Always';
  return lastPart.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultProbe(p: unknown): void {
  if (!isObj(p)) return;
  const probe = p as V1Probe;
  probe.timeoutSeconds ??= 1;
  probe.periodSeconds ??= 10;
  probe.successThreshold ??= 1;
  probe.failureThreshold ??= 3;
  if (isObj(probe.httpGet)) {
    probe.httpGet.path ??= '/';
    probe.httpGet.scheme ??= 'HTTP';
  }
}

function defaultContainer(c: unknown): void {
  if (!isObj(c)) return;
  const ctr = c as unknown as V1Container;
  if (typeof ctr.image === 'string' && ctr.imagePullPolicy === undefined) ctr.imagePullPolicy = defaultImagePullPolicy(ctr.image);
  ctr.terminationMessagePath ??= DEFAULT_TERMINATION_MESSAGE_PATH;
  ctr.terminationMessagePolicy ??= 'File';
  if (Array.isArray(ctr.ports)) for (const port of ctr.ports) if (isObj(port)) port.protocol ??= 'TCP';
  ctr.resources ??= {};
  // A limit without a request defaults the request to the limit (SetDefaults_Pod).
  const res = ctr.resources;
  if (isObj(res) && isObj(res['limits'])) {
    const requests = isObj(res['requests']) ? res['requests'] : {};
    for (const [k, v] of Object.entries(res['limits'])) if (!(k in requests)) requests[k] = v;
    if (Object.keys(requests).length > 0) res['requests'] = requests;
  }
  if (Array.isArray(ctr.env)) {
    for (const e of ctr.env) {
      if (isObj(e) && isObj(e.valueFrom) && isObj(e.valueFrom['fieldRef'])) e.valueFrom['fieldRef']['apiVersion'] ??= 'v1';
    }
  }
  defaultProbe(ctr.livenessProbe);
  defaultProbe(ctr.readinessProbe);
  defaultProbe(ctr.startupProbe);
}

/** Applies the API server's v1 defaults in place. */
export function applyApiDefaults(pod: V1Pod): void {
  if (!isObj(pod.spec)) return;
  const spec = pod.spec;
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.terminationGracePeriodSeconds ??= DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  spec.schedulerName ??= DEFAULT_SCHEDULER_NAME;
  spec.securityContext ??= {};
  spec.enableServiceLinks ??= true;
  if (Array.isArray(spec.containers)) spec.containers.forEach(defaultContainer);
  if (Array.isArray(spec.initContainers)) spec.initContainers.forEach(defaultContainer);
  if (Array.isArray(spec.volumes)) {
    for (const v of spec.volumes) {
      if (!isObj(v)) continue;
      const sources = Object.keys(v).filter((k) => k !== 'name');
      if (sources.length === 0) v.emptyDir = {};
      if (isObj(v.secret)) v.secret['defaultMode'] ??= DEFAULT_VOLUME_MODE;
      if (isObj(v.configMap)) v.configMap['defaultMode'] ??= DEFAULT_VOLUME_MODE;
      if (isObj(v.downwardAPI)) v.downwardAPI['defaultMode'] ??= DEFAULT_VOLUME_MODE;
      if (isObj(v.projected)) v.projected['defaultMode'] ??= DEFAULT_VOLUME_MODE;
      if (isObj(v.hostPath)) v.hostPath.type ??= '';
    }
  }
}
