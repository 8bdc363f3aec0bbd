/**
 * The preflight checks' API side (hollow-preflight.ts's PreflightApi) over the product's API
 * client: SelfSubjectAccessReview and a paged LIST of nodes, unthrottled (a handful of requests,
 * once), and the kubeconfig's client certificate read with the same loader the transport uses.
 */
import fs from 'node:fs';
import { ApiClient } from '../apiserver/api-client.js';
import { ApiError } from '../apiserver/api-errors.js';
import type { ApiTransport } from '../apiserver/api-transport.js';
import { TokenBucket } from '../apiserver/token-bucket.js';
import type { Clock } from '../../shared/clock/clock.js';
import type { AccessCheck, PreflightApi } from './hollow-preflight.js';

const TIMEOUT_MS = 30_000;
const PAGE = 500;
/** Bound on one page of nodes (500 Nodes of a few KiB each). */
const MAX_PAGE_BYTES = 64 * 1024 * 1024;

export function preflightApi(transport: ApiTransport, clock: Clock): PreflightApi {
  const client = new ApiClient({ transport, throttle: new TokenBucket({ qps: 0, burst: 1, clock }), clock, nodeName: 'shardlet-hollow', maxRetries: 2 });
  return {
    async allowed(a: AccessCheck): Promise<boolean> {
      const res = await client.send('create', 'selfsubjectaccessreviews', {
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { verb: a.verb, group: a.group, resource: a.resource, ...(a.subresource ? { subresource: a.subresource } : {}), ...(a.namespace ? { namespace: a.namespace } : {}) } },
        },
        timeoutMs: TIMEOUT_MS,
        maxBodyBytes: 1024 * 1024,
        parseBody: true,
      });
      const status = (res.body as { status?: { allowed?: unknown } } | undefined)?.status;
      return status?.allowed === true;
    },
    async nodeNames(): Promise<string[]> {
      const names: string[] = [];
      let cont = '';
      for (let page = 0; page < 10_000; page++) {
        const res = await client.send('list', 'nodes', {
          method: 'GET',
          path: '/api/v1/nodes',
          query: { limit: String(PAGE), ...(cont ? { continue: cont } : {}) },
          timeoutMs: TIMEOUT_MS,
          maxBodyBytes: MAX_PAGE_BYTES,
          parseBody: true,
        });
        const body = res.body as { items?: { metadata?: { name?: unknown } }[]; metadata?: { continue?: unknown } } | undefined;
        if (!Array.isArray(body?.items)) throw new ApiError('ERR_API_DECODE', 'GET /api/v1/nodes: not a NodeList');
        for (const n of body.items) if (typeof n?.metadata?.name === 'string') names.push(n.metadata.name);
        cont = typeof body.metadata?.continue === 'string' ? body.metadata.continue : '';
        if (cont === '') return names;
      }
      throw new ApiError('ERR_API_DECODE', 'GET /api/v1/nodes: too many pages');
    },
  };
}

/** The current user's client certificate (PEM) in a kubeconfig, or undefined (token, exec, none). */
export async function kubeconfigClientCert(kubeconfigPath: string): Promise<string | undefined> {
  const { KubeConfig } = await import('@kubernetes/client-node/dist/config.js');
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const user = kc.getCurrentUser();
  if (user?.certData) return Buffer.from(user.certData, 'base64').toString('utf8');
  if (user?.certFile) return fs.readFileSync(user.certFile, 'utf8');
  return undefined;
}
