/**
 * The agent's configuration: kubelet-style flags over an optional YAML config file
 * (`--config`, KubeletConfiguration field names where the kubelet has the setting). As in the
 * kubelet, flags take precedence over the file. Validation happens once, here, with errors
 * naming the flag or field; defaults are frozen.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { load as loadYaml } from 'js-yaml';
import { parseBytes } from '../../shared/resources/quantity.js';
import { parseDurationMs } from '../../shared/clock/go-duration.js';
import { computeNodeResources, NodeResourcesError } from '../node-status/node-resources.js';
import { NodeLabelError, parseTaints, validateNodeLabels, type Taint } from '../node-status/node-labels.js';
import { defaultWorkerThreads } from './worker-threads-policy.js';
import { SysctlAllowlist, SysctlAllowlistError } from '../admission/sysctl-allowlist.js';
import { GC_DEFAULTS, GC_FIELDS, GC_KEY_OF, GC_USAGE, gcConfigProblem, type GcConfig } from '../gc/gc-config.js';
import { EVICTION_DEFAULTS, EVICTION_FIELDS, EVICTION_KEY_OF, EVICTION_USAGE, evictionConfigProblem, type EvictionConfig } from '../eviction/eviction-config.js';
import { SHUTDOWN_DEFAULTS, SHUTDOWN_FIELDS, SHUTDOWN_KEY_OF, SHUTDOWN_USAGE, shutdownConfigProblem, type ShutdownConfig } from '../shutdown/shutdown-config.js';
import { CGROUP_DRIVERS, CgroupNameError, parseCgroupRoot, type CgroupDriver } from '../../shared/cgroups/cgroup-name.js';
import { ConfigError } from '../../shared/manifest/config-errors.js';

export interface AgentConfig extends GcConfig, EvictionConfig, ShutdownConfig {
  podManifestPath: string | undefined;
  manifestURL: string | undefined;
  /** Cluster mode: the kubeconfig to reach the API server with; undefined = standalone. */
  kubeconfig: string | undefined;
  /** Main API client rate limit (requests/s; 0 = unlimited) and burst. */
  kubeAPIQPS: number;
  kubeAPIBurst: number;
  /** unix:///path, or 'embedded' for the built-in simulated runtime (the default). */
  containerRuntimeEndpoint: string;
  nodeName: string;
  maxPods: number;
  /** Most encoded bytes one pod's runtime status may take in the pod cache (pod-cache-layout.ts MAX_ENTRY). */
  podCacheMaxEntryBytes: number;
  /** Pod-worker threads; 0 runs pod workers inline on the main thread. */
  workers: number;
  /**
   * V8's --optimize-for-size for every thread (set before any worker starts): heaps kept near
   * their live size (measured RSS at 5,000 pods 829 → 390 MiB with 2 threads) for more agent
   * CPU in bursts (+30–50%). Off by default; README, Performance.
   */
  optimizeForSize: boolean;
  /**
   * V8's --heap-growing-percent for every thread (0 = V8's own heuristic): after a full
   * collection a heap may grow to (1 + N/100) × its live size before the next. 30 measured RSS
   * at 5,000 pods 722 → 485 MiB with 2 threads, for +15–35% agent CPU in bursts. README, Performance.
   */
  heapGrowingPercent: number;
  /** V8 optimizes a function only after 4× its default warm-up (v8-flags.ts; V8 11 only). */
  lazyJit: boolean;
  /**
   * Pod starts (a pod's first sync) in flight at once per pod-worker thread (inline: in all),
   * oldest first; 0 = no bound. workers/pod-start-gate.ts; README, Performance.
   */
  maxParallelPodStartsPerThread: number;
  syncFrequencyMs: number;
  fileCheckFrequencyMs: number;
  httpCheckFrequencyMs: number;
  runtimeRequestTimeoutMs: number;
  plegRelistPeriodMs: number;
  plegRelistThresholdMs: number;
  address: string;
  /** The secure (HTTPS, authenticated) kubelet API port; 0 disables it. */
  port: number;
  /** The read-only HTTP port (/metrics, /healthz, /pods; no authentication); 0 disables it. */
  readOnlyPort: number;
  /** Serving pair of the secure port; both unset = self-signed under <rootDir>/pki. */
  tlsCertFile: string | undefined;
  tlsPrivateKeyFile: string | undefined;
  /** CA bundle that client certificates must chain to; unset = x509 authentication off. */
  clientCAFile: string | undefined;
  /** Unauthenticated requests are `system:anonymous` instead of 401. */
  anonymousAuth: boolean;
  /** Bearer tokens are checked with TokenReview (cluster mode only). */
  authenticationTokenWebhook: boolean;
  authenticationTokenWebhookCacheTTLMs: number;
  /** AlwaysAllow, or Webhook (SubjectAccessReview; cluster mode only). */
  authorizationMode: 'AlwaysAllow' | 'Webhook';
  authorizationWebhookCacheAuthorizedTTLMs: number;
  authorizationWebhookCacheUnauthorizedTTLMs: number;
  /** A container log file is rotated past this size (bytes); 0 disables rotation. */
  containerLogMaxSize: number;
  /** Log files kept per container, the current one included (≥ 2). */
  containerLogMaxFiles: number;
  containerLogMonitorIntervalMs: number;
  /** exec/attach/port-forward connections idle this long are closed (kubelet default 4h). */
  streamingConnectionIdleTimeoutMs: number;
  rootDir: string;
  podLogsDir: string;
  /** Sysctls (or `prefix*` patterns) pods may set beyond the safe set (sysctl-allowlist.ts). */
  allowedUnsafeSysctls: string[];
  /** Containers without a seccomp profile run with the runtime's default profile (the kubelet's SeccompDefault). */
  seccompDefault: boolean;
  /** Node allocatable overrides, e.g. { cpu: '2', memory: '4Gi' }; detected when absent. */
  nodeAllocatable: Record<string, string>;
  verbosity: number;
  /** Cluster mode, the Node: --node-labels (validated against NodeRestriction's allow-list). */
  nodeLabels: Record<string, string>;
  /** --register-with-taints, set when the Node is created. */
  registerWithTaints: Taint[];
  /** --system-reserved / --kube-reserved: subtracted from capacity into allocatable. */
  systemReserved: Record<string, string>;
  kubeReserved: Record<string, string>;
  /** --node-ip: the InternalIP address; detected when undefined. */
  nodeIP: string | undefined;
  nodeStatusUpdateFrequencyMs: number;
  nodeStatusReportFrequencyMs: number;
  nodeLeaseDurationSeconds: number;
  /** Events client rate limit (0 = unlimited) and burst. */
  eventRecordQPS: number;
  eventBurst: number;
  /** --cgroups-per-qos: the kubepods/QoS/pod cgroup hierarchy (node-cgroups.ts); false opts out. */
  cgroupsPerQOS: boolean;
  /** --cgroup-driver: how cgroup names are spelled (and, with real runtimes, made). */
  cgroupDriver: CgroupDriver;
  /** --cgroup-root: the parent of `kubepods`. */
  cgroupRoot: string;
  /** --enforce-node-allocatable: [] or ['pods'] (the kubepods cgroup limited to allocatable). */
  enforceNodeAllocatable: readonly string[];
  /** --cluster-dns: cluster DNS server IPs for ClusterFirst pods (empty: they fall back to Default). */
  clusterDNS: string[];
  /** --cluster-domain: the cluster's DNS domain ('' : no cluster search domains). */
  clusterDomain: string;
  /** --resolv-conf: the node resolver config pods start from; '' disables it. */
  resolvConf: string;
}

