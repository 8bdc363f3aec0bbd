/**
 * The node's QoS cgroups, on the main thread (the kubelet's createNodeAllocatableCgroups,
 * node_container_manager_linux.go, and qosContainerManagerImpl, qos_container_manager_linux.go):
 *
 *   start():  decides how pod cgroups are made (the settings every pod worker gets), then
 *             creates `<cgroup-root>/kubepods` (cpu shares and memory limit of the node's
 *             allocatable with --enforce-node-allocatable=pods, else of its capacity),
 *             `kubepods/burstable` and `kubepods/besteffort` (minimum cpu shares).
 *   maybeSweep(): housekeeping; removes the pod cgroups of pods the node does not know.
 *   maybeUpdate(): housekeeping; the Burstable cgroup's cpu shares follow the summed cpu
 *             requests of the active Burstable pods (UpdateCgroups), written when the value
 *             changed, checked when the active pod count changed or a minute passed (the
 *             kubelet's periodicQOSCgroupUpdateInterval). One update in flight at a time.
 *
 * How pod cgroups are made (never a silent fallback):
 *   --cgroups-per-qos=false      none, and no cgroupParent (the kubelet's noop manager);
 *   simulated runtime            names only (names-only-cgroup-manager.ts), said at startup;
 *   any other runtime            the host's cgroupfs (v1 or v2). Anything in the way (not
 *                                root, read-only cgroupfs, cpu or memory controller missing,
 *                                the systemd driver) fails start() with a CgroupError naming
 *                                the cause and the opt-out.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { CgroupError, cgroupErrorFrom } from '../../shared/cgroups/cgroup-errors.js';
import { nodeCgroupFs, type CgroupFs } from '../../shared/cgroups/cgroup-fs.js';
import { detectCgroupLayout, DEFAULT_CGROUP_MOUNT, type CgroupLayout } from '../../shared/cgroups/cgroup-layout.js';
import type { CgroupManager } from '../../shared/cgroups/cgroup-manager.js';
import { parseCgroupRoot, podUIDOfComponent, qosCgroupNames, type CgroupDriver, type QOSCgroupNames } from '../../shared/cgroups/cgroup-name.js';
import { MIN_CPU_SHARES, milliCPUToShares, type ResourceConfig } from '../../shared/cgroups/cgroup-resources.js';
import { cgroupManagerFor, SYSTEMD_HOST_UNSUPPORTED, type PodCgroupSettings } from '../../shared/cgroups/pod-cgroup-settings.js';
import { REQUIRED_CONTROLLERS } from '../../shared/cgroups/cgroupfs-manager.js';
import { podQOSClass } from '../../shared/resources/pod-qos.js';
import { podRequests } from '../../shared/resources/pod-requests.js';

/** The kubelet's periodicQOSCgroupUpdateInterval (also the orphaned pod cgroup sweep's period). */
export const QOS_UPDATE_INTERVAL_MS = 60_000;
/** Orphaned pod cgroups removed per sweep at most (each is a few rmdirs per hierarchy). */
export const SWEEP_MAX_PER_PASS = 100;

export interface NodeCgroupsConfig {
  cgroupsPerQOS: boolean;
  cgroupDriver: CgroupDriver;
  cgroupRoot: string;
  /** [] or ['pods'] (validated by agent-config.ts). */
  enforceNodeAllocatable: readonly string[];
}

export interface NodeCgroupsDeps {
  config: NodeCgroupsConfig;
  /** The runtime is the simulated one (SIMULATED_RUNTIME_NAME): names only, nothing on the host. */
  simulatedRuntime: boolean;
  /** Machine capacity and the node's allocatable (capacity − reserved). */
  capacity: { cpuMillis: number; memoryBytes: number };
  allocatable: { cpuMillis: number; memoryBytes: number };
  clock: Clock;
  logger: Logger;
  /** Seams for tests (default: node's async fs, the layout under /sys/fs/cgroup). */
  fs?: CgroupFs;
  detectLayout?: () => Promise<CgroupLayout>;
}

