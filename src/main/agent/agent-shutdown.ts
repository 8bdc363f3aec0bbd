/**
 * Graceful node shutdown wiring on the main thread (the kubelet's nodeshutdown.NewManager and
 * its Start in initializeRuntimeDependentModules): nothing at all when --shutdown-grace-period
 * is 0 (the default, as in the kubelet); otherwise the manager over the pod lifecycle, with two
 * signal sources: systemd-logind (delay lock + PrepareForShutdown, where the machine has a
 * system bus and logind) and SIGUSR1 (both by default; --shutdown-signal-sources picks). Its errors turn the Node's Ready condition False,
 * its admission check refuses pods, its NodeShutdown events go on the Node (cluster mode).
 */
import type { Clock } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { EventRecorder } from '../events/event-recorder.js';
import { LogindShutdownSource } from '../shutdown/logind-shutdown-source.js';
import { NodeShutdownManager, shutdownGroups, type ShutdownPods } from '../shutdown/node-shutdown-manager.js';
import type { ShutdownSignalSource } from '../shutdown/shutdown-signal.js';
import { SignalShutdownSource } from '../shutdown/signal-shutdown-source.js';
import type { AgentConfig } from './agent-config.js';

export interface AgentShutdownDeps {
  config: AgentConfig;
  clock: Clock;
  logger: Logger;
  pods: ShutdownPods;
  recorder: EventRecorder | undefined;
  /** Push the Node status now (cluster mode). */
  syncNodeStatus: () => void;
  /** Replaces the default sources (logind, SIGUSR1): tests. */
  sources?: readonly ShutdownSignalSource[];
}

/** The manager, or undefined when graceful node shutdown is off. */
export function createNodeShutdown(d: AgentShutdownDeps): NodeShutdownManager | undefined {
  const { config: c, clock, logger, recorder } = d;
  const groups = shutdownGroups(c);
  if (groups.length === 0) {
    logger.info('No graceful configuration specified, node shutdown will be immediate');
    return undefined;
  }
  const periodRequestedSeconds = groups.reduce((s, g) => s + g.gracePeriodSeconds, 0);
  const nodeRef = { kind: 'Node' as const, namespace: '', name: c.nodeName, uid: c.nodeName };
  return new NodeShutdownManager({
    clock, logger, config: c, pods: d.pods,
    sources: d.sources ?? [
      ...(c.shutdownSignalSources.includes('logind') ? [new LogindShutdownSource({ clock, logger, periodRequestedSeconds })] : []),
      ...(c.shutdownSignalSources.includes('SIGUSR1') ? [new SignalShutdownSource()] : []),
    ],
    syncNodeStatus: d.syncNodeStatus,
    event: (reason, message) => recorder?.record(nodeRef, 'Normal', reason, message),
  });
}
