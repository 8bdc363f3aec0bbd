/**
 * `shardlet sim-runtime`: runs the simulated CRI runtime (src/simruntime) on a unix socket
 * with the real clock until SIGTERM/SIGINT, which save state (with --state), remove the socket
 * and exit 0. Imports only the simulated runtime, never agent code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { FaultConfigError, validateFaults } from '../simruntime/sim-faults.js';
import { CONTAINERD_PROFILE, parseProfile, ProfileError, ZERO_PROFILE, type LatencyProfile } from '../simruntime/sim-latency.js';
import { SimulatedRuntime } from '../simruntime/simulated-runtime.js';

const USAGE = `usage: shardlet sim-runtime --socket PATH [flags]

  --socket PATH                 unix socket to serve CRI runtime.v1 (and v1alpha2) on (required; a stale one is removed)
  --profile zero|containerd|F   latency profile: none (default), containerd 1.6 on 2 cores, or a JSON file
  --state FILE                  persist sandboxes/containers/images here; reloaded at start
  --state-interval-ms N         periodic state save interval (default 5000; 0 = only at exit)
  --root DIR                    root reported in ImageFsInfo (default /var/lib/shardlet-sim)
  --image REF                   image present at start (repeatable), like an imported image
  --container-events on|off     GetContainerEvents stream (default on; containerd 1.6.20 is off)
  --fault-unavailable-rate R    fraction of calls answered UNAVAILABLE (before taking effect)
  --fault-deadline-rate R       fraction answered DEADLINE_EXCEEDED (after taking effect)
  --fault-hang-rate R           fraction never answered (the client's deadline fires)
  --fault-methods A,B           limit faults to these CRI methods (default: all unary)
  --exec-log FILE               append one line per ExecSync: epoch ms, container id, command (JSON)
`;

function loadProfile(v: string): LatencyProfile {
  if (v === 'zero') return ZERO_PROFILE;
  if (v === 'containerd') return CONTAINERD_PROFILE;
  let doc: unknown;
  try {
    doc = JSON.parse(fs.readFileSync(v, 'utf8'));
  } catch (e) {
    throw new ProfileError(`--profile ${v}: not zero, containerd, or a readable JSON file (${(e as Error).message})`);
  }
  return parseProfile(doc);
}

function rate(v: string | undefined, flag: string): number {
  if (v === undefined) return 0;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new FaultConfigError(`${flag} must be a number, got ${JSON.stringify(v)}`);
  return n;
}

export async function run(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        socket: { type: 'string' },
        profile: { type: 'string', default: 'zero' },
        state: { type: 'string' },
        'state-interval-ms': { type: 'string' },
        root: { type: 'string' },
        image: { type: 'string', multiple: true },
        'container-events': { type: 'string', default: 'on' },
        'fault-unavailable-rate': { type: 'string' },
        'fault-deadline-rate': { type: 'string' },
        'fault-hang-rate': { type: 'string' },
        'fault-methods': { type: 'string' },
        'exec-log': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    process.stderr.write(`shardlet sim-runtime: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (!values.socket) {
    process.stderr.write(`shardlet sim-runtime: --socket is required\n\n${USAGE}`);
    return 2;
  }
  let rt: SimulatedRuntime;
  try {
    const events = values['container-events'];
    if (events !== 'on' && events !== 'off') throw new ProfileError('--container-events must be on or off');
    const faults = validateFaults({
      unavailableRate: rate(values['fault-unavailable-rate'], '--fault-unavailable-rate'),
      deadlineRate: rate(values['fault-deadline-rate'], '--fault-deadline-rate'),
      hangRate: rate(values['fault-hang-rate'], '--fault-hang-rate'),
      methods: values['fault-methods'] ? values['fault-methods'].split(',').filter((m) => m !== '') : [],
    });
    const interval = values['state-interval-ms'] === undefined ? undefined : Number(values['state-interval-ms']);
    rt = await SimulatedRuntime.start({
      socketPath: path.resolve(values.socket),
      profile: loadProfile(values.profile),
      faults,
      containerEvents: events === 'on',
      preloadImages: values.image ?? [],
      ...(values.state ? { statePath: path.resolve(values.state) } : {}),
      ...(interval !== undefined ? { stateSaveIntervalMs: interval } : {}),
      ...(values.root ? { root: values.root } : {}),
      ...(values['exec-log'] ? { execLogPath: path.resolve(values['exec-log']) } : {}),
    });
  } catch (e) {
    process.stderr.write(`shardlet sim-runtime: ${(e as Error).message}\n`);
    return 1;
  }
  process.stderr.write(`shardlet sim-runtime: serving ${rt.endpoint} (profile ${rt.latency.profile.name})\n`);
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (sig: string): void => {
      if (stopping) return;
      stopping = true;
      process.stderr.write(`shardlet sim-runtime: ${sig}, shutting down\n`);
      rt.close().then(
        () => resolve(0),
        (e: unknown) => {
          process.stderr.write(`shardlet sim-runtime: shutdown failed: ${String(e)}\n`);
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