export const AGENT_DEFAULTS: Readonly<AgentConfig> = Object.freeze({
  podManifestPath: undefined,
  manifestURL: undefined,
  kubeconfig: undefined,
  kubeAPIQPS: 50,
  kubeAPIBurst: 100,
  containerRuntimeEndpoint: 'embedded',
  nodeName: os.hostname().toLowerCase(),
  maxPods: 110,
  podCacheMaxEntryBytes: 16 << 20,
  workers: defaultWorkerThreads(os.availableParallelism()),
  optimizeForSize: false,
  heapGrowingPercent: 0,
  lazyJit: true,
  maxParallelPodStartsPerThread: 8,
  syncFrequencyMs: 60_000,
  fileCheckFrequencyMs: 20_000,
  httpCheckFrequencyMs: 20_000,
  runtimeRequestTimeoutMs: 120_000,
  plegRelistPeriodMs: 1_000,
  plegRelistThresholdMs: 180_000,
  address: '127.0.0.1',
  port: 10250,
  readOnlyPort: 10255,
  tlsCertFile: undefined,
  tlsPrivateKeyFile: undefined,
  clientCAFile: undefined,
  anonymousAuth: false,
  authenticationTokenWebhook: false,
  authenticationTokenWebhookCacheTTLMs: 120_000,
  authorizationMode: 'AlwaysAllow',
  authorizationWebhookCacheAuthorizedTTLMs: 300_000,
  authorizationWebhookCacheUnauthorizedTTLMs: 30_000,
  containerLogMaxSize: 10 * 1024 * 1024,
  containerLogMaxFiles: 5,
  containerLogMonitorIntervalMs: 10_000,
  streamingConnectionIdleTimeoutMs: 4 * 3600_000,
  rootDir: '/var/lib/shardlet',
  podLogsDir: '/var/log/pods',
  allowedUnsafeSysctls: [],
  seccompDefault: false,
  nodeAllocatable: {},
  verbosity: 0,
  nodeLabels: {},
  registerWithTaints: [],
  systemReserved: {},
  kubeReserved: {},
  nodeIP: undefined,
  nodeStatusUpdateFrequencyMs: 10_000,
  nodeStatusReportFrequencyMs: 300_000,
  nodeLeaseDurationSeconds: 40,
  eventRecordQPS: 50,
  eventBurst: 100,
  ...GC_DEFAULTS,
  ...EVICTION_DEFAULTS,
  ...SHUTDOWN_DEFAULTS,
  cgroupsPerQOS: true,
  cgroupDriver: 'cgroupfs',
  cgroupRoot: '/',
  enforceNodeAllocatable: Object.freeze(['pods']),
  clusterDNS: [],
  clusterDomain: '',
  resolvConf: '/etc/resolv.conf',
});

