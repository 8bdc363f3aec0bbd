/**
 * Admission seam: whether a new pod may run here, given the pods already admitted. The
 * implementation (src/admission/) applies the kubelet's max-pods and resource-fit predicates.
 */
import type { V1Pod } from '@kubernetes/client-node';

export type AdmitResult = { admit: true } | { admit: false; reason: string; message: string };

export interface PodAdmitter {
  admit(pod: V1Pod, activePods: readonly V1Pod[]): AdmitResult;
}
