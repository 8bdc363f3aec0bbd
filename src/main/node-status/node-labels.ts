/**
 * `--node-labels` and `--register-with-taints`, validated once at config time as the kubelet does
 * (cmd/kubelet/app/options.go: labels in the kubernetes.io / k8s.io namespaces must be on the
 * NodeRestriction allow-list, else the kubelet refuses to start), and the default labels
 * (pkg/kubelet/kubelet_node_status.go initialNode: hostname, os, arch).
 */
import os from 'node:os';

export class NodeLabelError extends Error {
  override readonly name = 'NodeLabelError';
  readonly code = 'ERR_NODE_LABELS';
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

/** kubelet.kubernetes.io/ and node.kubernetes.io/ prefixes, and these exact keys (1.20 allow-list). */
const ALLOWED_KUBE_LABELS = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/instance-type',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.kubernetes.io/zone',
  'failure-domain.kubernetes.io/region',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'node.kubernetes.io/instance-type',
]);
const ALLOWED_KUBE_PREFIXES = ['kubelet.kubernetes.io/', 'node.kubernetes.io/'];

const NAME_RE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const PREFIX_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A qualified name (optional DNS prefix "/" name ≤ 63), as label and taint keys must be. */
function validKey(key: string): boolean {
  const slash = key.indexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !PREFIX_RE.test(prefix))) return false;
  return name.length > 0 && name.length <= 63 && NAME_RE.test(name);
}

function validValue(v: string): boolean {
  return v === '' || (v.length <= 63 && NAME_RE.test(v));
}

function isKubeNamespace(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return false;
  const prefix = key.slice(0, slash);
  return prefix === 'kubernetes.io' || prefix.endsWith('.kubernetes.io') || prefix === 'k8s.io' || prefix.endsWith('.k8s.io');
}

function allowedKubeLabel(key: string): boolean {
  return ALLOWED_KUBE_LABELS.has(key) || ALLOWED_KUBE_PREFIXES.some((p) => key.startsWith(p));
}

/** Checks `--node-labels`; throws NodeLabelError naming the offending label. */
export function validateNodeLabels(labels: Readonly<Record<string, string>>): void {
  const refused: string[] = [];
  for (const [k, v] of Object.entries(labels)) {
    if (!validKey(k)) throw new NodeLabelError(`--node-labels: invalid label key ${JSON.stringify(k)}`);
    if (!validValue(v)) throw new NodeLabelError(`--node-labels: invalid value ${JSON.stringify(v)} for label ${k}`);
    if (isKubeNamespace(k) && !allowedKubeLabel(k)) refused.push(k);
  }
  if (refused.length > 0) {
    throw new NodeLabelError(`--node-labels: unknown 'kubernetes.io' or 'k8s.io' labels specified (NodeRestriction would refuse them): ${refused.sort().join(', ')}`);
  }
}

/** Parses `key[=value]:Effect,...` (kubelet --register-with-taints). */
export function parseTaints(flag: string): Taint[] {
  const out: Taint[] = [];
  for (const part of flag.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const colon = part.lastIndexOf(':');
    if (colon < 0) throw new NodeLabelError(`--register-with-taints: ${JSON.stringify(part)}: expected key[=value]:effect`);
    const effect = part.slice(colon + 1);
    if (effect !== 'NoSchedule' && effect !== 'PreferNoSchedule' && effect !== 'NoExecute') {
      throw new NodeLabelError(`--register-with-taints: ${JSON.stringify(part)}: effect must be NoSchedule, PreferNoSchedule or NoExecute`);
    }
    const kv = part.slice(0, colon);
    const eq = kv.indexOf('=');
    const key = eq < 0 ? kv : kv.slice(0, eq);
    const value = eq < 0 ? undefined : kv.slice(eq + 1);
    if (!validKey(key)) throw new NodeLabelError(`--register-with-taints: invalid key ${JSON.stringify(key)}`);
    if (value !== undefined && !validValue(value)) throw new NodeLabelError(`--register-with-taints: invalid value ${JSON.stringify(value)}`);
    if (out.some((t) => t.key === key && t.effect === effect)) throw new NodeLabelError(`--register-with-taints: duplicate taint ${key}:${effect}`);
    out.push({ key, ...(value !== undefined && value !== '' ? { value } : {}), effect });
  }
  return out;
}

/** GOARCH for Node's os.arch(). */
export function goArch(arch: string = os.arch()): string {
  const map: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };
  return map[arch] ?? arch;
}

/** kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch (and the beta twins), then --node-labels. */
export function nodeLabels(hostname: string, extra: Readonly<Record<string, string>>): Record<string, string> {
  const arch = goArch();
  return {
    'beta.kubernetes.io/arch': arch,
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': arch,
    'kubernetes.io/hostname': hostname,
    'kubernetes.io/os': 'linux',
    ...extra,
  };
}