/** flag name → [config-file key, kind]. */
const FIELDS = {
  'pod-manifest-path': ['staticPodPath', 'string'],
  'manifest-url': ['staticPodURL', 'string'],
  kubeconfig: ['kubeconfig', 'string'],
  'kube-api-qps': ['kubeAPIQPS', 'number'],
  'kube-api-burst': ['kubeAPIBurst', 'int'],
  'container-runtime-endpoint': ['containerRuntimeEndpoint', 'string'],
  'node-name': ['nodeName', 'string'],
  'max-pods': ['maxPods', 'int'],
  'pod-cache-max-entry-bytes': ['podCacheMaxEntryBytes', 'int'],
  workers: ['workers', 'int'],
  'optimize-for-size': ['optimizeForSize', 'bool'],
  'heap-growing-percent': ['heapGrowingPercent', 'int'],
  'lazy-jit': ['lazyJit', 'bool'],
  'max-parallel-pod-starts-per-thread': ['maxParallelPodStartsPerThread', 'int'],
  'sync-frequency': ['syncFrequency', 'duration'],
  'file-check-frequency': ['fileCheckFrequency', 'duration'],
  'http-check-frequency': ['httpCheckFrequency', 'duration'],
  'runtime-request-timeout': ['runtimeRequestTimeout', 'duration'],
  'pleg-relist-period': ['plegRelistPeriod', 'duration'],
  'pleg-relist-threshold': ['plegRelistThreshold', 'duration'],
  address: ['address', 'string'],
  port: ['port', 'int'],
  'read-only-port': ['readOnlyPort', 'int'],
  'tls-cert-file': ['tlsCertFile', 'string'],
  'tls-private-key-file': ['tlsPrivateKeyFile', 'string'],
  'client-ca-file': ['clientCAFile', 'string'],
  'anonymous-auth': ['anonymousAuth', 'bool'],
  'authentication-token-webhook': ['authenticationTokenWebhook', 'bool'],
  'authentication-token-webhook-cache-ttl': ['authenticationTokenWebhookCacheTTL', 'duration'],
  'authorization-mode': ['authorizationMode', 'string'],
  'authorization-webhook-cache-authorized-ttl': ['authorizationWebhookCacheAuthorizedTTL', 'duration'],
  'authorization-webhook-cache-unauthorized-ttl': ['authorizationWebhookCacheUnauthorizedTTL', 'duration'],
  'container-log-max-size': ['containerLogMaxSize', 'bytes'],
  'container-log-max-files': ['containerLogMaxFiles', 'int'],
  'container-log-monitor-interval': ['containerLogMonitorInterval', 'duration'],
  'streaming-connection-idle-timeout': ['streamingConnectionIdleTimeout', 'duration'],
  'root-dir': ['rootDir', 'string'],
  'pod-logs-dir': ['podLogsDir', 'string'],
  'allowed-unsafe-sysctls': ['allowedUnsafeSysctls', 'list'],
  'seccomp-default': ['seccompDefault', 'bool'],
  'node-allocatable': ['nodeAllocatable', 'map'],
  v: ['verbosity', 'int'],
  'node-labels': ['nodeLabels', 'map'],
  'register-with-taints': ['registerWithTaints', 'string'],
  'system-reserved': ['systemReserved', 'map'],
  'kube-reserved': ['kubeReserved', 'map'],
  'node-ip': ['nodeIP', 'string'],
  'node-status-update-frequency': ['nodeStatusUpdateFrequency', 'duration'],
  'node-status-report-frequency': ['nodeStatusReportFrequency', 'duration'],
  'node-lease-duration-seconds': ['nodeLeaseDurationSeconds', 'int'],
  'event-qps': ['eventRecordQPS', 'number'],
  'event-burst': ['eventBurst', 'int'],
  ...GC_FIELDS,
  ...EVICTION_FIELDS,
  ...SHUTDOWN_FIELDS,
  'cgroups-per-qos': ['cgroupsPerQOS', 'bool'],
  'cgroup-driver': ['cgroupDriver', 'string'],
  'cgroup-root': ['cgroupRoot', 'string'],
  'enforce-node-allocatable': ['enforceNodeAllocatable', 'list'],
  'cluster-dns': ['clusterDNS', 'list'],
  'cluster-domain': ['clusterDomain', 'emptyable'],
  'resolv-conf': ['resolvConf', 'emptyable'],
} as const satisfies Record<string, readonly [string, FieldKind]>;

type FieldKind = 'string' | 'int' | 'signed-int' | 'number' | 'duration' | 'map' | 'langle-map' | 'bool' | 'bytes' | 'list' | 'emptyable';

type FlagName = keyof typeof FIELDS;

