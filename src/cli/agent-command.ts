/**
 * `shardlet agent`: parse flags/config, run the agent until SIGTERM/SIGINT, then stop it
 * gracefully (pods keep running). A second signal, or 5 s without finishing, exits at once.
 */
import { realClock, realRandom } from '../shared/clock/clock.js';
import { Agent } from '../main/agent/agent.js';
import { applyAgentV8Flags } from '../main/agent/v8-flags.js';
import { AGENT_USAGE, parseAgentConfig } from '../main/agent/agent-config.js';
import { ConfigError } from '../shared/manifest/config-errors.js';
import { createLogger } from '../shared/logging/logger.js';
import { startEmbeddedRuntime, type EmbeddedRuntime } from './embedded-runtime.js';
import { HEAP_SNAPSHOT_DIR_ENV, HeapSnapshotConfigError, installHeapSnapshots } from './heap-snapshots.js';

export async function run(argv: string[]): Promise<number> {
  let config;
  try {
    config = parseAgentConfig(argv);
  } catch (err) {
    if (err instanceof ConfigError && err.code === 'ERR_AGENT_CONFIG') {
      process.stderr.write(`shardlet agent: ${err.message}\n\n${AGENT_USAGE}`);
      return 2;
    }
    throw err;
  }
  if (config === 'help') {
    process.stdout.write(AGENT_USAGE);
    return 0;
  }
  const logger = createLogger({ verbosity: config.verbosity });
  // Before any worker thread exists (v8-flags.ts).
  const v8Flags = applyAgentV8Flags(config);
  logger.v(1).info('V8 flags', { set: v8Flags.join(' ') });
  try {
    // Before any thread starts, so every worker is seen (a memory diagnostic; see heap-snapshots.ts).
    installHeapSnapshots(process.env[HEAP_SNAPSHOT_DIR_ENV], logger);
  } catch (err) {
    if (!(err instanceof HeapSnapshotConfigError)) throw err;
    process.stderr.write(`shardlet agent: ${err.message}
`);
    return 2;
  }
  let embedded: EmbeddedRuntime | undefined;
  if (config.containerRuntimeEndpoint === 'embedded') {
    embedded = await startEmbeddedRuntime(config.rootDir, (line) => logger.v(1).info('sim-runtime', { line }));
    config = { ...config, containerRuntimeEndpoint: embedded.endpoint };
    logger.info(embedded.adopted ? 'reusing the embedded simulated runtime left running by an earlier agent' : 'started the embedded simulated runtime', { endpoint: embedded.endpoint });
  }
  const agent = new Agent({ config, clock: realClock, random: realRandom, logger });
  const stopped = new Promise<void>((resolve) => {
    let signals = 0;
    const onSignal = (sig: string): void => {
      signals++;
      if (signals > 1) {
        logger.error('second signal: exiting now', { signal: sig });
        process.exit(1);
      }
      logger.info('received signal, shutting down', { signal: sig });
      const force = setTimeout(() => {
        logger.error('shutdown took longer than 5s: exiting');
        process.exit(1);
      }, 5_000);
      force.unref();
      agent
        .stop()
        .then(() => embedded?.stop())
        .then(resolve, resolve);
    };
    process.on('SIGTERM', () => onSignal('SIGTERM'));
    process.on('SIGINT', () => onSignal('SIGINT'));
  });
  try {
    await agent.start();
  } catch (err) {
    logger.error('agent failed to start', { error: err instanceof Error ? err.message : String(err) });
    await agent.stop();
    await embedded?.stop();
    return 1;
  }
  // A refused node registration (cluster mode) ends the agent with a clear error, not a retry loop.
  const fatal = await Promise.race([stopped.then(() => undefined), agent.fatal]);
  if (fatal !== undefined) {
    process.stderr.write(`shardlet agent: ${fatal.message}\n`);
    await agent.stop();
    await embedded?.stop();
    return 1;
  }
  return 0;
}
