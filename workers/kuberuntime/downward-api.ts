/**
 * Downward API values (the kubelet's fieldpath.ExtractFieldPathAsString and
 * resource.ExtractResourceValueByContainerName), shared by env `valueFrom` (container-env.ts)
 * and downwardAPI volume files (workers/volumes/payload-*.ts): one copy.
 *
 * - metadata.labels / metadata.annotations (whole maps, volumes only) are formatted as the
 *   kubelet's FormatMap: `key="value"` lines sorted by key, values quoted.
 * - resourceFieldRef: `limits.cpu|memory|ephemeral-storage`, `requests.cpu|memory|ephemeral-storage`
 *   of the named container, divided by `divisor` (unset or zero: 1) and rounded up; an unset limit
 *   reads as the node's allocatable, which shardlet takes as all cores and all memory (as its
 *   admission does by default; --node-allocatable is not known on worker threads).
 */
import os from 'node:os';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { parseApproximate } from '../../src/shared/resources/quantity.js';
import { podName, podNamespace, podUID } from './pod-spec.js';

export interface FieldContext {
  nodeName: string;
  hostIP: string;
  /** The sandbox's IPs, primary first. */
  podIPs: readonly string[];
}

/** The kubelet's FormatMap. */
export function formatMap(m: Readonly<Record<string, string>> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m?.[k] ?? '')}`)
    .join('\n');
}

/** A fieldRef's value, or undefined when the path is not supported. */
export function podFieldValue(pod: V1Pod, fieldPath: string, ctx: FieldContext): string | undefined {
  const mapKey = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (mapKey) {
    const map = mapKey[1] === 'labels' ? pod.metadata?.labels : pod.metadata?.annotations;
    return map?.[mapKey[2] ?? ''] ?? '';
  }
  switch (fieldPath) {
    case 'metadata.name': return podName(pod);
    case 'metadata.namespace': return podNamespace(pod);
    case 'metadata.uid': return podUID(pod);
    case 'metadata.labels': return formatMap(pod.metadata?.labels);
    case 'metadata.annotations': return formatMap(pod.metadata?.annotations);
    case 'spec.nodeName': return pod.spec?.nodeName ?? ctx.nodeName;
    case 'spec.serviceAccountName': return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP': return ctx.hostIP;
    case 'status.hostIPs': return ctx.hostIP;
    case 'status.podIP': return ctx.podIPs[0] ?? '';
    case 'status.podIPs': return ctx.podIPs.join(',');
    default: return undefined;
  }
}

const RESOURCES = new Set(['limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage']);

/** Node allocatable for unset limits (see the module comment). */
function allocatable(resource: string): number {
  if (resource === 'cpu') return os.cpus().length;
  if (resource === 'memory') return os.totalmem();
  return 0;
}

export type ResourceValue = { ok: true; value: string } | { ok: false; message: string };

/** The kubelet's ExtractContainerResourceValue for `container` (cpu divisor default 1 core). */
export function resourceFieldValue(container: V1Container | undefined, resource: string, divisor: string | undefined): ResourceValue {
  if (!container) return { ok: false, message: 'container not found' };
  if (!RESOURCES.has(resource)) return { ok: false, message: `unsupported container resource : ${resource.slice(0, 64)}` };
  const [kind, name] = resource.split('.') as ['limits' | 'requests', string];
  const parsed = parseApproximate(divisor === undefined || divisor === '' ? '1' : divisor);
  if (parsed === undefined || parsed < 0) return { ok: false, message: `invalid divisor ${JSON.stringify(String(divisor).slice(0, 32))}` };
  // The kubelet's ExtractContainerResourceValue: a zero divisor (what the API server defaults an
  // unset one to, "0") means 1.
  const div = parsed === 0 ? 1 : parsed;
  const set = (kind === 'limits' ? container.resources?.limits : container.resources?.requests)?.[name];
  let v = parseApproximate(set);
  if (v === undefined) v = kind === 'limits' ? allocatable(name) : 0;
  // The kubelet rounds up (ConvertResourceCPUToString: ceil(milli / divisor-milli)).
  return { ok: true, value: String(Math.ceil(Math.round((v / div) * 1e6) / 1e6)) };
}