export const AGENT_USAGE = `usage: shardlet agent [flags]

Runs the node agent. Flags take precedence over --config.

  --config FILE                      YAML config file (KubeletConfiguration field names)
  --pod-manifest-path DIR            static pod manifests directory (staticPodPath)
  --manifest-url URL                 URL of pod manifests, polled (staticPodURL)
  --kubeconfig FILE                  cluster mode: take pods from the API server this kubeconfig names
                                     and write their status back (kubeconfig)
  --kube-api-qps N                   API requests/s of the main client; 0 = unlimited (default 50)
  --kube-api-burst N                 burst of the main client's rate limiter (default 100)
  --container-runtime-endpoint EP    CRI socket, unix:///path; 'embedded' (default) starts the built-in
                                     simulated runtime with its state under --root-dir
  --node-name NAME                   node name (default: hostname)
  --max-pods N                       max pods on this node (default 110)
  --pod-cache-max-entry-bytes N      most bytes one pod's runtime status takes in the pod cache; a larger
                                     one is trimmed, else unstored (health fails) (default 16777216)
  --workers N                        pod-worker threads; 0 = inline on the main thread (default: min(cores, 4), at least 1)
  --sync-frequency DUR               max period between pod resyncs (default 1m)
  --file-check-frequency DUR         manifest dir full resync period (default 20s)
  --http-check-frequency DUR         manifest URL poll period (default 20s)
  --runtime-request-timeout DUR      CRI call deadline (default 2m)
  --pleg-relist-period DUR           PLEG relist period (default 1s)
  --pleg-relist-threshold DUR        PLEG unhealthy after this long without a relist (default 3m)
  --address IP                       bind address of both ports (default 127.0.0.1)
  --port N                           secure kubelet API port (HTTPS, authenticated), 0 disables (default 10250)
  --read-only-port N                 read-only HTTP port for /metrics /healthz /pods, 0 disables (default 10255)
  --tls-cert-file FILE               secure port certificate (default: self-signed under --root-dir/pki)
  --tls-private-key-file FILE        its key
  --client-ca-file FILE              CA bundle for x509 client-certificate authentication
  --optimize-for-size[=BOOL]         V8 keeps every thread's heap near its live size: much less memory
                                     at thousands of pods, more CPU in bursts (default false)
  --heap-growing-percent N           V8 heaps grow to (1 + N/100) × live before a full collection;
                                     0 = V8's heuristic (default 0; 30: less memory, some CPU)
  --lazy-jit[=BOOL]                  V8 (Node 20) optimizes a function after 4x its default warm-up:
                                     less JIT work per thread in the first burst (default true)
  --max-parallel-pod-starts-per-thread N  pod starts in flight per pod-worker thread, oldest
                                     first; 0 = no bound (default 8)
  --anonymous-auth[=BOOL]            unauthenticated requests become system:anonymous (default false)
  --authentication-token-webhook[=BOOL]  check bearer tokens with TokenReview (needs --kubeconfig)
  --authentication-token-webhook-cache-ttl DUR  (default 2m)
  --authorization-mode MODE          AlwaysAllow (default) or Webhook (SubjectAccessReview; needs --kubeconfig)
  --authorization-webhook-cache-authorized-ttl DUR    (default 5m)
  --authorization-webhook-cache-unauthorized-ttl DUR  (default 30s)
  --container-log-max-size Q         rotate a container log past this size, e.g. 10Mi; 0 disables (default 10Mi)
  --container-log-max-files N        log files kept per container, current included (default 5)
  --container-log-monitor-interval DUR  how often log sizes are checked (default 10s)
  --streaming-connection-idle-timeout DUR  close idle exec/attach/port-forward connections (default 4h)
  --root-dir DIR                     agent state directory (default /var/lib/shardlet)
  --pod-logs-dir DIR                 container logs root (default /var/log/pods)
  --allowed-unsafe-sysctls a.b,c.*   sysctls (or prefix* patterns) pods may set beyond the safe set (allowedUnsafeSysctls)
  --seccomp-default[=BOOL]           containers without a seccomp profile get RuntimeDefault, not Unconfined (default false)
  --node-allocatable cpu=2,memory=4Gi  override detected node allocatable
  -v N                               log verbosity (default 0)

Cluster mode (--kubeconfig): the Node, its Lease, mirror pods and events
  --node-labels k=v,...              labels of the Node (kubernetes.io/k8s.io ones only from NodeRestriction's allow-list)
  --register-with-taints k=v:Effect,...  taints of the Node when this agent creates it
  --system-reserved cpu=..,memory=..  subtracted from capacity into allocatable (also ephemeral-storage)
  --kube-reserved cpu=..,memory=..    subtracted from capacity into allocatable
  --node-ip IP                       the Node's InternalIP (default: detected)
  --node-status-update-frequency DUR node status computed this often (default 10s)
  --node-status-report-frequency DUR status written at least this often when unchanged (default 5m)
  --node-lease-duration-seconds N    lease duration; renewed every quarter of it (default 40)
  --event-qps N                      events/s of the events client; 0 = unlimited (default 50)
  --event-burst N                    burst of the events client (default 100)

QoS cgroups (README, Resources and QoS)
  --cgroups-per-qos[=BOOL]           kubepods/burstable/besteffort/pod<uid> cgroups with pod limits; needs root and a
                                     writable cgroupfs with real runtimes; false opts out (default true)
  --cgroup-driver cgroupfs|systemd   how cgroup names are spelled; must match the runtime's (default cgroupfs)
  --cgroup-root PATH                 parent of the kubepods cgroup (default /)
  --enforce-node-allocatable LIST    pods: kubepods limited to allocatable; none (or "") disables (default pods)
DNS
  --cluster-dns IP,...               cluster DNS servers for ClusterFirst pods (clusterDNS; default none:
                                     such pods fall back to the Default policy)
  --cluster-domain DOMAIN            cluster domain, e.g. cluster.local (clusterDomain; default none)
  --resolv-conf FILE                 node resolver config pods' DNS starts from, read at startup;
                                     "" disables it (resolvConf; default /etc/resolv.conf)
  -h, --help                         this help
${GC_USAGE}${EVICTION_USAGE}${SHUTDOWN_USAGE}`;

