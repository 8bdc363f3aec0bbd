/**
 * `shardlet hollow` configuration: flags, or a YAML/JSON file (--config) with the same fields in
 * camelCase; flags win. Validated once, up front, before anything is registered: every error
 * names the flag (or file field) and the bad value.
 *
 * Per-node agent settings come from --agent-config, an ordinary `shardlet agent --config` file
 * every hollow node's agent reads (QPS, lease duration, status frequencies, ...); the hollow
 * command sets only what must differ per node (name, root dir, runtime socket) and what one
 * process cannot share (ports off, no QoS cgroups).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { load as loadYaml } from 'js-yaml';
import { parseFaultLines, type FaultStep } from './hollow-faults.js';

/** One process's ceiling: beyond it, run several hollow processes. */
export const MAX_HOLLOW_NODES = 5_000;
/** Unix socket paths are limited to 107 bytes (sun_path) on Linux. */
const MAX_SOCKET_PATH = 107;

export interface HollowConfig {
  kubeconfig: string;
  nodes: number;
  nodeNamePrefix: string;
  maxPods: number;
  /** Pod-worker threads per node; 0 (default) runs each node's pod workers inline. */
  workers: number;
  rootDir: string;
  /** A `shardlet agent --config` file every node's agent reads; '' = agent defaults. */
  agentConfig: string;
  /** Simulated runtime latency profile, as `shardlet sim-runtime --profile`. */
  simProfile: 'zero' | 'containerd';
  /** Hollow metrics and fault endpoint (127.0.0.1); 0 disables. */
  metricsPort: number;
  /** Nodes started at once. */
  startConcurrency: number;
  /** Fault script steps (--faults file and --fault flags, in that order). */
  faults: FaultStep[];
  verbosity: number;
}

export const HOLLOW_DEFAULTS: Readonly<Omit<HollowConfig, 'kubeconfig' | 'nodes' | 'faults'>> = Object.freeze({
  nodeNamePrefix: 'hollow-',
  maxPods: 110,
  workers: 0,
  rootDir: '/var/lib/shardlet-hollow',
  agentConfig: '',
  simProfile: 'zero',
  metricsPort: 10256,
  startConcurrency: 16,
  verbosity: 0,
});

export const HOLLOW_USAGE = `usage: shardlet hollow --kubeconfig FILE --nodes N [flags]

Runs N hollow nodes in this process: each registers its own Node and Lease and runs the agent's
pod source, sync loop, pod workers, PLEG, probes, status writer and events against its own
simulated runtime. Flags take precedence over --config.

  --config FILE              YAML/JSON file with these fields in camelCase (kubeconfig, nodes, ...)
  --kubeconfig FILE          credentials that may create any Node and Lease (not a node identity)
  --nodes N                  hollow nodes, 1..${MAX_HOLLOW_NODES}
  --node-name-prefix P       node names are P0 .. P(N-1) (default hollow-)
  --max-pods N               max pods per node (default 110)
  --workers W                pod-worker threads per node; 0 = inline (default 0)
  --root-dir DIR             per-node state under DIR/<node> (default /var/lib/shardlet-hollow)
  --agent-config FILE        a \`shardlet agent --config\` file every node's agent reads
  --sim-profile zero|containerd  simulated runtime latencies (default zero, as the embedded runtime)
  --metrics-port N           127.0.0.1:N serves /metrics (node-labelled) and POST /faults; 0 disables (default 10256)
  --start-concurrency N      nodes started at once (default 16)
  --faults FILE              fault script, one step a line (see below)
  --fault STEP               one fault step (repeatable)
  -v N                       log verbosity (default 0)

Fault steps: AT NODE ACTION [ARG], AT a duration after all nodes started (0s, 30s, 2m):
  lease-stop | lease-resume          the node's heartbeats (lease, node status) stop: the node
                                     lifecycle controller marks it NotReady (Unknown) / they resume
  runtime-down | runtime-up          the node's simulated runtime stops serving / serves again
  crash NAMESPACE/POD                the pod's running containers exit with code 137
`;

