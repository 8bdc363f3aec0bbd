/** A PLEG event as the sync loop consumes it (the kubelet's PodLifecycleEvent). */
export type PlegEventType = 'ContainerStarted' | 'ContainerDied' | 'ContainerRemoved' | 'ContainerChanged' | 'PodSync';

export interface PlegEvent {
  podUID: string;
  type: PlegEventType;
  /** Container id for container events. */
  data?: string;
}
