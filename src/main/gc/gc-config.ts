/**
 * The garbage collection settings: the kubelet's container GC policy (kubecontainer.GCPolicy,
 * from its flags --minimum-container-ttl-duration, --maximum-dead-containers-per-container,
 * --maximum-dead-containers) and image GC policy (images.ImageGCPolicy, from
 * --image-gc-high-threshold, --image-gc-low-threshold, --minimum-image-ttl-duration,
 * --image-maximum-gc-age), with the
 * kubelet's defaults and its validation messages (pkg/kubelet/apis/config/validation and
 * NewImageGCManager).
 *
 * The flag table and config-file keys live here and are spread into agent-config.ts's, so the
 * agent's configuration stays one table. Config-file keys are the KubeletConfiguration fields
 * where the kubelet has one (imageGCHighThresholdPercent, imageGCLowThresholdPercent,
 * imageMinimumGCAge); the three container GC settings are flags only in the kubelet, so their
 * keys are the flags in camelCase.
 */
import { formatGoDuration } from '../../shared/clock/go-duration.js';

export interface GcConfig {
  /** Dead containers younger than this (since creation) are never removed (ms; 0 = any age). */
  minimumContainerTTLMs: number;
  /** Dead instances kept per (pod, container name); < 0 = no limit (kubelet default 1). */
  maxDeadContainersPerContainer: number;
  /** Dead containers kept on the node in all; < 0 = no limit (kubelet default -1). */
  maxDeadContainers: number;
  /** Image GC runs once image-filesystem usage reaches this percent (100 disables it). */
  imageGCHighThresholdPercent: number;
  /** ... and frees images until usage is down to this percent. */
  imageGCLowThresholdPercent: number;
  /** Images first seen less than this long ago are never removed (ms). */
  imageMinimumGCAgeMs: number;
  /**
   * Unused images last used more than this long ago are removed whatever the disk usage
   * (the kubelet's imageMaximumGCAge, ImageMaximumGCAge gate, beta and on since 1.30; ms; 0 = off).
   */
  imageMaximumGCAgeMs: number;
  /** The sandbox (pause) image: never removed by image GC (the kubelet's only use of this flag since 1.27). */
  podInfraContainerImage: string;
}

export const GC_DEFAULTS: Readonly<GcConfig> = Object.freeze({
  minimumContainerTTLMs: 0,
  maxDeadContainersPerContainer: 1,
  maxDeadContainers: -1,
  imageGCHighThresholdPercent: 85,
  imageGCLowThresholdPercent: 80,
  imageMinimumGCAgeMs: 120_000,
  imageMaximumGCAgeMs: 0,
  podInfraContainerImage: 'registry.k8s.io/pause:3.9',
});

/** flag → [config-file key, kind]; spread into agent-config.ts's FIELDS. */
export const GC_FIELDS = {
  'minimum-container-ttl-duration': ['minimumContainerTTLDuration', 'duration'],
  'maximum-dead-containers-per-container': ['maximumDeadContainersPerContainer', 'signed-int'],
  'maximum-dead-containers': ['maximumDeadContainers', 'signed-int'],
  'image-gc-high-threshold': ['imageGCHighThresholdPercent', 'int'],
  'image-gc-low-threshold': ['imageGCLowThresholdPercent', 'int'],
  'minimum-image-ttl-duration': ['imageMinimumGCAge', 'duration'],
  'image-maximum-gc-age': ['imageMaximumGCAge', 'duration'],
  'pod-infra-container-image': ['podInfraContainerImage', 'string'],
} as const;

/** config-file key → AgentConfig field; spread into agent-config.ts's KEY_OF. */
export const GC_KEY_OF: Readonly<Record<string, keyof GcConfig>> = Object.freeze({
  minimumContainerTTLDuration: 'minimumContainerTTLMs',
  maximumDeadContainersPerContainer: 'maxDeadContainersPerContainer',
  maximumDeadContainers: 'maxDeadContainers',
  imageGCHighThresholdPercent: 'imageGCHighThresholdPercent',
  imageGCLowThresholdPercent: 'imageGCLowThresholdPercent',
  imageMinimumGCAge: 'imageMinimumGCAgeMs',
  imageMaximumGCAge: 'imageMaximumGCAgeMs',
  podInfraContainerImage: 'podInfraContainerImage',
});

export const GC_USAGE = `
Garbage collection (the kubelet's container and image GC)
  --minimum-container-ttl-duration DUR        dead containers younger than this are kept (default 0)
  --maximum-dead-containers-per-container N   dead instances kept per container; < 0 no limit (default 1)
  --maximum-dead-containers N                 dead containers kept on the node; < 0 no limit (default -1)
  --image-gc-high-threshold N                 image fs usage percent that starts image GC; 100 disables (default 85)
  --image-gc-low-threshold N                  image GC frees down to this usage percent (default 80)
  --minimum-image-ttl-duration DUR            unused images younger than this are kept (default 2m)
  --image-maximum-gc-age DUR                  unused images not used for longer are removed at any usage; 0 off (default 0)
  --pod-infra-container-image REF             the sandbox image, never removed by image GC (default ${GC_DEFAULTS.podInfraContainerImage})
`;

/**
 * Checks the settings once, at start; returns the flag and message of the first problem, or
 * undefined. Messages are the kubelet's (validation.go: "imageGCHighThresholdPercent (--image-gc-high-threshold) must be between 0 and 100, inclusive").
 */
export function gcConfigProblem(c: GcConfig): { flag: string; message: string } | undefined {
  if (c.imageGCHighThresholdPercent > 100) return { flag: '--image-gc-high-threshold', message: `imageGCHighThresholdPercent (--image-gc-high-threshold) must be between 0 and 100, inclusive, got ${c.imageGCHighThresholdPercent}` };
  if (c.imageGCLowThresholdPercent > 100) return { flag: '--image-gc-low-threshold', message: `imageGCLowThresholdPercent (--image-gc-low-threshold) must be between 0 and 100, inclusive, got ${c.imageGCLowThresholdPercent}` };
  if (c.imageGCLowThresholdPercent >= c.imageGCHighThresholdPercent) {
    return { flag: '--image-gc-low-threshold', message: `imageGCLowThresholdPercent (--image-gc-low-threshold) (${c.imageGCLowThresholdPercent}) must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) (${c.imageGCHighThresholdPercent})` };
  }
  // validation.go: "invalid configuration: imageMaximumGCAge 1m0s must be greater than imageMinimumGCAge 2m0s".
  if (c.imageMaximumGCAgeMs > 0 && c.imageMaximumGCAgeMs <= c.imageMinimumGCAgeMs) {
    return { flag: '--image-maximum-gc-age', message: `invalid configuration: imageMaximumGCAge ${formatGoDuration(c.imageMaximumGCAgeMs)} must be greater than imageMinimumGCAge ${formatGoDuration(c.imageMinimumGCAgeMs)}` };
  }
  // Beyond the kubelet: bounds that keep the numbers meaningful (a count past 2^31 is a typo).
  for (const [flag, n] of [['--maximum-dead-containers-per-container', c.maxDeadContainersPerContainer], ['--maximum-dead-containers', c.maxDeadContainers]] as const) {
    if (n > 2 ** 31 - 1 || n < -(2 ** 31)) return { flag, message: `must be a 32-bit integer, got ${n}` };
  }
  if (c.podInfraContainerImage.length > 4096) return { flag: '--pod-infra-container-image', message: 'must be at most 4096 characters' };
  return undefined;
}