const OPT_OUT = 'run shardlet as root with a writable cgroup filesystem (cgroup v2 with the cpu and memory controllers, or v1), or opt out with --cgroups-per-qos=false --enforce-node-allocatable=none';

export class NodeCgroups {
  /** What every pod worker is given (its thread config). */
  readonly settings: PodCgroupSettings;
  readonly names: QOSCgroupNames;
  readonly #manager: CgroupManager;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #lastCheckMs = -Infinity;
  #lastPodCount = -1;
  #lastShares = -1;
  #inFlight: Promise<void> | undefined;
  #lastSweepMs = -Infinity;
  #sweeping: Promise<void> | undefined;

  private constructor(settings: PodCgroupSettings, manager: CgroupManager, clock: Clock, logger: Logger) {
    this.settings = settings;
    this.names = qosCgroupNames(settings.root);
    this.#manager = manager;
    this.#clock = clock;
    this.#logger = logger;
  }

  /** Undefined with --cgroups-per-qos=false. Throws CgroupError when the host cannot have them. */
  static async start(d: NodeCgroupsDeps): Promise<NodeCgroups | undefined> {
    const c = d.config;
    if (!c.cgroupsPerQOS) {
      d.logger.info('--cgroups-per-qos=false: no QoS or pod cgroups; containers go where the runtime puts them');
      return undefined;
    }
    const root = parseCgroupRoot(c.cgroupDriver, c.cgroupRoot);
    let settings: PodCgroupSettings;
    if (d.simulatedRuntime) {
      settings = { driver: c.cgroupDriver, root, mode: { kind: 'names-only' } };
      d.logger.info('simulated runtime: QoS and pod cgroups are named and passed as cgroupParent, not created on the host (its containers are not processes)', { driver: c.cgroupDriver, cgroupRoot: c.cgroupRoot });
    } else {
      if (c.cgroupDriver !== 'cgroupfs') throw new CgroupError('ERR_CGROUP_CONFIG', `cannot set up the QoS cgroups: ${SYSTEMD_HOST_UNSUPPORTED}`);
      let layout: CgroupLayout;
      try {
        layout = await (d.detectLayout ?? (() => detectCgroupLayout()))();
      } catch (err) {
        throw new CgroupError('ERR_CGROUP_IO', `cannot set up the QoS cgroups: cannot inspect ${DEFAULT_CGROUP_MOUNT}: ${err instanceof Error ? err.message : String(err)}; ${OPT_OUT}`);
      }
      settings = { driver: c.cgroupDriver, root, mode: { kind: 'host', layout } };
    }
    const fs = d.fs ?? nodeCgroupFs;
    let nc: NodeCgroups;
    try {
      if (settings.mode.kind === 'host' && settings.mode.layout.version === 'v2') await checkV2Controllers(fs, settings.mode.layout.root);
      nc = new NodeCgroups(settings, cgroupManagerFor(settings, fs), d.clock, d.logger);
      const enforce = c.enforceNodeAllocatable.includes('pods');
      const node = enforce ? d.allocatable : d.capacity;
      await nc.#manager.create(nc.names.kubepods, { cpuShares: milliCPUToShares(node.cpuMillis), memoryLimitBytes: node.memoryBytes });
      await nc.#manager.create(nc.names.burstable, { cpuShares: MIN_CPU_SHARES });
      await nc.#manager.create(nc.names.besteffort, { cpuShares: MIN_CPU_SHARES });
      nc.#lastShares = MIN_CPU_SHARES;
    } catch (err) {
      if (err instanceof CgroupError) throw new CgroupError(err.code, `cannot set up the QoS cgroups (--cgroups-per-qos=true): ${err.message}; ${OPT_OUT}`);
      throw err;
    }
    if (settings.mode.kind === 'host') {
      d.logger.info('QoS cgroups ready', { kubepods: nc.#manager.name(nc.names.kubepods), cgroupVersion: settings.mode.layout.version, enforceNodeAllocatable: c.enforceNodeAllocatable.join(',') });
    }
    return nc;
  }

  /** Housekeeping (see the module comment). Never throws; a failed write is logged and retried. */
  maybeUpdate(activePods: () => readonly V1Pod[]): void {
    if (!this.#manager.writesHost || this.#inFlight) return;
    const now = this.#clock.monotonic();
    const pods = activePods();
    if (pods.length === this.#lastPodCount && now - this.#lastCheckMs < QOS_UPDATE_INTERVAL_MS) return;
    this.#lastCheckMs = now;
    this.#lastPodCount = pods.length;
    const shares = burstableShares(pods);
    if (shares === this.#lastShares) return;
    this.#inFlight = this.#write(shares).finally(() => (this.#inFlight = undefined));
  }

  /**
   * Housekeeping: the pod cgroups of pods this node does not know (gone while the agent was down,
   * or a cleanup that never finished) are removed, at most {@link SWEEP_MAX_PER_PASS} a pass,
   * once a minute, and only once every source has been seen (the kubelet's
   * cleanupOrphanedPodCgroups). One still holding processes is busy and left for the next pass
   * (an orphaned pod's containers are killed and removed by its own cleanup). Never throws.
   */
  maybeSweep(isPodKnown: (uid: string) => boolean, sourcesReady: () => boolean): void {
    if (!this.#manager.writesHost || this.#sweeping) return;
    const now = this.#clock.monotonic();
    if (now - this.#lastSweepMs < QOS_UPDATE_INTERVAL_MS || !sourcesReady()) return;
    this.#lastSweepMs = now;
    this.#sweeping = this.#sweep(isPodKnown).finally(() => (this.#sweeping = undefined));
  }

  /** Resolves once the work in flight (if any) is done (tests, shutdown). */
  async settled(): Promise<void> {
    await Promise.all([this.#inFlight, this.#sweeping]);
  }

  async #sweep(isPodKnown: (uid: string) => boolean): Promise<void> {
    let removed = 0;
    for (const parent of [this.names.kubepods, this.names.burstable, this.names.besteffort]) {
      let children: string[];
      try {
        children = await this.#manager.children(parent);
      } catch (err) {
        this.#logger.error('Failed to list pod cgroups', { parent: this.#manager.name(parent), error: err instanceof Error ? err.message : String(err) });
        continue;
      }
      for (const child of children) {
        const uid = podUIDOfComponent(child);
        if (uid === undefined || isPodKnown(uid)) continue;
        if (removed >= SWEEP_MAX_PER_PASS) return;
        removed++;
        try {
          await this.#manager.destroy([...parent, child]);
          this.#logger.v(2).info('Removed the cgroup of an orphaned pod', { podUID: uid });
        } catch (err) {
          this.#logger.v(2).info('Orphaned pod cgroup not removed yet', { podUID: uid, error: err instanceof Error ? err.message : String(err) });
        }
      }
    }
  }

  async #write(shares: number): Promise<void> {
    const r: ResourceConfig = { cpuShares: shares };
    try {
      await this.#manager.update(this.names.burstable, r);
      this.#lastShares = shares;
    } catch (err) {
      this.#lastPodCount = -1; // retried at the next housekeeping
      this.#logger.error('Failed to update the Burstable QoS cgroup', { error: err instanceof Error ? err.message : String(err) });
    }
  }
}

/** The Burstable cgroup's cpu shares: MilliCPUToShares of the active Burstable pods' summed cpu requests. */
export function burstableShares(pods: readonly V1Pod[]): number {
  let milli = 0;
  for (const p of pods) if (podQOSClass(p) === 'Burstable') milli += podRequests(p).cpuMillis;
  return milliCPUToShares(milli);
}

async function checkV2Controllers(fs: CgroupFs, root: string): Promise<void> {
  const file = `${root}/cgroup.controllers`;
  let text: string;
  try {
    text = await fs.readFile(file);
  } catch (err) {
    throw cgroupErrorFrom(err, 'read', file);
  }
  const have = new Set(text.trim().split(/\s+/));
  const missing = REQUIRED_CONTROLLERS.filter((c) => !have.has(c));
  if (missing.length > 0) throw new CgroupError('ERR_CGROUP_CONTROLLER', `cgroup v2: the ${missing.join(' and ')} controller is not available in ${file} (have: ${[...have].join(' ') || 'none'})`);
}
