/**
 * The Node object this agent registers and the status it reports (the kubelet's initialNode and
 * setNodeStatus): labels, taints, capacity/allocatable, addresses, daemon endpoints, nodeInfo,
 * images and conditions. Pure builders plus the change test the status manager uses.
 *
 * Change detection (kubelet nodeStatusHasChanged): two statuses differ when anything but the
 * conditions' lastHeartbeatTime differs.
 */
import { canonicalJson } from '../../shared/manifest/static-pod.js';
import type { NodeCondition } from './node-conditions.js';
import type { NodeSystemInfo } from './node-info.js';
import type { Taint } from './node-labels.js';
import type { NodeResources } from './node-resources.js';

/** The kubelet's nodeStatusMaxImages. */
export const MAX_NODE_IMAGES = 50;

export interface NodeAddress {
  type: 'InternalIP' | 'ExternalIP' | 'Hostname';
  address: string;
}

export interface NodeImage {
  names: string[];
  sizeBytes: number;
}

/** What does not change while the agent runs. */
export interface NodeStaticStatus {
  resources: NodeResources;
  addresses: NodeAddress[];
  kubeletPort: number;
  nodeInfo: NodeSystemInfo;
}

export interface NodeStatus {
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  conditions: NodeCondition[];
  addresses: NodeAddress[];
  daemonEndpoints: { kubeletEndpoint: { Port: number } };
  nodeInfo: NodeSystemInfo;
  images: NodeImage[];
}

/** CRI images → status.images: the largest first, at most 50, names = digests then tags. */
export function nodeImages(images: ReadonlyArray<{ repoTags?: readonly string[]; repoDigests?: readonly string[]; size?: number | string }>): NodeImage[] {
  const out: NodeImage[] = [];
  for (const im of images) {
    const names = [...(im.repoDigests ?? []), ...(im.repoTags ?? [])].filter((n) => typeof n === 'string' && n !== '' && n.length <= 1024);
    if (names.length === 0) continue;
    const size = Number(im.size ?? 0);
    out.push({ names, sizeBytes: Number.isSafeInteger(size) && size >= 0 ? size : 0 });
  }
  out.sort((a, b) => b.sizeBytes - a.sizeBytes);
  return out.slice(0, MAX_NODE_IMAGES);
}

export function buildNodeStatus(s: NodeStaticStatus, conditions: NodeCondition[], images: NodeImage[]): NodeStatus {
  return {
    capacity: s.resources.capacity,
    allocatable: s.resources.allocatable,
    conditions,
    addresses: s.addresses,
    daemonEndpoints: { kubeletEndpoint: { Port: s.kubeletPort } },
    nodeInfo: s.nodeInfo,
    images,
  };
}

/** The Node to POST at registration. */
export function buildNode(name: string, labels: Record<string, string>, taints: readonly Taint[], status: NodeStatus): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels },
    spec: taints.length > 0 ? { taints } : {},
    status,
  };
}

function withoutHeartbeats(s: NodeStatus): unknown {
  return { ...s, conditions: s.conditions.map(({ lastHeartbeatTime: _hb, ...rest }) => rest) };
}

/** Whether `next` differs from `prev` in anything but heartbeat times. */
export function nodeStatusChanged(prev: NodeStatus | undefined, next: NodeStatus): boolean {
  return prev === undefined || canonicalJson(withoutHeartbeats(prev)) !== canonicalJson(withoutHeartbeats(next));
}

/** Names of the top-level fields (and condition types) that differ, for logs. */
export function changedNodeFields(prev: NodeStatus | undefined, next: NodeStatus): string[] {
  if (prev === undefined) return ['*'];
  const out: string[] = [];
  for (const k of Object.keys(next) as (keyof NodeStatus)[]) {
    if (k === 'conditions') {
      for (const c of next.conditions) {
        const p = prev.conditions.find((x) => x.type === c.type);
        if (p === undefined || p.status !== c.status || p.reason !== c.reason || p.message !== c.message) out.push(`conditions[${c.type}]`);
      }
    } else if (canonicalJson(prev[k]) !== canonicalJson(next[k])) out.push(k);
  }
  return out;
}
