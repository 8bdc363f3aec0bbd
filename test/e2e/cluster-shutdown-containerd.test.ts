/**
 * Graceful node shutdown on real containerd (private instance; needs root) against a real
 * kube-apiserver: the same scenario as on the simulated runtime (cluster-shutdown-scenario.ts),
 * with real processes: busybox `sh` ignoring SIGTERM is SIGKILLed at the end of its share.
 */
import { test } from 'node:test';
import { clusterSimFixture } from './cluster-harness.js';
import { shutdownScenario } from './cluster-shutdown-scenario.js';

const NS = 'shutdown-ctrd';
const NODE = 'node-shutdown-ctrd';
const f = clusterSimFixture({ namespace: NS, runtime: 'containerd' });

test('containerd: SIGUSR1 with --shutdown-grace-period 20s / critical 8s: NotReady, regular pods then critical within their shares, Terminated statuses, new pods refused', { timeout: 600_000 }, async () => {
  await shutdownScenario(f, NS, NODE);
});
