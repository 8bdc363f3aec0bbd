/**
 * The API-server pod source: a documented seam only, not implemented yet.
 *
 * What it must do (pkg/kubelet/config/apiserver.go): list+watch pods with the field selector
 * `spec.nodeName=<nodeName>` and deliver the complete set of those pods as a SET on every change
 * (the kubelet feeds a reflector into an UndeltaStore, so this source, like the others, only
 * ever sends SETs), under source name "api". The first SET is sent after the initial list, even
 * when empty, so PodConfig.sourcesReady() can become true. API pods keep their own uid, name and
 * annotations (no static-pod conventions); graceful deletion arrives as a changed
 * deletionTimestamp, which the merger turns into DELETE.
 *
 * It would be built on @kubernetes/client-node's `ListWatch`/`makeInformer` with a kubeconfig.
 */
import type { PodSetSink, PodSource } from './pod-update.js';
import type { Clock } from '../clock/clock.js';
import type { Logger } from '../logging/logger.js';

export interface ApiserverSourceOptions {
  /** Path of the kubeconfig to reach the API server with (kubelet --kubeconfig). */
  kubeconfig: string;
  nodeName: string;
  sink: PodSetSink;
  clock: Clock;
  logger: Logger;
}

/** The factory an implementation will provide. Not implemented: the agent must not register an "api" source yet. */
export type CreateApiserverSource = (opts: ApiserverSourceOptions) => PodSource;
