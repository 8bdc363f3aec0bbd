/**
 * The graceful node shutdown settings: the kubelet's ShutdownGracePeriod and
 * ShutdownGracePeriodCriticalPods (KubeletConfiguration shutdownGracePeriod,
 * shutdownGracePeriodCriticalPods; the kubelet has them in its config file only, shardlet also
 * takes them as flags, as the brief for its flag table asks), with the kubelet's defaults (0:
 * disabled) and validation messages (pkg/kubelet/apis/config/validation/validation.go).
 *
 * Spread into agent-config.ts's table, as gc-config.ts is.
 */
import { formatGoDuration } from '../../shared/clock/go-duration.js';

export interface ShutdownConfig {
  /** Total time the node delays its shutdown for pods to terminate (ms; 0 = graceful shutdown off). */
  shutdownGracePeriodMs: number;
  /** The part of it reserved for critical pods, which are terminated last (ms). */
  shutdownGracePeriodCriticalPodsMs: number;
}

export const SHUTDOWN_DEFAULTS: Readonly<ShutdownConfig> = Object.freeze({
  shutdownGracePeriodMs: 0,
  shutdownGracePeriodCriticalPodsMs: 0,
});

/** flag → [config-file key, kind]; spread into agent-config.ts's FIELDS. */
export const SHUTDOWN_FIELDS = {
  'shutdown-grace-period': ['shutdownGracePeriod', 'duration'],
  'shutdown-grace-period-critical-pods': ['shutdownGracePeriodCriticalPods', 'duration'],
} as const;

/** config-file key → AgentConfig field; spread into agent-config.ts's KEY_OF. */
export const SHUTDOWN_KEY_OF: Readonly<Record<string, keyof ShutdownConfig>> = Object.freeze({
  shutdownGracePeriod: 'shutdownGracePeriodMs',
  shutdownGracePeriodCriticalPods: 'shutdownGracePeriodCriticalPodsMs',
});

export const SHUTDOWN_USAGE = `
Graceful node shutdown (the kubelet's nodeshutdown manager)
  --shutdown-grace-period DUR                 delay the node's shutdown this long for pods to terminate; 0 off (default 0)
  --shutdown-grace-period-critical-pods DUR   the part of it given to critical pods, terminated last (default 0)
`;

/** Beyond the kubelet: a bound that keeps every group's timer a valid timer (24 h). */
export const SHUTDOWN_GRACE_PERIOD_MAX_MS = 24 * 3_600_000;

/**
 * Checks the settings once, at start; returns the flag and message of the first problem, or
 * undefined. Messages are the kubelet's ("invalid configuration: shutdownGracePeriodCriticalPods
 * 20s must be <= shutdownGracePeriod 10s").
 */
export function shutdownConfigProblem(c: ShutdownConfig): { flag: string; message: string } | undefined {
  const total = c.shutdownGracePeriodMs;
  const critical = c.shutdownGracePeriodCriticalPodsMs;
  if (critical > total) {
    return { flag: '--shutdown-grace-period-critical-pods', message: `invalid configuration: shutdownGracePeriodCriticalPods ${formatGoDuration(critical)} must be <= shutdownGracePeriod ${formatGoDuration(total)}` };
  }
  if (total < 0 || (total > 0 && total < 1000)) {
    return { flag: '--shutdown-grace-period', message: `invalid configuration: shutdownGracePeriod ${formatGoDuration(total)} must be either zero or otherwise >= 1 sec` };
  }
  if (critical < 0 || (critical > 0 && critical < 1000)) {
    return { flag: '--shutdown-grace-period-critical-pods', message: `invalid configuration: shutdownGracePeriodCriticalPods ${formatGoDuration(critical)} must be either zero or otherwise >= 1 sec` };
  }
  if (total > SHUTDOWN_GRACE_PERIOD_MAX_MS) {
    return { flag: '--shutdown-grace-period', message: `must be at most 24h, got ${formatGoDuration(total)}` };
  }
  return undefined;
}
