/**
 * `kubectl exec` / `exec -i` / `exec -it` / `attach` / `port-forward` / `cp` through the real API server
 * and the agent's secure port on the simulated runtime (issue 25), and 401/403 for upgrades
 * without credentials or without nodes/proxy. Transcript: shardlet-kubectl-streaming-sim.txt.
 */
import { test } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { freePort } from './agent-harness.js';
import { apiPod, clusterSimFixture, coreApi, createPods, isApiRunning, PodWatchRecorder, startClusterAgent } from './cluster-harness.js';
import { secureArgs, waitForAgentNode } from './kubelet-api-e2e.js';
import { checkAttach, checkCp, checkExecExitCode, checkExecStdin, checkExecTty, checkPortForward, checkStreamingAuth, type StreamingScenario } from './streaming-e2e.js';

const NS = 'stream-sim';
const NODE = 'node-stream-sim';
const NOBODY = 'no-permissions';
const transcript: string[] = [];
const transcriptFile = path.join(process.env['SHARDLET_TRANSCRIPT_DIR'] ?? os.tmpdir(), 'shardlet-kubectl-streaming-sim.txt');

const f = clusterSimFixture({
  namespace: NS,
  controlPlane: { kubeletClient: true, tokenUsers: [{ name: NOBODY, groups: [] }] },
  teardown: () => fs.writeFileSync(transcriptFile, transcript.join('\n')),
});

function withAnnotations(p: V1Pod, annotations: Record<string, string>): V1Pod {
  return { ...p, metadata: { ...p.metadata, annotations } };
}

test('kubectl exec (exit code), exec -i, exec -it, attach, port-forward on the simulated runtime; 401/403 on the agent port', { timeout: 600_000 }, async (t) => {
  const { cp } = f;
  const port = await freePort();
  f.agent = await startClusterAgent({ cp, nodeName: NODE, endpoint: f.sim.endpoint, extraArgs: secureArgs(cp, port) });
  await waitForAgentNode(cp, NODE, port);
  const { core } = coreApi(cp.adminKubeconfig);
  const r = (f.rec = new PodWatchRecorder(cp.adminKubeconfig, NS));
  await r.start();
  const created = await createPods(core, [
    apiPod('shell', NS, NODE),
    withAnnotations(apiPod('chatty', NS, NODE), { 'sim.shardlet.io/log-lines-per-second': '20', 'sim.shardlet.io/log-line-bytes': '40' }),
  ]);
  await r.waitFor(() => (created.every((p) => { const x = r.pods.get(p.metadata!.uid!); return x !== undefined && isApiRunning(x); }) ? true : undefined), 'pods Running in the API', 120_000);
  const s: StreamingScenario = { cp, transcript, namespace: NS, pod: 'shell', chattyPod: 'chatty', chattyLine: /chatter \d+/, port: 8080,
    ncArgs: ['-lv'], waitListening: async (nc) => void (await nc.waitFor(/listening on/, 'nc listening', 60_000, 'stderr')) };
  await t.test('exec: hi, exit 3', () => checkExecExitCode(s));
  await t.test('exec -i: stdin', () => checkExecStdin(s));
  await t.test('exec -it: tty', () => checkExecTty(s));
  await t.test('attach', () => checkAttach(s));
  await t.test('port-forward', () => checkPortForward(s));
  await t.test('cp both ways', async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kubectl-cp-'));
    try {
      await checkCp(s, work);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
  await t.test('401 / 403', async () => {
    const kc = JSON.parse(fs.readFileSync(cp.tokenKubeconfig(NOBODY), 'utf8')) as { users: Array<{ user: { token: string } }> };
    await checkStreamingAuth(port, NS, 'shell', kc.users[0]!.user.token, NOBODY);
  });
  t.diagnostic(`transcript in ${transcriptFile}`);
});
