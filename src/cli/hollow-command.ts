/**
 * `shardlet hollow`: N hollow nodes in this process (src/main/hollow). Order:
 *   1. flags/config validated, the per-node agent config parsed once (hollow-config.ts);
 *   2. preflight against the API server (hollow-preflight.ts): not a node identity, the node
 *      verbs allowed, no name taken — all before anything is registered (exit 2 on bad input);
 *   3. the nodes start (runtime, then agent), `--start-concurrency` at a time; a node that fails
 *      is logged and stopped alone;
 *   4. the fault script is armed (times from here), the metrics/fault endpoint serves;
 *   5. SIGTERM/SIGINT stops every node (pods stay in the runtimes' saved state) and exits 0.
 */
import { realClock, realRandom } from '../shared/clock/clock.js';
import { createLogger } from '../shared/logging/logger.js';
import { ApiError } from '../main/apiserver/api-errors.js';
import { HttpsTransport } from '../main/apiserver/https-transport.js';
import { applyAgentV8Flags } from '../main/agent/v8-flags.js';
import { hollowAgentConfig } from '../main/hollow/hollow-agent-config.js';
import { HOLLOW_USAGE, HollowConfigError, hollowNodeNames, parseHollowConfig, type HollowConfig } from '../main/hollow/hollow-config.js';
import { FaultSchedule, FaultScriptError } from '../main/hollow/hollow-faults.js';
import { HollowFleet } from '../main/hollow/hollow-fleet.js';
import { HollowHttp } from '../main/hollow/hollow-http.js';
import { hollowPreflight, HollowPreflightError } from '../main/hollow/hollow-preflight.js';
import { kubeconfigClientCert, preflightApi } from '../main/hollow/hollow-preflight-api.js';
import { hollowSimFactory } from './hollow-sim.js';

const err = (msg: string): void => void process.stderr.write(`shardlet hollow: ${msg}\n`);

/** Steps 1–2; returns the config or an exit code. */
async function validate(argv: string[]): Promise<HollowConfig | number> {
  let c: HollowConfig | 'help';
  try {
    c = parseHollowConfig(argv);
    if (c === 'help') {
      process.stdout.write(HOLLOW_USAGE);
      return 0;
    }
    hollowAgentConfig(c, hollowNodeNames(c)[0] as string);
  } catch (e) {
    if (e instanceof HollowConfigError || e instanceof FaultScriptError) {
      err(`${e.message}\n\n${HOLLOW_USAGE}`);
      return 2;
    }
    if (e instanceof Error && (e as NodeJS.ErrnoException).code === 'ENOENT') {
      err(e.message);
      return 2;
    }
    throw e;
  }
  let transport: HttpsTransport | undefined;
  try {
    transport = await HttpsTransport.fromKubeconfig({ kubeconfigPath: c.kubeconfig, maxSockets: 4 });
    await hollowPreflight({ kubeconfig: c.kubeconfig, clientCert: await kubeconfigClientCert(c.kubeconfig), names: hollowNodeNames(c), api: preflightApi(transport, realClock) });
  } catch (e) {
    if (e instanceof HollowPreflightError || (e instanceof ApiError && e.code === 'ERR_API_KUBECONFIG')) {
      err(e.message);
      return 2;
    }
    if (e instanceof ApiError) {
      err(`preflight against the API server failed: ${e.message}`);
      return 1;
    }
    throw e;
  } finally {
    transport?.close();
  }
  return c;
}

export async function run(argv: string[]): Promise<number> {
  const v = await validate(argv);
  if (typeof v === 'number') return v;
  const c = v;
  const logger = createLogger({ verbosity: c.verbosity, fields: { component: 'hollow' } });
  applyAgentV8Flags(hollowAgentConfig(c, hollowNodeNames(c)[0] as string));
  const fleet = new HollowFleet({
    config: c,
    runtimes: hollowSimFactory(c.simProfile, (msg) => logger.error('sim-runtime', { error: msg })),
    clock: realClock,
    random: realRandom,
    logger,
    nodeLogger: (node) => createLogger({ verbosity: c.verbosity, fields: { node } }),
  });
  const httpServer = c.metricsPort > 0
    ? new HollowHttp({ names: fleet.names, metricsText: () => fleet.metricsText(), nodeStates: () => fleet.nodeStates(), applyFault: (s) => fleet.applyFault(s) })
    : undefined;
  if (httpServer) {
    try {
      const a = await httpServer.listen(c.metricsPort);
      logger.info('hollow metrics and faults', { address: `http://127.0.0.1:${a.port}` });
    } catch (e) {
      err(`--metrics-port ${c.metricsPort}: ${e instanceof Error ? e.message : String(e)}`);
      return 2;
    }
  }
  let stopping = false;
  const stopped = new Promise<void>((resolve) => {
    const onSignal = (sig: string): void => {
      if (stopping) {
        logger.error('second signal: exiting now', { signal: sig });
        process.exit(1);
      }
      stopping = true;
      logger.info('received signal, stopping hollow nodes', { signal: sig });
      resolve();
    };
    process.on('SIGTERM', () => onSignal('SIGTERM'));
    process.on('SIGINT', () => onSignal('SIGINT'));
  });
  const t0 = realClock.monotonic();
  logger.info('starting hollow nodes', { nodes: c.nodes, prefix: c.nodeNamePrefix, maxPods: c.maxPods, workers: c.workers, simProfile: c.simProfile });
  // A signal during the start stops at once (nodes not yet started are never started).
  const started = await Promise.race([fleet.start(), stopped.then(() => undefined)]);
  if (started === undefined) {
    await fleet.stop();
    await httpServer?.close();
    return 0;
  }
  logger.info('hollow nodes started', { running: started.running, failed: started.failed.length, seconds: (realClock.monotonic() - t0) / 1000 });
  for (const f of started.failed.slice(0, 20)) logger.error('hollow node failed', f);
  const faults = new FaultSchedule({
    clock: realClock,
    steps: c.faults,
    apply: (s) =>
      void fleet.applyFault(s).then(
        (what) => logger.info('fault applied', { step: `${s.node} ${s.action.kind}`, result: what }),
        (e: unknown) => logger.error('fault not applied', { step: `${s.node} ${s.action.kind}`, error: e instanceof Error ? e.message : String(e) }),
      ),
  });
  faults.start();
  await stopped;
  faults.close();
  const force = setTimeout(() => {
    logger.error('stopping took longer than 30s: exiting');
    process.exit(1);
  }, 30_000);
  force.unref();
  await fleet.stop();
  await httpServer?.close();
  return 0;
}
