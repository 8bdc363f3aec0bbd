/**
 * Checks made before any hollow node is registered, so bad input fails with one clear error and
 * leaves nothing behind in the cluster:
 *
 *  1. The kubeconfig's identity is not a node identity. A client certificate in the group
 *     `system:nodes` (CN=system:node:NAME) is what a kubelet has; NodeRestriction lets it create
 *     and modify only its own Node and Lease, so it cannot register N nodes. Hollow mode's "node
 *     credentials" are therefore an identity that may act for any node: `system:masters`, or one
 *     RBAC grants the verbs below.
 *  2. The identity may do what every node does (SelfSubjectAccessReview, per verb/resource):
 *     create/get/patch nodes and nodes/status, create/get/update leases in kube-node-lease,
 *     list/watch pods, patch pods/status, delete pods, create/patch events, list/watch services,
 *     create serviceaccounts/token. A denied one is named in the error.
 *  3. No Node with one of the hollow names exists (one paged LIST of nodes): a collision is an
 *     error naming the first few, not a takeover of someone else's node.
 */
import { X509Certificate } from 'node:crypto';

export interface AccessCheck {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
}

/** The seam the checks run through (the API server in the product, a fake in tests). */
export interface PreflightApi {
  /** SelfSubjectAccessReview: whether the caller may do `a`. */
  allowed(a: AccessCheck): Promise<boolean>;
  /** Names of every Node in the cluster. */
  nodeNames(): Promise<string[]>;
}

export const NODE_ACCESS: readonly AccessCheck[] = Object.freeze([
  { verb: 'create', group: '', resource: 'nodes' },
  { verb: 'get', group: '', resource: 'nodes' },
  { verb: 'patch', group: '', resource: 'nodes' },
  { verb: 'patch', group: '', resource: 'nodes', subresource: 'status' },
  { verb: 'create', group: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-node-lease' },
  { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-node-lease' },
  { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-node-lease' },
  { verb: 'list', group: '', resource: 'pods' },
  { verb: 'watch', group: '', resource: 'pods' },
  { verb: 'patch', group: '', resource: 'pods', subresource: 'status' },
  { verb: 'delete', group: '', resource: 'pods' },
  { verb: 'create', group: '', resource: 'events' },
  { verb: 'patch', group: '', resource: 'events' },
  { verb: 'list', group: '', resource: 'services' },
  { verb: 'watch', group: '', resource: 'services' },
]);

export class HollowPreflightError extends Error {
  override readonly name = 'HollowPreflightError';
  readonly code: 'ERR_HOLLOW_NODE_IDENTITY' | 'ERR_HOLLOW_FORBIDDEN' | 'ERR_HOLLOW_NAME_TAKEN';
  constructor(code: HollowPreflightError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

/** The node name a client certificate (PEM) authenticates as, if it is a node identity. */
export function nodeIdentityOf(certPem: string | Buffer): string | undefined {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    return undefined;
  }
  const fields = cert.subject.split('\n');
  const cn = fields.find((f) => f.startsWith('CN='))?.slice(3) ?? '';
  const isNodeGroup = fields.some((f) => f === 'O=system:nodes');
  if (cn.startsWith('system:node:') || isNodeGroup) return cn || '(unnamed)';
  return undefined;
}

function describe(a: AccessCheck): string {
  const res = `${a.resource}${a.subresource ? `/${a.subresource}` : ''}${a.group ? `.${a.group}` : ''}`;
  return `${a.verb} ${res}${a.namespace ? ` in ${a.namespace}` : ''}`;
}

export interface PreflightInput {
  kubeconfig: string;
  /** The kubeconfig's client certificate (PEM), when it has one. */
  clientCert: string | Buffer | undefined;
  names: readonly string[];
  api: PreflightApi;
}

/** Runs the three checks in order; resolves when all pass, else throws HollowPreflightError. */
export async function hollowPreflight(i: PreflightInput): Promise<void> {
  const identity = i.clientCert === undefined ? undefined : nodeIdentityOf(i.clientCert);
  if (identity !== undefined) {
    throw new HollowPreflightError(
      'ERR_HOLLOW_NODE_IDENTITY',
      `kubeconfig ${i.kubeconfig} authenticates as the node ${identity} (group system:nodes): NodeRestriction lets a node identity register only its own Node and Lease, and hollow mode registers ${i.names.length}. Use credentials that may act for any node (e.g. O=system:masters, or RBAC granting: ${NODE_ACCESS.map(describe).join(', ')})`,
    );
  }
  const results = await Promise.all(NODE_ACCESS.map(async (a) => ({ a, ok: await i.api.allowed(a) })));
  const denied = results.filter((r) => !r.ok).map((r) => describe(r.a));
  if (denied.length > 0) {
    throw new HollowPreflightError('ERR_HOLLOW_FORBIDDEN', `kubeconfig ${i.kubeconfig} may not do what every node does: denied ${denied.join(', ')}`);
  }
  const existing = new Set(await i.api.nodeNames());
  const taken = i.names.filter((n) => existing.has(n));
  if (taken.length > 0) {
    const shown = taken.slice(0, 5).join(', ');
    throw new HollowPreflightError('ERR_HOLLOW_NAME_TAKEN', `${taken.length} hollow node name(s) already exist as Nodes: ${shown}${taken.length > 5 ? ', ...' : ''}; pick another --node-name-prefix or delete those Nodes`);
  }
}
