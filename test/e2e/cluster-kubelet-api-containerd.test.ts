/**
 * The kubelet API through a real kube-apiserver on real containerd (private instance; needs
 * root, nothing skipped): `kubectl logs`, `--tail`, `--timestamps`, `-f` (new lines arrive),
 * `--previous` after a crash, 401/403 on the agent's port, /metrics/resource (promtool-clean) and
 * /stats/summary listing every pod, and rotation of a fast-writing busybox container through
 * containerd's ReopenContainerLog with `kubectl logs` returning the newest lines. The kubectl
 * transcript is written next to the sim one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promtoolCheckMetrics } from '../prometheus/prometheus-harness.js';
import { freePort, pollUntil } from './agent-harness.js';
import { apiPod, clusterSimFixture, coreApi, createPods, isApiRunning, PodWatchRecorder, startClusterAgent } from './cluster-harness.js';
import { chatterSeqs, followLogs, kubectlRecorded, kubeletGet, waitForAgentNode, secureArgs } from './kubelet-api-e2e.js';

const NS = 'kapi-ctrd';
const NODE = 'node-kapi-ctrd';
const NOBODY = 'no-permissions';
const transcript: string[] = [];
const transcriptFile = path.join(process.env['SHARDLET_TRANSCRIPT_DIR'] ?? os.tmpdir(), 'shardlet-kubectl-transcript-containerd.txt');

const f = clusterSimFixture({
  namespace: NS,
  runtime: 'containerd',
  controlPlane: { kubeletClient: true, tokenUsers: [{ name: NOBODY, groups: [] }] },
  teardown: () => fs.writeFileSync(transcriptFile, transcript.join('\n')),
});

const CHATTER = 'i=0; while true; do i=$((i+1)); echo "chatter $i xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"; usleep 2000; done';

test('containerd: kubectl logs variants, 401/403, resource metrics and summary, rotation through ReopenContainerLog', { timeout: 600_000 }, async (t) => {
  const { cp, ctrd } = f;
  const port = await freePort();
  const agent = (f.agent = await startClusterAgent({
    cp, nodeName: NODE, endpoint: ctrd.endpoint,
    extraArgs: [...secureArgs(cp, port), '--container-log-max-size', '256Ki', '--container-log-max-files', '3', '--container-log-monitor-interval', '1s'],
  }));
  await waitForAgentNode(cp, NODE, port);
  const { core } = coreApi(cp.adminKubeconfig);
  const r = (f.rec = new PodWatchRecorder(cp.adminKubeconfig, NS));
  await r.start();
  const opts = { imagePullPolicy: 'Never' as const, graceSeconds: 2 };
  const created = await createPods(core, [
    apiPod('hello', NS, NODE, { ...opts, command: ['sh', '-c', 'echo hello one; echo three; sleep 100000'] }),
    apiPod('chatty', NS, NODE, { ...opts, command: ['sh', '-c', CHATTER] }),
    apiPod('crasher', NS, NODE, { ...opts, command: ['sh', '-c', 'echo crash-run; sleep 1; exit 1'] }),
  ]);
  const uid = (name: string): string => created.find((p) => p.metadata?.name === name)!.metadata!.uid!;
  await r.waitFor(() => (['hello', 'chatty'].every((n) => { const x = r.pods.get(uid(n)); return x !== undefined && isApiRunning(x); }) ? true : undefined), 'hello and chatty Running', 120_000);

  assert.equal((await kubectlRecorded(cp, transcript, ['logs', '-n', NS, 'hello'])).stdout, 'hello one\nthree\n');
  assert.equal((await kubectlRecorded(cp, transcript, ['logs', '-n', NS, 'hello', '--tail=1'])).stdout, 'three\n');
  const ts = (await kubectlRecorded(cp, transcript, ['logs', '-n', NS, 'hello', '--timestamps'])).stdout.trimEnd().split('\n');
  assert.equal(ts.length, 2);
  for (const l of ts) assert.match(l, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z (hello one|three)$/);
  const followed = await followLogs(cp, ['-n', NS, 'chatty', '--tail=1'], (lines) => {
    const s = chatterSeqs(lines);
    return s.length > 1 && s[s.length - 1]! >= s[0]! + 100 ? true : false;
  }, 60_000);
  const fseq = chatterSeqs(followed);
  transcript.push(`$ kubectl logs -f -n ${NS} chatty --tail=1`, `… (${followed.length} lines arrived, seq ${fseq[0]} → ${fseq.at(-1)}; killed)`, '');

  await r.waitFor(() => ((r.pods.get(uid('crasher'))?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 ? true : undefined), 'crasher restarted', 120_000);
  const prev = await kubectlRecorded(cp, transcript, ['logs', '-n', NS, 'crasher', '--previous', '--timestamps']);
  assert.equal(prev.code, 0, prev.stderr);
  assert.match(prev.stdout, /^\S+ crash-run\n$/);

  assert.deepEqual(await kubeletGet(port, `/containerLogs/${NS}/hello/main`), { status: 401, body: 'Unauthorized' });
  const kc = JSON.parse(fs.readFileSync(cp.tokenKubeconfig(NOBODY), 'utf8')) as { users: Array<{ user: { token: string } }> };
  assert.deepEqual(await kubeletGet(port, `/containerLogs/${NS}/hello/main`, kc.users[0]!.user.token), { status: 403, body: `Forbidden (user=${NOBODY}, verb=get, resource=nodes, subresource=proxy)` });
  // The admin token (system:masters) is allowed everything.
  const admin = JSON.parse(fs.readFileSync(cp.tokenKubeconfig(), 'utf8')) as { users: Array<{ user: { token: string } }> };
  const metrics = await kubeletGet(port, '/metrics/resource', admin.users[0]!.user.token);
  assert.equal(metrics.status, 200);
  t.diagnostic(`agent stats log: ${agent.logs.filter((l) => /stats|resource metrics/i.test(l)).join('\n')}`);
  assert.match(metrics.body, /^resource_scrape_error 0$/m);
  assert.deepEqual(promtoolCheckMetrics(metrics.body).problems, []);
  assert.match(metrics.body, new RegExp(`^container_memory_working_set_bytes\\{container="main",namespace="${NS}",pod="chatty"\\} \\d+ \\d+$`, 'm'));
  const summary = JSON.parse((await kubeletGet(port, '/stats/summary', admin.users[0]!.user.token)).body) as { pods: Array<{ podRef: { name: string } }> };
  assert.deepEqual(summary.pods.map((p) => p.podRef.name).sort(), ['chatty', 'crasher', 'hello']);
  t.diagnostic(`containerd /metrics/resource:\n${metrics.body.split('\n').filter((l) => l.includes('chatty') || l.startsWith('node_')).join('\n')}`);

  const podDir = path.join(agent.root, 'pods', `${NS}_chatty_${uid('chatty')}`, 'main');
  const rotated = await pollUntil(() => {
    const names = fs.readdirSync(podDir);
    return names.some((n) => n.endsWith('.gz')) ? names : undefined;
  }, { what: 'chatty log rotated twice on containerd', timeoutMs: 120_000, intervalMs: 250 });
  assert.ok(rotated.length <= 3, rotated.join(', '));
  const newest = rotated.filter((n) => /\.log\.\d{8}-\d{6}$/.test(n)).sort().at(-1)!;
  const rotatedLast = Math.max(...chatterSeqs(fs.readFileSync(path.join(podDir, newest), 'utf8').trimEnd().split('\n')));
  const tail = chatterSeqs((await kubectlRecorded(cp, transcript, ['logs', '-n', NS, 'chatty', '--tail=3'])).stdout.trimEnd().split('\n'));
  // At least 3: the container keeps writing while the reader goes on to the end of the file
  // (as the kubelet's non-follow read does).
  assert.ok(tail.length >= 3, tail.join(', '));
  for (let i = 1; i < tail.length; i++) assert.equal(tail[i], tail[i - 1]! + 1);
  assert.ok(tail[0]! > rotatedLast, `newest lines ${tail.join(', ')} after the rotated file's ${rotatedLast}`);
  transcript.push(`# log files of chatty after rotation on containerd: ${fs.readdirSync(podDir).sort().join(', ')}`, '');
  t.diagnostic(`transcript in ${transcriptFile}`);
});
