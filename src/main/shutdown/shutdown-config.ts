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
  /**
   * Which shutdown signals are watched (beyond the kubelet, which always tries logind and
   * SIGUSR1): "logind" and/or "SIGUSR1". Tests and hosts whose logind must not be touched (a CI
   * machine: the override writes logind's config) leave logind out.
   */
  shutdownSignalSources: string[];
}

export const SHUTDOWN_SIGNAL_SOURCES = Object.freeze(['logind', 'SIGUSR1'] as const);

export const SHUTDOWN_DEFAULTS: Readonly<ShutdownConfig> = Object.freeze({
  shutdownGracePeriodMs: 0,
  shutdownGracePeriodCriticalPodsMs: 0,
  shutdownSignalSources: [...SHUTDOWN_SIGNAL_SOURCES],
});

/** flag → [config-file key, kind]; spread into agent-config.ts's FIELDS. */
export const SHUTDOWN_FIELDS = {
  'shutdown-grace-period': ['shutdownGracePeriod', 'duration'],
  'shutdown-grace-period-critical-pods': ['shutdownGracePeriodCriticalPods', 'duration'],
  'shutdown-signal-sources': ['shutdownSignalSources', 'list'],
} as const;

/** config-file key → AgentConfig field; spread into agent-config.ts's KEY_OF. */
export const SHUTDOWN_KEY_OF: Readonly<Record<string, keyof ShutdownConfig>> = Object.freeze({
  shutdownGracePeriod: 'shutdownGracePeriodMs',
  shutdownGracePeriodCriticalPods: 'shutdownGracePeriodCriticalPodsMs',
  shutdownSignalSources: 'shutdownSignalSources',
});

export const SHUTDOWN_USAGE = `
Graceful node shutdown (the kubelet's nodeshutdown manager)
  --shutdown-grace-period DUR                 delay the node's shutdown this long for pods to terminate; 0 off (default 0)
  --shutdown-grace-period-critical-pods DUR   the part of it given to critical pods, terminated last (default 0)
  --shutdown-signal-sources LIST              shutdown signals watched: logind, SIGUSR1 (default both)
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
  for (const s of c.shutdownSignalSources) {
    if (!(SHUTDOWN_SIGNAL_SOURCES as readonly string[]).includes(s)) return { flag: '--shutdown-signal-sources', message: `unknown source ${JSON.stringify(s.slice(0, 64))}; valid: ${SHUTDOWN_SIGNAL_SOURCES.join(', ')}` };
  }
  if (total > SHUTDOWN_GRACE_PERIOD_MAX_MS) {
    return { flag: '--shutdown-grace-period', message: `must be at most 24h, got ${formatGoDuration(total)}` };
  }
  return undefined;
}
