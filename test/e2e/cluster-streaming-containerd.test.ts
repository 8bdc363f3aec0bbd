/**
 * `kubectl exec` / `exec -i` / `exec -it` / `attach` / `port-forward` / `cp` through the real API
 * server and the agent's secure port on real containerd (private instance; needs root): the path
 * API server → shardlet's proxy → containerd's own streaming server, bytes forwarded untouched.
 * Same commands and expectations as on the simulated runtime (streaming-e2e.ts).
 * Transcript: shardlet-kubectl-streaming-containerd.txt.
 */
import { test } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './agent-harness.js';
import { apiPod, clusterSimFixture, coreApi, createPods, isApiRunning, PodWatchRecorder, startClusterAgent } from './cluster-harness.js';
import { secureArgs, waitForAgentNode } from './kubelet-api-e2e.js';
import { waitHostListening, checkAttach, checkCp, checkExecExitCode, checkExecStdin, checkExecTty, checkPortForward, checkStreamingAuth, type StreamingScenario } from './streaming-e2e.js';

const NS = 'stream-ctrd';
const NODE = 'node-stream-ctrd';
const NOBODY = 'no-permissions';
const transcript: string[] = [];
const transcriptFile = path.join(process.env['SHARDLET_TRANSCRIPT_DIR'] ?? os.tmpdir(), 'shardlet-kubectl-streaming-containerd.txt');

const f = clusterSimFixture({
  namespace: NS,
  runtime: 'containerd',
  controlPlane: { kubeletClient: true, tokenUsers: [{ name: NOBODY, groups: [] }] },
  teardown: () => fs.writeFileSync(transcriptFile, transcript.join('\n')),
});

const TICKER = 'i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 0.2; done';

test('containerd: kubectl exec (exit code), exec -i, exec -it, attach, port-forward, cp; 401/403 on the agent port', { timeout: 600_000 }, async (t) => {
  const { cp, ctrd } = f;
  const port = await freePort();
  f.agent = await startClusterAgent({ cp, nodeName: NODE, endpoint: ctrd.endpoint, extraArgs: secureArgs(cp, port) });
  await waitForAgentNode(cp, NODE, port);
  const { core } = coreApi(cp.adminKubeconfig);
  const r = (f.rec = new PodWatchRecorder(cp.adminKubeconfig, NS));
  await r.start();
  const opts = { imagePullPolicy: 'Never' as const, graceSeconds: 2 };
  const created = await createPods(core, [apiPod('shell', NS, NODE, opts), apiPod('chatty', NS, NODE, { ...opts, command: ['sh', '-c', TICKER] })]);
  await r.waitFor(() => (created.every((p) => { const x = r.pods.get(p.metadata!.uid!); return x !== undefined && isApiRunning(x); }) ? true : undefined), 'pods Running in the API', 120_000);
  // Host-network pods share the host's ports: a free one for nc.
  const s: StreamingScenario = { cp, transcript, namespace: NS, pod: 'shell', chattyPod: 'chatty', chattyLine: /tick \d+/, port: await freePort(),
    ncArgs: ['-l'], waitListening: (_nc, p) => waitHostListening(p) };
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
