/**
 * The eviction manager's settings: the kubelet's flags --eviction-hard, --eviction-soft,
 * --eviction-soft-grace-period, --eviction-minimum-reclaim, --eviction-pressure-transition-period
 * and --eviction-max-pod-grace-period, and their KubeletConfiguration fields (evictionHard,
 * evictionSoft, evictionSoftGracePeriod, evictionMinimumReclaim, evictionPressureTransitionPeriod,
 * evictionMaxPodGracePeriod), with the kubelet's defaults.
 *
 * Flag syntax as the kubelet's: --eviction-hard / --eviction-soft are `signal<value` pairs
 * separated by commas (cliflag.LangleSeparatedMapStringString: "memory.available<100Mi,
 * nodefs.available<10%"); the grace periods and minimum reclaims are `signal=value` pairs. In the
 * config file all four are mappings of signal to value. Setting --eviction-hard replaces the whole
 * default set (a signal left out has no hard threshold), as the kubelet's flag does.
 *
 * The flag table and keys are spread into agent-config.ts's, as gc-config.ts's are.
 */
import { parseThresholdConfig, ThresholdConfigError, type Threshold } from './eviction-thresholds.js';

export interface EvictionConfig {
  evictionHard: Record<string, string>;
  evictionSoft: Record<string, string>;
  evictionSoftGracePeriod: Record<string, string>;
  evictionMinimumReclaim: Record<string, string>;
  /** How long a pressure condition stays True after its last threshold crossing (ms). */
  evictionPressureTransitionPeriodMs: number;
  /** The longest grace period a soft eviction gives a pod (s); 0 = the pod's own (see eviction-manager.ts). */
  evictionMaxPodGracePeriodSeconds: number;
}

/** The kubelet's DefaultEvictionHard. */
export const DEFAULT_EVICTION_HARD: Readonly<Record<string, string>> = Object.freeze({
  'memory.available': '100Mi',
  'nodefs.available': '10%',
  'nodefs.inodesFree': '5%',
  'imagefs.available': '15%',
});

export const EVICTION_DEFAULTS: Readonly<EvictionConfig> = Object.freeze({
  evictionHard: DEFAULT_EVICTION_HARD as Record<string, string>,
  evictionSoft: Object.freeze({}) as Record<string, string>,
  evictionSoftGracePeriod: Object.freeze({}) as Record<string, string>,
  evictionMinimumReclaim: Object.freeze({}) as Record<string, string>,
  evictionPressureTransitionPeriodMs: 5 * 60_000,
  evictionMaxPodGracePeriodSeconds: 0,
});

/** flag → [config-file key, kind]; spread into agent-config.ts's FIELDS. */
export const EVICTION_FIELDS = {
  'eviction-hard': ['evictionHard', 'langle-map'],
  'eviction-soft': ['evictionSoft', 'langle-map'],
  'eviction-soft-grace-period': ['evictionSoftGracePeriod', 'map'],
  'eviction-minimum-reclaim': ['evictionMinimumReclaim', 'map'],
  'eviction-pressure-transition-period': ['evictionPressureTransitionPeriod', 'duration'],
  'eviction-max-pod-grace-period': ['evictionMaxPodGracePeriod', 'signed-int'],
} as const;

/** config-file key → AgentConfig field; spread into agent-config.ts's KEY_OF. */
export const EVICTION_KEY_OF: Readonly<Record<string, keyof EvictionConfig>> = Object.freeze({
  evictionHard: 'evictionHard',
  evictionSoft: 'evictionSoft',
  evictionSoftGracePeriod: 'evictionSoftGracePeriod',
  evictionMinimumReclaim: 'evictionMinimumReclaim',
  evictionPressureTransitionPeriod: 'evictionPressureTransitionPeriodMs',
  evictionMaxPodGracePeriod: 'evictionMaxPodGracePeriodSeconds',
});

export const EVICTION_USAGE = `
Node-pressure eviction (the kubelet's eviction manager)
  --eviction-hard LIST                  signal<value pairs that evict at once (default memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%)
  --eviction-soft LIST                  signal<value pairs that evict after their grace period
  --eviction-soft-grace-period LIST     signal=duration pairs, one per soft threshold
  --eviction-minimum-reclaim LIST       signal=value pairs: how far below the threshold to reclaim
  --eviction-pressure-transition-period DUR  how long a pressure condition stays True (default 5m)
  --eviction-max-pod-grace-period N     grace period of a soft eviction, seconds (default 0: the pod's own)
`;

/** The thresholds of a config; throws ThresholdConfigError naming the flag. */
export function evictionThresholds(c: EvictionConfig): Threshold[] {
  return parseThresholdConfig({ hard: c.evictionHard, soft: c.evictionSoft, softGracePeriod: c.evictionSoftGracePeriod, minimumReclaim: c.evictionMinimumReclaim });
}

/** Checks the settings once, at start; the flag and message of the first problem, or undefined. */
export function evictionConfigProblem(c: EvictionConfig): { flag: string; message: string } | undefined {
  try {
    evictionThresholds(c);
  } catch (err) {
    if (err instanceof ThresholdConfigError) return { flag: err.flag, message: err.message };
    throw err;
  }
  for (const [flag, m] of [['--eviction-hard', c.evictionHard], ['--eviction-soft', c.evictionSoft], ['--eviction-soft-grace-period', c.evictionSoftGracePeriod], ['--eviction-minimum-reclaim', c.evictionMinimumReclaim]] as const) {
    for (const [k, v] of Object.entries(m)) if (k.length > 64 || v.length > 64) return { flag, message: `entries must be at most 64 characters, got ${JSON.stringify(`${k.slice(0, 80)}`)}` };
  }
  if (c.evictionMaxPodGracePeriodSeconds > 2 ** 31 - 1 || c.evictionMaxPodGracePeriodSeconds < -(2 ** 31)) {
    return { flag: '--eviction-max-pod-grace-period', message: `must be a 32-bit integer, got ${c.evictionMaxPodGracePeriodSeconds}` };
  }
  if (c.evictionPressureTransitionPeriodMs > 24 * 3600_000) return { flag: '--eviction-pressure-transition-period', message: 'must be at most 24h' };
  return undefined;
}
