/**
 * Graceful node shutdown on the simulated runtime against a real kube-apiserver: the scenario
 * in cluster-shutdown-scenario.ts (SIGUSR1 → NotReady, regular then critical pods within their
 * shares, Terminated statuses, NodeShutdown refusals, the Node event).
 */
import { test } from 'node:test';
import { clusterSimFixture } from './cluster-harness.js';
import { shutdownScenario } from './cluster-shutdown-scenario.js';

const NS = 'shutdown';
const NODE = 'node-shutdown';
const f = clusterSimFixture({ namespace: NS });

test('sim: SIGUSR1 with --shutdown-grace-period 20s / critical 8s: NotReady, regular pods then critical within their shares, Terminated statuses, new pods refused', { timeout: 300_000 }, async () => {
  await shutdownScenario(f, NS, NODE);
});
