/**
 * The `sim.shardlet.io/*` annotations: behaviour the simulated runtime cannot infer from a
 * command. Looked up, first hit wins, in:
 *   1. the container config's annotations: `sim.shardlet.io/<key>`;
 *   2. the sandbox's (pod's) annotations, per container: `sim.shardlet.io/<key>.<containerName>`;
 *   3. the sandbox's (pod's) annotations: `sim.shardlet.io/<key>`.
 * (The kubelet copies pod annotations to the sandbox config and to the PullImage ImageSpec, not
 * to container configs — so 2 and 3 make them usable from a Pod manifest.) For PullImage the
 * sources are the ImageSpec's annotations, then the request's sandbox config.
 *
 * Keys:
 *   pull-delay-ms   PullImage takes this long (clock time) before answering.
 *   pull-fail       "true": PullImage fails UNKNOWN (registry error).
 *   start-fail      "true": StartContainer fails UNKNOWN; the container is EXITED 128 "StartError".
 *   crash-after-ms  the process exits this long after start with `exit-code` (default 1),
 *                   unless its command ended it earlier.
 *   exit-code       see crash-after-ms (alone it does nothing).
 *   oom-after-ms    the process is OOM-killed this long after start: exit 137, reason "OOMKilled".
 *   ignore-sigterm  "true": SIGTERM is ignored; StopContainer kills after its timeout (137).
 *   log-lines-per-second  the process writes this many numbered stdout lines per second while
 *                   it runs (sim-log-chatter.ts); `log-line-bytes` sets their size (default 100).
 *   writable-layer-bytes  the container's writable layer size, reported in ContainerStats and
 *                   ImageFsInfo's containerFilesystems (sim-image-fs.ts; default 4096).
 *   memory-working-set-bytes  the container's memory working set, reported in ContainerStats
 *                   and summed in PodSandboxStats (sim-stats.ts; default 1–8 MiB from its id).
 * In-process tests and the bench can also set both usages on a live container
 * (SimulatedRuntime.setContainerUsage), which wins over the annotations.
 */
import type { StringMap } from '../shared/cri/cri-types.js';

export const SIM_ANNOTATION_PREFIX = 'sim.shardlet.io/';

export type SimAnnotationKey =
  | 'pull-delay-ms'
  | 'pull-fail'
  | 'start-fail'
  | 'crash-after-ms'
  | 'exit-code'
  | 'oom-after-ms'
  | 'ignore-sigterm'
  | 'log-lines-per-second'
  | 'log-line-bytes'
  | 'writable-layer-bytes'
  | 'memory-working-set-bytes';

export interface AnnotationSources {
  own: StringMap | undefined;
  pod: StringMap | undefined;
  containerName?: string;
}

export function simAnnotation(src: AnnotationSources, key: SimAnnotationKey): string | undefined {
  const k = SIM_ANNOTATION_PREFIX + key;
  return src.own?.[k] ?? (src.containerName !== undefined ? src.pod?.[`${k}.${src.containerName}`] : undefined) ?? src.pod?.[k];
}

export function simFlag(src: AnnotationSources, key: SimAnnotationKey): boolean {
  const v = simAnnotation(src, key);
  return v === 'true' || v === '1' || v === 'yes';
}

/** A non-negative number annotation, or undefined when absent or malformed. */
export function simNumber(src: AnnotationSources, key: SimAnnotationKey): number | undefined {
  const v = simAnnotation(src, key);
  if (v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}
