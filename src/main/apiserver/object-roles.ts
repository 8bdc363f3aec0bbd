/**
 * Role interfaces for the node-level objects of cluster mode (the Node, its Lease, mirror pods,
 * events), each satisfied by {@link ObjectApi} (object-api.ts) over one ApiClient, and by
 * in-memory fakes in tests. Errors are ApiError (api-errors.ts). Objects travel in their JSON
 * wire form: only the fields this agent reads are typed.
 */
import type { RequestOptions } from './api-roles.js';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** What the agent keeps of its Node object. */
export interface NodeRef {
  name: string;
  uid: string;
  labels: Record<string, string>;
}

/** Node registration and status (heartbeat client). */
export interface NodeRegistry {
  /** POST /api/v1/nodes; ERR_API_CONFLICT when it exists (409 AlreadyExists). */
  createNode(node: Record<string, unknown>, opts?: RequestOptions): Promise<NodeRef>;
  getNode(name: string, opts?: RequestOptions): Promise<NodeRef>;
  /** Strategic-merge PATCH of the Node (metadata: labels). */
  patchNode(name: string, patch: Record<string, unknown>, opts?: RequestOptions): Promise<NodeRef>;
  /** Strategic-merge PATCH of nodes/NAME/status (conditions merge by type, addresses by type). */
  patchNodeStatus(name: string, status: Record<string, unknown>, opts?: RequestOptions): Promise<void>;
}

/** A coordination.k8s.io/v1 Lease as the server returned it (PUT back whole, with its resourceVersion). */
export interface LeaseObject {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string; uid?: string; ownerReferences?: OwnerReference[]; [k: string]: unknown };
  spec: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string; [k: string]: unknown };
}

/** The node lease (heartbeat client). */
export interface LeaseStore {
  getLease(namespace: string, name: string, opts?: RequestOptions): Promise<LeaseObject>;
  /** ERR_API_CONFLICT when it exists. */
  createLease(lease: LeaseObject, opts?: RequestOptions): Promise<LeaseObject>;
  /** PUT with the lease's resourceVersion: ERR_API_CONFLICT when someone else wrote it since. */
  updateLease(lease: LeaseObject, opts?: RequestOptions): Promise<LeaseObject>;
}

/** Mirror pods of static pods (main client). Deletion: PodDeleter (grace 0, UID precondition). */
export interface MirrorPodCreator {
  /** POST the pod; returns the UID the server gave it. ERR_API_CONFLICT when the name is taken. */
  createPod(pod: Record<string, unknown>, opts?: RequestOptions): Promise<{ uid: string }>;
}

/** Events (events client). */
export interface EventWriter {
  createEvent(namespace: string, event: Record<string, unknown>, opts?: RequestOptions): Promise<void>;
  /** Strategic-merge PATCH (count, lastTimestamp, message) of an aggregated event. */
  patchEvent(namespace: string, name: string, patch: Record<string, unknown>, opts?: RequestOptions): Promise<void>;
}
