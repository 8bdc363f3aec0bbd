/**
 * The kubelet's mapping of a request to authorization attributes
 * (pkg/kubelet/server/auth.go, nodeAuthorizerAttributesGetter): every path is `nodes/proxy` of
 * this node, except /stats/* → `nodes/stats`, /metrics* → `nodes/metrics`, /logs/* →
 * `nodes/log` and /spec/* → `nodes/spec`; the verb comes from the HTTP method. Note that
 * /containerLogs is `nodes/proxy` there too (only the node's /logs/ is `nodes/log`).
 */
import type { RequestAttributes, UserInfo } from './auth-types.js';

const VERB_OF_METHOD: Readonly<Record<string, string>> = Object.freeze({ POST: 'create', GET: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' });

/** Go's isSubpath: `sub` is `path` (trailing slash ignored) or below it. */
export function isSubpath(sub: string, path: string): boolean {
  const p = path.endsWith('/') ? path.slice(0, -1) : path;
  return sub === p || (sub.startsWith(p) && sub[p.length] === '/');
}

export function subresourceOf(path: string): string {
  if (isSubpath(path, '/stats/')) return 'stats';
  if (isSubpath(path, '/metrics')) return 'metrics';
  if (isSubpath(path, '/logs/')) return 'log';
  if (isSubpath(path, '/spec/')) return 'spec';
  return 'proxy';
}

export function requestAttributes(user: UserInfo, method: string, path: string, nodeName: string): RequestAttributes {
  return {
    user,
    // The kubelet leaves the verb empty for other methods; the authorizer then denies.
    verb: VERB_OF_METHOD[method] ?? '',
    namespace: '',
    apiGroup: '',
    apiVersion: 'v1',
    resource: 'nodes',
    subresource: subresourceOf(path),
    name: nodeName,
    path,
  };
}