export class HollowConfigError extends Error {
  override readonly name = 'HollowConfigError';
  readonly code = 'ERR_HOLLOW_CONFIG';
}

const fail = (field: string, msg: string): never => {
  throw new HollowConfigError(`${field}: ${msg}`);
};

function int(field: string, v: unknown, min: number, max: number): number {
  const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) return fail(field, `must be an integer, got ${JSON.stringify(v)}`);
  if (n < min || n > max) return fail(field, `must be in ${min}..${max}, got ${n}`);
  return n;
}

function str(field: string, v: unknown): string {
  if (typeof v !== 'string') return fail(field, `must be a string, got ${JSON.stringify(v)}`);
  return v;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The node names of a hollow set, in index order. */
export function hollowNodeNames(c: Pick<HollowConfig, 'nodes' | 'nodeNamePrefix'>): string[] {
  return Array.from({ length: c.nodes }, (_, i) => `${c.nodeNamePrefix}${i}`);
}

const FILE_FIELDS = new Set(['kubeconfig', 'nodes', 'nodeNamePrefix', 'maxPods', 'workers', 'rootDir', 'agentConfig', 'simProfile', 'metricsPort', 'startConcurrency', 'faults', 'verbosity']);

function readConfigFile(file: string, readFile: (p: string) => string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = loadYaml(readFile(file), { json: true });
  } catch (err) {
    return fail('--config', `${file}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) return fail('--config', `${file}: must be a mapping`);
  const o = doc as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!FILE_FIELDS.has(k)) fail(`--config ${file}`, `unknown field ${JSON.stringify(k)}`);
  return o;
}

/** Parses and validates; 'help' for --help. Throws HollowConfigError naming the field. */
export function parseHollowConfig(argv: readonly string[], readFile: (p: string) => string = (p) => fs.readFileSync(p, 'utf8')): HollowConfig | 'help' {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        config: { type: 'string' },
        kubeconfig: { type: 'string' },
        nodes: { type: 'string' },
        'node-name-prefix': { type: 'string' },
        'max-pods': { type: 'string' },
        workers: { type: 'string' },
        'root-dir': { type: 'string' },
        'agent-config': { type: 'string' },
        'sim-profile': { type: 'string' },
        'metrics-port': { type: 'string' },
        'start-concurrency': { type: 'string' },
        faults: { type: 'string' },
        fault: { type: 'string', multiple: true },
        v: { type: 'string', short: 'v' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw new HollowConfigError(err instanceof Error ? err.message : String(err));
  }
  if (values['help'] === true) return 'help';
  const file = typeof values['config'] === 'string' ? readConfigFile(values['config'], readFile) : {};
  const pick = (flag: string, field: string): unknown => (values[flag] !== undefined ? values[flag] : file[field]);
  const name = (flag: string, field: string): string => (values[flag] !== undefined ? `--${flag}` : `${field} (--config)`);

  const kubeconfig = pick('kubeconfig', 'kubeconfig');
  if (kubeconfig === undefined || kubeconfig === '') fail('--kubeconfig', 'is required (hollow nodes register with an API server)');
  const nodesRaw = pick('nodes', 'nodes');
  if (nodesRaw === undefined) fail('--nodes', 'is required');
  const c: HollowConfig = {
    kubeconfig: str(name('kubeconfig', 'kubeconfig'), kubeconfig),
    nodes: int(name('nodes', 'nodes'), nodesRaw, 1, MAX_HOLLOW_NODES),
    nodeNamePrefix: str(name('node-name-prefix', 'nodeNamePrefix'), pick('node-name-prefix', 'nodeNamePrefix') ?? HOLLOW_DEFAULTS.nodeNamePrefix),
    maxPods: int(name('max-pods', 'maxPods'), pick('max-pods', 'maxPods') ?? HOLLOW_DEFAULTS.maxPods, 1, 10_000),
    workers: int(name('workers', 'workers'), pick('workers', 'workers') ?? HOLLOW_DEFAULTS.workers, 0, 64),
    rootDir: path.resolve(str(name('root-dir', 'rootDir'), pick('root-dir', 'rootDir') ?? HOLLOW_DEFAULTS.rootDir)),
    agentConfig: str(name('agent-config', 'agentConfig'), pick('agent-config', 'agentConfig') ?? ''),
    simProfile: HOLLOW_DEFAULTS.simProfile,
    metricsPort: int(name('metrics-port', 'metricsPort'), pick('metrics-port', 'metricsPort') ?? HOLLOW_DEFAULTS.metricsPort, 0, 65_535),
    startConcurrency: int(name('start-concurrency', 'startConcurrency'), pick('start-concurrency', 'startConcurrency') ?? HOLLOW_DEFAULTS.startConcurrency, 1, 256),
    faults: [],
    verbosity: int(name('v', 'verbosity'), pick('v', 'verbosity') ?? 0, 0, 10),
  };
  const profile = pick('sim-profile', 'simProfile') ?? HOLLOW_DEFAULTS.simProfile;
  if (profile !== 'zero' && profile !== 'containerd') fail(name('sim-profile', 'simProfile'), `must be zero or containerd, got ${JSON.stringify(profile)}`);
  c.simProfile = profile as HollowConfig['simProfile'];
  // Threads are per node (each node's own pool): bound the process's total.
  if (c.workers * c.nodes > 64) fail('--workers', `${c.workers} threads per node × ${c.nodes} nodes is over 64 threads in one process; use --workers 0 (inline)`);
  // Every name must be a DNS-1123 subdomain (a Node name); the longest is the last.
  const longest = `${c.nodeNamePrefix}${c.nodes - 1}`;
  if (longest.length > 253 || !DNS_SUBDOMAIN.test(`${c.nodeNamePrefix}0`) || !DNS_SUBDOMAIN.test(longest)) {
    fail(name('node-name-prefix', 'nodeNamePrefix'), `${JSON.stringify(c.nodeNamePrefix)} + index must be a DNS-1123 subdomain (lowercase alphanumerics, '-', '.'; at most 253), e.g. ${JSON.stringify(longest)} is not`);
  }
  const sock = hollowNodePaths(c, longest).socket;
  if (Buffer.byteLength(sock) > MAX_SOCKET_PATH) fail(name('root-dir', 'rootDir'), `too long: the runtime socket ${sock} is over ${MAX_SOCKET_PATH} bytes`);
  const names = new Set(hollowNodeNames(c));
  const fileFaults = pick('faults', 'faults');
  if (typeof fileFaults === 'string' && values['faults'] !== undefined) {
    c.faults.push(...parseFaultLines(readFile(fileFaults), `--faults ${fileFaults}`, names));
  } else if (Array.isArray(fileFaults)) {
    c.faults.push(...parseFaultLines(fileFaults.map((l) => str('faults (--config)', l)).join('\n'), 'faults (--config)', names));
  } else if (typeof fileFaults === 'string') {
    c.faults.push(...parseFaultLines(readFile(fileFaults), `faults (--config) ${fileFaults}`, names));
  } else if (fileFaults !== undefined) {
    fail('faults (--config)', 'must be a file name or a list of steps');
  }
  for (const f of (values['fault'] as string[] | undefined) ?? []) c.faults.push(...parseFaultLines(f, '--fault', names));
  return c;
}

/** Where one node's state lives: DIR/<node>/ with its runtime socket, state file and pod logs. */
export function hollowNodePaths(c: Pick<HollowConfig, 'rootDir'>, node: string): { dir: string; socket: string; simState: string; podLogs: string } {
  const dir = path.join(c.rootDir, node);
  return { dir, socket: path.join(dir, 'sim.sock'), simState: path.join(dir, 'sim-runtime', 'state.json'), podLogs: path.join(dir, 'pod-logs') };
}
