/**
 * A pod's hostname and domain (the kubelet's GeneratePodHostNameAndDomain, kubelet_pods.go) and
 * the name its UTS namespace gets (util.GetNodenameForKernel, which honours setHostnameAsFQDN).
 *
 *   hostname = spec.hostname or the pod name, cut to 63 characters without a trailing '-'/'.'
 *   domain   = `<subdomain>.<namespace>.svc.<cluster-domain>` when spec.subdomain is set
 *   kernel   = `<hostname>.<domain>` with setHostnameAsFQDN and a domain (at most 64
 *              characters, else the sandbox cannot be configured), else hostname
 *
 * Admission validates hostname and subdomain as DNS labels; the checks here are the kubelet's
 * second line for a pod that reached the worker another way.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { podName, podNamespace } from './pod-spec.js';

/** The kernel's HOST_NAME_MAX. */
export const HOSTNAME_MAX = 63;
/** The kernel's nodename field: 64 characters plus NUL. */
export const FQDN_MAX = 64;
const DNS1123_LABEL_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export type HostnameResult = { ok: true; hostname: string; domain: string } | { ok: false; message: string };

function labelProblem(v: string): string | undefined {
  if (v.length > HOSTNAME_MAX) return `must be no more than ${HOSTNAME_MAX} characters`;
  if (!DNS1123_LABEL_RE.test(v)) return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
  return undefined;
}

/** truncatePodHostnameIfNeeded. */
export function truncateHostname(h: string): string {
  if (h.length <= HOSTNAME_MAX) return h;
  return h.slice(0, HOSTNAME_MAX).replace(/[-.]+$/, '');
}

export function podHostnameAndDomain(pod: V1Pod, clusterDomain: string): HostnameResult {
  let hostname = podName(pod);
  const specHostname = pod.spec?.hostname ?? '';
  if (specHostname !== '') {
    const bad = labelProblem(specHostname);
    if (bad !== undefined) return { ok: false, message: `pod Hostname ${JSON.stringify(specHostname.slice(0, 256))} is not a valid DNS label: ${bad}` };
    hostname = specHostname;
  }
  hostname = truncateHostname(hostname);
  if (hostname === '') return { ok: false, message: `hostname for pod ${JSON.stringify(podName(pod))} was invalid` };
  let domain = '';
  const sub = pod.spec?.subdomain ?? '';
  if (sub !== '') {
    const bad = labelProblem(sub);
    if (bad !== undefined) return { ok: false, message: `pod Subdomain ${JSON.stringify(sub.slice(0, 256))} is not a valid DNS label: ${bad}` };
    domain = `${sub}.${podNamespace(pod)}.svc.${clusterDomain}`;
  }
  return { ok: true, hostname, domain };
}

export type KernelNameResult = { ok: true; name: string } | { ok: false; message: string };

/** GetNodenameForKernel. */
export function nodenameForKernel(hostname: string, domain: string, setHostnameAsFQDN: boolean | undefined): KernelNameResult {
  if (domain === '' || setHostnameAsFQDN !== true) return { ok: true, name: hostname };
  const fqdn = `${hostname}.${domain}`;
  if (fqdn.length > FQDN_MAX) {
    return { ok: false, message: `failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (${FQDN_MAX} characters is the max, ${fqdn.length} characters requested)` };
  }
  return { ok: true, name: fqdn };
}
