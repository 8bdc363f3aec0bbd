/**
 * Ephemeral containers on real containerd (private instance; needs root) through the real API
 * server (issue 30): the scenario of ephemeral-e2e.ts, the same as on the simulated runtime.
 * Transcript: shardlet-kubectl-debug-containerd.txt.
 */
import { test } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clusterSimFixture } from './cluster-harness.js';
import { runEphemeralScenario } from './ephemeral-e2e.js';

const NS = 'debug-ctrd';
const transcript: string[] = [];
const transcriptFile = path.join(process.env['SHARDLET_TRANSCRIPT_DIR'] ?? os.tmpdir(), 'shardlet-kubectl-debug-containerd.txt');

const f = clusterSimFixture({ namespace: NS, runtime: 'containerd', controlPlane: { kubeletClient: true }, teardown: () => fs.writeFileSync(transcriptFile, transcript.join('\n')) });

test('ephemeral containers on the v1.20 API server (containerd): --target, status, kubectl logs -c, attach -i / -it, killed with the pod', { timeout: 600_000 }, async (t) => {
  await runEphemeralScenario(t, { f, cp: f.cp, NS, NODE: 'node-debug-ctrd', transcript, runtimeName: 'containerd', imagePullPolicy: 'Never', processCheck: true });
  t.diagnostic(`transcript in ${transcriptFile}`);
});
