/**
 * Manifest source wiring: the static-pod directory (--pod-manifest-path) and URL
 * (--manifest-url) sources feeding the config merger, both decoding through one manifest
 * decoder thread (manifests are untrusted input: decoded off the main thread, with time and
 * memory limits). The API pod source is cluster mode's (agent-cluster.ts). Sources are created
 * here and started by the agent once the sync loop runs.
 */
import type { Clock } from '../../shared/clock/clock.js';
import type { Logger } from '../../shared/logging/logger.js';
import { FileSource, HttpSource, type PodSource } from '../../shared/manifest/pod-update.js';
import { ThreadManifestDecoder } from '../config/manifest-decode-thread-client.js';
import type { PodConfig } from '../config/pod-config.js';
import { createFileSource } from '../config/source-file.js';
import { createHttpSource } from '../config/source-http.js';
import type { AgentConfig } from './agent-config.js';

export interface ManifestSourcesDeps {
  config: Pick<AgentConfig, 'podManifestPath' | 'manifestURL' | 'nodeName' | 'fileCheckFrequencyMs' | 'httpCheckFrequencyMs'>;
  podConfig: Pick<PodConfig, 'channel'>;
  clock: Clock;
  logger: Logger;
}

export function createManifestSources(d: ManifestSourcesDeps): { decoder: ThreadManifestDecoder; sources: PodSource[] } {
  const { config: c, podConfig, clock, logger } = d;
  const decoder = new ThreadManifestDecoder({ clock, logger });
  const sources: PodSource[] = [];
  if (c.podManifestPath) {
    sources.push(createFileSource({ path: c.podManifestPath, nodeName: c.nodeName, sink: podConfig.channel(FileSource), clock, logger, resyncMs: c.fileCheckFrequencyMs, decoder }));
  }
  if (c.manifestURL) {
    sources.push(createHttpSource({ url: c.manifestURL, nodeName: c.nodeName, sink: podConfig.channel(HttpSource), clock, logger, pollMs: c.httpCheckFrequencyMs, decoder }));
  }
  return { decoder, sources };
}