function fail(where: string, msg: string): never {
  throw new ConfigError('ERR_AGENT_CONFIG', '', `${where}: ${msg}`);
}

function convert(where: string, kind: FieldKind, raw: unknown): string | number | boolean | Record<string, string> | string[] {
  switch (kind) {
    case 'emptyable':
      if (typeof raw !== 'string') fail(where, `must be a string, got ${JSON.stringify(raw)}`);
      return raw;
    case 'list': {
      // A flag: comma-separated (Go's StringSlice); the config file: a YAML list of strings; "" is the empty list.
      const items = typeof raw === 'string' ? raw.split(',') : Array.isArray(raw) ? raw : fail(where, `must be a list of strings, got ${JSON.stringify(raw)}`);
      return items.map((v) => (typeof v === 'string' ? v.trim() : fail(where, `must be a list of strings, got ${JSON.stringify(v)}`))).filter((v) => v !== '');
    }
    case 'string':
      if (typeof raw !== 'string' || raw === '') fail(where, `must be a non-empty string, got ${JSON.stringify(raw)}`);
      return raw;
    case 'int': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(n) || n < 0) fail(where, `must be a non-negative integer, got ${JSON.stringify(raw)}`);
      return n;
    }
    case 'signed-int': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(n)) fail(where, `must be an integer, got ${JSON.stringify(raw)}`);
      return n;
    }
    case 'number': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : NaN;
      if (!Number.isFinite(n) || n < 0) fail(where, `must be a non-negative number, got ${JSON.stringify(raw)}`);
      return n;
    }
    case 'duration': {
      const ms = typeof raw === 'string' ? parseDurationMs(raw) : undefined;
      if (ms === undefined) fail(where, `must be a duration like "20s" or "1m", got ${JSON.stringify(raw)}`);
      return ms;
    }
    case 'bool': {
      if (raw === true || raw === 'true' || raw === '1' || raw === 't' || raw === 'T' || raw === 'True' || raw === 'TRUE') return true;
      if (raw === false || raw === 'false' || raw === '0' || raw === 'f' || raw === 'F' || raw === 'False' || raw === 'FALSE') return false;
      fail(where, `must be true or false, got ${JSON.stringify(raw)}`);
    }
    case 'bytes': {
      const n = typeof raw === 'number' ? raw : parseBytes(raw);
      if (n === undefined || !Number.isSafeInteger(n) || n < 0) fail(where, `must be a byte quantity like "10Mi", got ${JSON.stringify(raw)}`);
      return n;
    }
    case 'map':
    case 'langle-map': {
      // 'langle-map': Go's LangleSeparatedMapStringString ("memory.available<100Mi,…"), a flag only.
      const sep = kind === 'map' ? '=' : '<';
      const out: Record<string, string> = {};
      if (typeof raw === 'string') {
        for (const part of raw.split(',').filter((p) => p.trim() !== '')) {
          const [k, v] = part.split(sep);
          if (!k || v === undefined || v === '') fail(where, `expected key${sep}value pairs, got ${JSON.stringify(part)}`);
          out[k.trim()] = v.trim();
        }
      } else if (raw !== null && typeof raw === 'object') {
        for (const [k, v] of Object.entries(raw)) out[k] = String(v);
      } else fail(where, `expected key${sep}value pairs, got ${JSON.stringify(raw)}`);
      return out;
    }
    default: {
      const never: never = kind;
      return never;
    }
  }
}

