/**
 * Admission seam: whether a new pod may run here, given the pods already admitted. The
 * implementation (src/main/admission/) applies the kubelet's max-pods and resource-fit predicates.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { ResourceAmounts } from '../../shared/resources/pod-requests.js';

export type AdmitResult = { admit: true } | { admit: false; reason: string; message: string };

/** The admitted, still active pods: their number and summed requests (kept incrementally). */
export interface ActiveUsage {
  count: number;
  used: Readonly<ResourceAmounts>;
}

export interface PodAdmitter {
  admit(pod: V1Pod, active: ActiveUsage): AdmitResult;
}
