/**
 * Where the kubelet (and so shardlet) puts container logs, given to the runtime at sandbox and
 * container creation (the runtime writes the file at `<logDirectory>/<logPath>`):
 *
 *   <podLogsDir>/<namespace>_<name>_<uid>/<containerName>/<restartCount>.log
 *
 * (pkg/kubelet/kuberuntime/helpers.go BuildPodLogsDirectory, BuildContainerLogsDirectory /
 * buildContainerLogsPath). One copy of the layout: the pod workers build it from the pod spec;
 * the main thread's log rotation rebuilds it from a listed container's kubelet labels.
 */
import path from 'node:path';
import { isPathSegment } from '../paths/path-segment.js';
import { ContainerRestartCountLabel, KubernetesContainerNameLabel, KubernetesPodNameLabel, KubernetesPodNamespaceLabel, KubernetesPodUIDLabel } from './kubelet-labels.js';

/** `<podLogsDir>/<namespace>_<name>_<uid>` (no trailing slash; a root of '/' stays single). */
export function podLogsDirectoryOf(podLogsDir: string, namespace: string, name: string, uid: string): string {
  return `${podLogsDir.replace(/\/+$/, '') || '/'}/${namespace}_${name}_${uid}`.replace(/^\/\//, '/');
}

/** `<containerName>/<restartCount>.log`, relative to the pod's log directory. */
export function containerLogFileOf(containerName: string, restartCount: number): string {
  return path.join(containerName, `${restartCount}.log`);
}

/**
 * The log file of a container listed by the runtime, from the kubelet labels and annotation
 * shardlet put on it; null when any is missing or could climb out of `podLogsDir` (a container
 * some other client created; labels are runtime data, never trusted as paths). The caller
 * still confirms the file exists before relying on it.
 */
export function listedContainerLogPath(podLogsDir: string, labels: Readonly<Record<string, string>> | undefined, annotations: Readonly<Record<string, string>> | undefined): string | null {
  const restarts = annotations?.[ContainerRestartCountLabel];
  if (restarts === undefined || !/^\d{1,9}$/.test(restarts)) return null;
  return containerLogPathOf(podLogsDir, labels?.[KubernetesPodNamespaceLabel], labels?.[KubernetesPodNameLabel], labels?.[KubernetesPodUIDLabel], labels?.[KubernetesContainerNameLabel], Number(restarts));
}

/**
 * The log file of a container instance from its parts as runtime data tells them (a relist's
 * pod status); null when any part could climb out of `podLogsDir` or is missing.
 */
export function containerLogPathOf(podLogsDir: string, namespace: string | undefined, name: string | undefined, uid: string | undefined, container: string | undefined, restartCount: number): string | null {
  if (!isPathSegment(namespace) || !isPathSegment(name) || !isPathSegment(uid) || !isPathSegment(container)) return null;
  if (!Number.isSafeInteger(restartCount) || restartCount < 0) return null;
  return path.join(podLogsDirectoryOf(podLogsDir, namespace, name, uid), containerLogFileOf(container, restartCount));
}