const KEY_OF: Record<string, keyof AgentConfig> = {
  staticPodPath: 'podManifestPath',
  staticPodURL: 'manifestURL',
  kubeconfig: 'kubeconfig',
  kubeAPIQPS: 'kubeAPIQPS',
  kubeAPIBurst: 'kubeAPIBurst',
  containerRuntimeEndpoint: 'containerRuntimeEndpoint',
  nodeName: 'nodeName',
  maxPods: 'maxPods',
  podCacheMaxEntryBytes: 'podCacheMaxEntryBytes',
  workers: 'workers',
  optimizeForSize: 'optimizeForSize',
  heapGrowingPercent: 'heapGrowingPercent',
  lazyJit: 'lazyJit',
  maxParallelPodStartsPerThread: 'maxParallelPodStartsPerThread',
  syncFrequency: 'syncFrequencyMs',
  fileCheckFrequency: 'fileCheckFrequencyMs',
  httpCheckFrequency: 'httpCheckFrequencyMs',
  runtimeRequestTimeout: 'runtimeRequestTimeoutMs',
  plegRelistPeriod: 'plegRelistPeriodMs',
  plegRelistThreshold: 'plegRelistThresholdMs',
  address: 'address',
  port: 'port',
  readOnlyPort: 'readOnlyPort',
  tlsCertFile: 'tlsCertFile',
  tlsPrivateKeyFile: 'tlsPrivateKeyFile',
  clientCAFile: 'clientCAFile',
  anonymousAuth: 'anonymousAuth',
  authenticationTokenWebhook: 'authenticationTokenWebhook',
  authenticationTokenWebhookCacheTTL: 'authenticationTokenWebhookCacheTTLMs',
  authorizationMode: 'authorizationMode',
  authorizationWebhookCacheAuthorizedTTL: 'authorizationWebhookCacheAuthorizedTTLMs',
  authorizationWebhookCacheUnauthorizedTTL: 'authorizationWebhookCacheUnauthorizedTTLMs',
  containerLogMaxSize: 'containerLogMaxSize',
  containerLogMaxFiles: 'containerLogMaxFiles',
  containerLogMonitorInterval: 'containerLogMonitorIntervalMs',
  streamingConnectionIdleTimeout: 'streamingConnectionIdleTimeoutMs',
  rootDir: 'rootDir',
  podLogsDir: 'podLogsDir',
  allowedUnsafeSysctls: 'allowedUnsafeSysctls',
  seccompDefault: 'seccompDefault',
  nodeAllocatable: 'nodeAllocatable',
  verbosity: 'verbosity',
  nodeLabels: 'nodeLabels',
  registerWithTaints: 'registerWithTaints',
  systemReserved: 'systemReserved',
  kubeReserved: 'kubeReserved',
  nodeIP: 'nodeIP',
  nodeStatusUpdateFrequency: 'nodeStatusUpdateFrequencyMs',
  nodeStatusReportFrequency: 'nodeStatusReportFrequencyMs',
  nodeLeaseDurationSeconds: 'nodeLeaseDurationSeconds',
  eventRecordQPS: 'eventRecordQPS',
  eventBurst: 'eventBurst',
  ...GC_KEY_OF,
  ...EVICTION_KEY_OF,
  ...SHUTDOWN_KEY_OF,
  cgroupsPerQOS: 'cgroupsPerQOS',
  cgroupDriver: 'cgroupDriver',
  cgroupRoot: 'cgroupRoot',
  enforceNodeAllocatable: 'enforceNodeAllocatable',
  clusterDNS: 'clusterDNS',
  clusterDomain: 'clusterDomain',
  resolvConf: 'resolvConf',
};

const BOOL_FLAGS = new Set(Object.entries(FIELDS).filter(([, [, kind]]) => kind === 'bool').map(([flag]) => `--${flag}`));

/** Go's bool flags: a bare `--flag` means `--flag=true` (and `--flag false` is not a value). */
function bareBoolFlag(arg: string): string {
  return BOOL_FLAGS.has(arg) ? `${arg}=true` : arg;
}

/** Parse argv (and the --config file it names). Returns 'help' for --help. */
export function parseAgentConfig(argv: readonly string[], readFile: (p: string) => string = (p) => fs.readFileSync(p, 'utf8')): AgentConfig | 'help' {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = { config: { type: 'string' }, help: { type: 'boolean', short: 'h' } };
  for (const flag of Object.keys(FIELDS)) options[flag] = { type: 'string' };
  let parsed;
  try {
    parsed = parseArgs({ args: argv.map(bareBoolFlag), options, strict: true, allowPositionals: false });
  } catch (err) {
    fail('flags', err instanceof Error ? err.message : String(err));
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values['help']) return 'help';
  const cfg: Record<string, unknown> = { ...AGENT_DEFAULTS, nodeAllocatable: {}, nodeLabels: {}, registerWithTaints: [], systemReserved: {}, kubeReserved: {}, enforceNodeAllocatable: [...AGENT_DEFAULTS.enforceNodeAllocatable], clusterDNS: [] };
  const configPath = values['config'];
  if (typeof configPath === 'string') {
    let doc: unknown;
    try {
      doc = loadYaml(readFile(configPath));
      // As client-node's loadYaml did before js-yaml was used directly (it pulled the whole client into the main thread).
      if (!doc) throw new Error('Failed to load YAML');
    } catch (err) {
      fail(`--config ${configPath}`, err instanceof Error ? err.message.split('\n')[0]! : String(err));
    }
    if (doc !== null && doc !== undefined && typeof doc !== 'object') fail(`--config ${configPath}`, 'must be a YAML mapping');
    const known = new Map<string, FieldKind>(Object.values(FIELDS).map(([k, kind]) => [k, kind]));
    for (const [key, raw] of Object.entries((doc ?? {}) as Record<string, unknown>)) {
      if (key === 'kind' || key === 'apiVersion') continue;
      const kind = known.get(key);
      if (!kind) fail(`--config ${configPath}`, `unknown field ${JSON.stringify(key)}`);
      const v = (kind === 'int' || kind === 'signed-int' || kind === 'number' || kind === 'bytes') && typeof raw === 'number' ? raw : kind === 'map' || kind === 'langle-map' || kind === 'bool' || kind === 'list' ? raw : kind === 'int' || kind === 'signed-int' ? String(raw) : raw;
      cfg[KEY_OF[key]!] = convert(`${configPath}: ${key}`, kind, v);
    }
  }
  for (const [flag, [key, kind]] of Object.entries(FIELDS) as [FlagName, readonly [string, FieldKind]][]) {
    const raw = values[flag];
    if (typeof raw === 'string') cfg[KEY_OF[key]!] = convert(`--${flag}`, kind, raw);
  }
  if (typeof cfg['registerWithTaints'] === 'string') {
    try {
      cfg['registerWithTaints'] = parseTaints(cfg['registerWithTaints']);
    } catch (err) {
      fail('--register-with-taints', err instanceof NodeLabelError ? err.message : String(err));
    }
  }
  const out = cfg as unknown as AgentConfig;
  validate(out);
  if (out.podManifestPath) out.podManifestPath = path.resolve(out.podManifestPath);
  if (out.kubeconfig) out.kubeconfig = path.resolve(out.kubeconfig);
  out.nodeName = out.nodeName.toLowerCase();
  return out;
}

