/**
 * The node-level object requests of cluster mode (Node, Lease, mirror pods, events) on top of one
 * {@link ApiClient}: each instance inherits that client's throttle, retries and request counting.
 * The agent builds one over the unthrottled heartbeat client (Node and Lease), one over the main
 * client (mirror pods) and one over the events client. Answers are decoded here, once: a body
 * that lacks what the caller needs is ERR_API_DECODE.
 */
import { ApiError } from './api-errors.js';
import type { ApiClient } from './api-client.js';
import type { RequestOptions } from './api-roles.js';
import type { ApiRequest } from './api-transport.js';
import type { EventWriter, LeaseObject, LeaseStore, MirrorPodCreator, NodeRef, NodeRegistry } from './object-roles.js';

const STRATEGIC_MERGE = 'application/strategic-merge-patch+json';
/** Bound on a Node/Lease/Pod answer (a Node with 50 images is a few tens of KiB). */
const MAX_OBJECT_BYTES = 4 * 1024 * 1024;

const seg = encodeURIComponent;

function nodeRefOf(body: unknown, what: string): NodeRef {
  const m = (body as { metadata?: { name?: unknown; uid?: unknown; labels?: unknown } } | undefined)?.metadata;
  if (typeof m?.name !== 'string' || typeof m.uid !== 'string' || m.uid === '') throw new ApiError('ERR_API_DECODE', `${what}: not a Node with metadata.uid`);
  const labels: Record<string, string> = {};
  if (typeof m.labels === 'object' && m.labels !== null) for (const [k, v] of Object.entries(m.labels)) if (typeof v === 'string') labels[k] = v;
  return { name: m.name, uid: m.uid, labels };
}

function leaseOf(body: unknown, what: string): LeaseObject {
  const b = body as Partial<LeaseObject> | undefined;
  if (typeof b?.metadata?.name !== 'string' || typeof b.metadata.namespace !== 'string' || typeof b.metadata.resourceVersion !== 'string') {
    throw new ApiError('ERR_API_DECODE', `${what}: not a Lease with metadata.resourceVersion`);
  }
  return { ...(b as LeaseObject), apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', spec: typeof b.spec === 'object' && b.spec !== null ? b.spec : {} };
}

export class ObjectApi implements NodeRegistry, LeaseStore, MirrorPodCreator, EventWriter {
  readonly #c: ApiClient;
  readonly #timeoutMs: number;

  constructor(client: ApiClient, opts: { requestTimeoutMs?: number } = {}) {
    this.#c = client;
    this.#timeoutMs = opts.requestTimeoutMs ?? 30_000;
  }

  #req(method: ApiRequest['method'], path: string, body: unknown, opts: RequestOptions, extra: Partial<ApiRequest> = {}): ApiRequest {
    return {
      method,
      path,
      ...(body !== undefined ? { body } : {}),
      timeoutMs: this.#timeoutMs,
      maxBodyBytes: MAX_OBJECT_BYTES,
      parseBody: true,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...extra,
    };
  }

  async createNode(node: Record<string, unknown>, opts: RequestOptions = {}): Promise<NodeRef> {
    const res = await this.#c.send('create', 'nodes', this.#req('POST', '/api/v1/nodes', node, opts), opts);
    return nodeRefOf(res.body, 'create node');
  }

  async getNode(name: string, opts: RequestOptions = {}): Promise<NodeRef> {
    const res = await this.#c.send('get', 'nodes', this.#req('GET', `/api/v1/nodes/${seg(name)}`, undefined, opts), opts);
    return nodeRefOf(res.body, 'get node');
  }

  async patchNode(name: string, patch: Record<string, unknown>, opts: RequestOptions = {}): Promise<NodeRef> {
    const res = await this.#c.send('patch', 'nodes', this.#req('PATCH', `/api/v1/nodes/${seg(name)}`, patch, opts, { contentType: STRATEGIC_MERGE }), opts);
    return nodeRefOf(res.body, 'patch node');
  }

  async patchNodeStatus(name: string, status: Record<string, unknown>, opts: RequestOptions = {}): Promise<void> {
    await this.#c.send('patch', 'nodes/status', this.#req('PATCH', `/api/v1/nodes/${seg(name)}/status`, { status }, opts, { contentType: STRATEGIC_MERGE, parseBody: false }), opts);
  }

  async getLease(namespace: string, name: string, opts: RequestOptions = {}): Promise<LeaseObject> {
    const res = await this.#c.send('get', 'leases', this.#req('GET', `/apis/coordination.k8s.io/v1/namespaces/${seg(namespace)}/leases/${seg(name)}`, undefined, opts), opts);
    return leaseOf(res.body, 'get lease');
  }

  async createLease(lease: LeaseObject, opts: RequestOptions = {}): Promise<LeaseObject> {
    const res = await this.#c.send('create', 'leases', this.#req('POST', `/apis/coordination.k8s.io/v1/namespaces/${seg(lease.metadata.namespace)}/leases`, lease, opts), opts);
    return leaseOf(res.body, 'create lease');
  }

  async updateLease(lease: LeaseObject, opts: RequestOptions = {}): Promise<LeaseObject> {
    const path = `/apis/coordination.k8s.io/v1/namespaces/${seg(lease.metadata.namespace)}/leases/${seg(lease.metadata.name)}`;
    const res = await this.#c.send('update', 'leases', this.#req('PUT', path, lease, opts), opts);
    return leaseOf(res.body, 'update lease');
  }

  async createPod(pod: Record<string, unknown>, opts: RequestOptions = {}): Promise<{ uid: string }> {
    const ns = (pod['metadata'] as { namespace?: unknown } | undefined)?.namespace;
    if (typeof ns !== 'string' || ns === '') throw new TypeError('createPod: metadata.namespace is required');
    const res = await this.#c.send('create', 'pods', this.#req('POST', `/api/v1/namespaces/${seg(ns)}/pods`, pod, opts), opts);
    const uid = (res.body as { metadata?: { uid?: unknown } } | undefined)?.metadata?.uid;
    if (typeof uid !== 'string' || uid === '') throw new ApiError('ERR_API_DECODE', 'create pod: no metadata.uid in the answer');
    return { uid };
  }

  async createEvent(namespace: string, event: Record<string, unknown>, opts: RequestOptions = {}): Promise<void> {
    await this.#c.send('create', 'events', this.#req('POST', `/api/v1/namespaces/${seg(namespace)}/events`, event, opts, { parseBody: false }), opts);
  }

  async patchEvent(namespace: string, name: string, patch: Record<string, unknown>, opts: RequestOptions = {}): Promise<void> {
    await this.#c.send('patch', 'events', this.#req('PATCH', `/api/v1/namespaces/${seg(namespace)}/events/${seg(name)}`, patch, opts, { contentType: STRATEGIC_MERGE, parseBody: false }), opts);
  }
}