function validate(c: AgentConfig): void {
  if (!c.podManifestPath && !c.manifestURL && !c.kubeconfig) fail('flags', 'no pod source: set --kubeconfig, --pod-manifest-path and/or --manifest-url');
  if (c.kubeAPIQPS > 100_000) fail('--kube-api-qps', `must be at most 100000, got ${c.kubeAPIQPS}`);
  if (c.kubeAPIBurst < 1 || c.kubeAPIBurst > 100_000) fail('--kube-api-burst', `must be in [1, 100000], got ${c.kubeAPIBurst}`);
  if (c.manifestURL && !/^https?:\/\//.test(c.manifestURL)) fail('--manifest-url', `must be an http(s) URL, got ${JSON.stringify(c.manifestURL)}`);
  if (c.containerRuntimeEndpoint !== 'embedded' && !c.containerRuntimeEndpoint.startsWith('unix://') && !c.containerRuntimeEndpoint.startsWith('/')) {
    fail('--container-runtime-endpoint', `must be unix:///path or embedded, got ${JSON.stringify(c.containerRuntimeEndpoint)}`);
  }
  if (c.maxPods < 1) fail('--max-pods', 'must be at least 1');
  if (c.podCacheMaxEntryBytes < 4096 || c.podCacheMaxEntryBytes > 64 << 20) fail('--pod-cache-max-entry-bytes', `must be in [4096, 67108864], got ${c.podCacheMaxEntryBytes}`);
  if (c.workers > 64) fail('--workers', `must be at most 64, got ${c.workers}`);
  if (c.maxParallelPodStartsPerThread > 10_000) fail('--max-parallel-pod-starts-per-thread', `must be in [0, 10000], got ${c.maxParallelPodStartsPerThread}`);
  if (c.heapGrowingPercent > 1000) fail('--heap-growing-percent', `must be in [0, 1000], got ${c.heapGrowingPercent}`);
  if (c.port > 65535) fail('--port', `must be at most 65535, got ${c.port}`);
  if (c.readOnlyPort > 65535) fail('--read-only-port', `must be at most 65535, got ${c.readOnlyPort}`);
  if (c.port !== 0 && c.port === c.readOnlyPort) fail('--port', `must differ from --read-only-port (${c.readOnlyPort})`);
  if ((c.tlsCertFile === undefined) !== (c.tlsPrivateKeyFile === undefined)) fail('--tls-cert-file', 'and --tls-private-key-file must be given together');
  if (c.authorizationMode !== 'AlwaysAllow' && c.authorizationMode !== 'Webhook') fail('--authorization-mode', `must be AlwaysAllow or Webhook, got ${JSON.stringify(c.authorizationMode)}`);
  if (c.authorizationMode === 'Webhook' && !c.kubeconfig) fail('--authorization-mode', 'Webhook needs --kubeconfig (it asks the API server)');
  if (c.authenticationTokenWebhook && !c.kubeconfig) fail('--authentication-token-webhook', 'needs --kubeconfig (it asks the API server)');
  if (c.containerLogMaxFiles < 2) fail('--container-log-max-files', `must be at least 2, got ${c.containerLogMaxFiles}`);
  if (c.containerLogMonitorIntervalMs < 100) fail('--container-log-monitor-interval', 'must be at least 100ms');
  if (!(c.streamingConnectionIdleTimeoutMs >= 1_000)) fail('--streaming-connection-idle-timeout', 'must be at least 1s');
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/i.test(c.nodeName)) fail('--node-name', `must be a DNS-1123 subdomain, got ${JSON.stringify(c.nodeName)}`);
  if (c.syncFrequencyMs < 1_000) fail('--sync-frequency', 'must be at least 1s');
  if (c.plegRelistPeriodMs < 10) fail('--pleg-relist-period', 'must be at least 10ms');
  for (const k of Object.keys(c.nodeAllocatable)) if (k !== 'cpu' && k !== 'memory' && k !== 'ephemeral-storage' && k !== 'pods') fail('--node-allocatable', `unknown resource ${JSON.stringify(k)} (cpu, memory, ephemeral-storage, pods)`);
  for (const [flag, m] of [['--system-reserved', c.systemReserved], ['--kube-reserved', c.kubeReserved]] as const) {
    for (const k of Object.keys(m)) if (k !== 'cpu' && k !== 'memory' && k !== 'ephemeral-storage') fail(flag, `unknown resource ${JSON.stringify(k)} (cpu, memory, ephemeral-storage)`);
  }
  try {
    // Quantities of --system-reserved, --kube-reserved and --node-allocatable, checked once here.
    computeNodeResources({ cpus: 1, memoryBytes: 1, ephemeralStorageBytes: 1 }, { maxPods: c.maxPods, systemReserved: c.systemReserved, kubeReserved: c.kubeReserved, allocatableOverride: c.nodeAllocatable });
  } catch (err) {
    fail('flags', err instanceof NodeResourcesError ? err.message : String(err));
  }
  try {
    validateNodeLabels(c.nodeLabels);
  } catch (err) {
    fail('--node-labels', err instanceof NodeLabelError ? err.message : String(err));
  }
  try {
    new SysctlAllowlist(c.allowedUnsafeSysctls);
  } catch (err) {
    fail('--allowed-unsafe-sysctls', err instanceof SysctlAllowlistError ? err.message : String(err));
  }
  if (c.nodeIP !== undefined && net.isIP(c.nodeIP) === 0) fail('--node-ip', `must be an IP address, got ${JSON.stringify(c.nodeIP)}`);
  if (c.nodeStatusUpdateFrequencyMs < 1_000) fail('--node-status-update-frequency', 'must be at least 1s');
  if (c.nodeStatusReportFrequencyMs < c.nodeStatusUpdateFrequencyMs) fail('--node-status-report-frequency', 'must be at least --node-status-update-frequency');
  if (c.nodeLeaseDurationSeconds < 4 || c.nodeLeaseDurationSeconds > 3600) fail('--node-lease-duration-seconds', `must be in [4, 3600], got ${c.nodeLeaseDurationSeconds}`);
  if (c.eventRecordQPS > 100_000) fail('--event-qps', `must be at most 100000, got ${c.eventRecordQPS}`);
  if (c.eventBurst < 1 || c.eventBurst > 100_000) fail('--event-burst', `must be in [1, 100000], got ${c.eventBurst}`);
  const gc = gcConfigProblem(c);
  if (gc) fail(gc.flag, gc.message);
  const eviction = evictionConfigProblem(c);
  if (eviction) fail(eviction.flag, eviction.message);
  const shutdown = shutdownConfigProblem(c);
  if (shutdown) fail(shutdown.flag, shutdown.message);
  validateCgroupFlags(c);
}

/** --cgroup-driver, --cgroup-root, --enforce-node-allocatable and --cgroups-per-qos, together. */
function validateCgroupFlags(c: AgentConfig): void {
  if (!(CGROUP_DRIVERS as readonly string[]).includes(c.cgroupDriver)) fail('--cgroup-driver', `must be cgroupfs or systemd, got ${JSON.stringify(c.cgroupDriver)}`);
  try {
    parseCgroupRoot(c.cgroupDriver, c.cgroupRoot);
  } catch (err) {
    fail('--cgroup-root', err instanceof CgroupNameError ? err.message.replace(/^--cgroup-root: /, '') : String(err));
  }
  const enforce = c.enforceNodeAllocatable;
  for (const v of enforce) {
    if (v === 'pods') continue;
    if (v === 'none') {
      if (enforce.length > 1) fail('--enforce-node-allocatable', 'may not contain additional enforcements when "none" is specified');
      continue;
    }
    if (['system-reserved', 'kube-reserved', 'system-reserved-compressible', 'kube-reserved-compressible'].includes(v)) {
      fail('--enforce-node-allocatable', `${JSON.stringify(v)} is not supported by shardlet (it needs --system-reserved-cgroup / --kube-reserved-cgroup, which shardlet does not have); valid: pods, none`);
    }
    fail('--enforce-node-allocatable', `invalid option ${JSON.stringify(v)}; valid options are "pods" and "none"`);
  }
  c.enforceNodeAllocatable = enforce.filter((v) => v !== 'none');
  if (!c.cgroupsPerQOS && c.enforceNodeAllocatable.length > 0) {
    fail('--enforce-node-allocatable', 'is not supported unless --cgroups-per-qos is turned on (as in the kubelet); with --cgroups-per-qos=false also set --enforce-node-allocatable=none');
  }
  validateDnsFlags(c);
}

/** --cluster-dns, --cluster-domain, --resolv-conf: they end up in every pod's resolv.conf. */
function validateDnsFlags(c: AgentConfig): void {
  for (const ip of c.clusterDNS) if (net.isIP(ip) === 0) fail('--cluster-dns', `must be a list of IP addresses, got ${JSON.stringify(ip)}`);
  const sub = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
  const domain = c.clusterDomain.endsWith('.') ? c.clusterDomain.slice(0, -1) : c.clusterDomain;
  if (c.clusterDomain !== '' && (domain.length > 253 || !sub.test(domain))) fail('--cluster-domain', `must be a DNS-1123 subdomain, got ${JSON.stringify(c.clusterDomain)}`);
  if (c.resolvConf.includes('\0')) fail('--resolv-conf', 'must not contain NUL');
}
