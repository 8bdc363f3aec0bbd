/**
 * The kubelet API through a real kube-apiserver on the simulated runtime (issue 14's "Done
 * when"): the apiserver reaches the agent's secure port with its kubelet client certificate
 * (trusted through --client-ca-file; authorized by SubjectAccessReview), and:
 *  1. `kubectl logs`, `--tail`, `--timestamps`, `-f` (new lines arrive), `--previous` after a crash;
 *  2. on the agent's port directly: no credentials → 401; a token without permissions → 403 with
 *     the kubelet's body; a token granted nodes/metrics and nodes/stats reads /metrics/resource
 *     (promtool-clean, values equal to the runtime's CRI stats) and /stats/summary (every pod);
 *  3. a 500-line-per-second container rotates at the configured size (≤ max files kept) and
 *     `kubectl logs` still returns the newest lines, consecutive.
 * The kubectl commands and their output are written to a transcript file (path in the test's
 * diagnostics).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { promtoolCheckMetrics } from '../prometheus/prometheus-harness.js';
import { freePort, pollUntil } from './agent-harness.js';
import { apiPod, clusterSimFixture, coreApi, createPods, isApiRunning, PodWatchRecorder, startClusterAgent } from './cluster-harness.js';
import { chatterSeqs, followLogs, kubectlRecorded, kubeletGet, waitForAgentNode, secureArgs } from './kubelet-api-e2e.js';

const NS = 'kapi';
const NODE = 'node-kapi';
const READER = 'kubelet-reader';
const NOBODY = 'no-permissions';
const transcript: string[] = [];
const transcriptFile = path.join(process.env['SHARDLET_TRANSCRIPT_DIR'] ?? os.tmpdir(), 'shardlet-kubectl-transcript-sim.txt');

const f = clusterSimFixture({
  namespace: NS,
  controlPlane: { kubeletClient: true, tokenUsers: [{ name: READER, groups: [] }, { name: NOBODY, groups: [] }] },
  setup: async (cp) => {
    const rbac = [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'kubelet-api-reader' }, rules: [{ apiGroups: [''], resources: ['nodes/metrics', 'nodes/stats'], verbs: ['get'] }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'kubelet-api-reader' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubelet-api-reader' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: READER }] },
    ];
    const r = await cp.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: rbac }) });
    assert.equal(r.code, 0, r.stderr);
  },
  teardown: () => fs.writeFileSync(transcriptFile, transcript.join('\n')),
});

function tokenOf(kubeconfig: string): string {
  const kc = JSON.parse(fs.readFileSync(kubeconfig, 'utf8')) as { users: Array<{ user: { token: string } }> };
  return kc.users[0]!.user.token;
}

function withAnnotations(p: V1Pod, annotations: Record<string, string>): V1Pod {
  return { ...p, metadata: { ...p.metadata, annotations } };
}

test('kubectl logs / -f / --tail / --timestamps / --previous, 401/403, /metrics/resource and /stats/summary, rotation under 500 lines/s', { timeout: 600_000 }, async (t) => {
  const { cp, sim } = f;
  const port = await freePort();
  const agent = (f.agent = await startClusterAgent({
    cp, nodeName: NODE, endpoint: sim.endpoint,
    extraArgs: [...secureArgs(cp, port), '--container-log-max-size', '256Ki', '--container-log-max-files', '3', '--container-log-monitor-interval', '1s'],
  }));
  await waitForAgentNode(cp, NODE, port);
  const { core } = coreApi(cp.adminKubeconfig);
  const r = (f.rec = new PodWatchRecorder(cp.adminKubeconfig, NS));
  await r.start();
  const created = await createPods(core, [
    apiPod('hello', NS, NODE, { command: ['sh', '-c', 'echo hello one; echo two >&2; echo three; sleep 100000'] }),
    withAnnotations(apiPod('chatty', NS, NODE), { 'sim.shardlet.io/log-lines-per-second': '500', 'sim.shardlet.io/log-line-bytes': '100' }),
    withAnnotations(apiPod('crasher', NS, NODE, { command: ['sh', '-c', 'echo crash-run; sleep 100000'] }), { 'sim.shardlet.io/crash-after-ms': '1000' }),
  ]);
  const uid = (name: string): string => created.find((p) => p.metadata?.name === name)!.metadata!.uid!;
  await r.waitFor(() => (created.every((p) => { const x = r.pods.get(p.metadata!.uid!); return x !== undefined && isApiRunning(x); }) ? true : undefined), 'the three pods Running in the API', 120_000);

  // 1. kubectl logs through the API server.
  const logs = await kubectlRecorded(cp, transcript, ['logs', '-n', NS, 'hello']);
  assert.equal(logs.code, 0, logs.stderr);
  assert.equal(logs.stdout, 'hello one\ntwo\nthree\n');
  const tail = await kubectlRecorded(cp, transcript, ['logs', '-n', NS, 'hello', '--tail=1']);
  assert.equal(tail.stdout, 'three\n');
  const ts = await kubectlRecorded(cp, transcript, ['logs', '-n', NS, 'hello', '--timestamps']);
  const tsLines = ts.stdout.trimEnd().split('\n');
  assert.equal(tsLines.length, 3);
  for (const l of tsLines) assert.match(l, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z (hello one|two|three)$/);
  const followed = await followLogs(cp, ['-n', NS, 'chatty', '--tail=5'], (lines) => {
    const s = chatterSeqs(lines);
    return s.length > 0 && s[s.length - 1]! >= s[0]! + 500 ? true : false;
  }, 60_000);
  const fs1 = chatterSeqs(followed);
  for (let i = 1; i < fs1.length; i++) assert.equal(fs1[i], fs1[i - 1]! + 1, 'followed lines are consecutive');
  transcript.push(`$ kubectl logs -f -n ${NS} chatty --tail=5`, ...followed.slice(0, 3).map((l) => l.slice(0, 40) + '…'), `… (${followed.length} lines in all, seq ${fs1[0]} → ${fs1.at(-1)}, consecutive; killed)`, '');
  t.diagnostic(`kubectl logs -f: ${followed.length} lines arrived while following (seq ${fs1[0]} → ${fs1.at(-1)})`);

  await r.waitFor(() => ((r.pods.get(uid('crasher'))?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 && isApiRunning(r.pods.get(uid('crasher'))!) ? true : undefined), 'crasher restarted and running again', 120_000);
  const prev = await kubectlRecorded(cp, transcript, ['logs', '-n', NS, 'crasher', '--previous', '--timestamps']);
  const cur = await kubectlRecorded(cp, transcript, ['logs', '-n', NS, 'crasher', '--timestamps']);
  assert.equal(prev.code, 0, prev.stderr);
  assert.match(prev.stdout, /^\S+ crash-run\n$/);
  assert.match(cur.stdout, /^\S+ crash-run\n$/);
  assert.ok(Date.parse(prev.stdout.split(' ')[0]!) < Date.parse(cur.stdout.split(' ')[0]!), 'previous is the earlier instance');
  const noPrev = await kubectlRecorded(cp, transcript, ['logs', '-n', NS, 'hello', '--previous']);
  assert.notEqual(noPrev.code, 0);
  assert.match(noPrev.stderr, /previous terminated container "main" in pod "hello" not found/);

  // 2. Directly on the agent's port.
  assert.deepEqual(await kubeletGet(port, `/containerLogs/${NS}/hello/main`), { status: 401, body: 'Unauthorized' });
  const nobody = tokenOf(cp.tokenKubeconfig(NOBODY));
  assert.deepEqual(await kubeletGet(port, `/containerLogs/${NS}/hello/main`, nobody), { status: 403, body: `Forbidden (user=${NOBODY}, verb=get, resource=nodes, subresource=proxy)` });
  assert.deepEqual(await kubeletGet(port, '/stats/summary', nobody), { status: 403, body: `Forbidden (user=${NOBODY}, verb=get, resource=nodes, subresource=stats)` });
  const reader = tokenOf(cp.tokenKubeconfig(READER));
  assert.equal((await kubeletGet(port, `/containerLogs/${NS}/hello/main`, reader)).status, 403, 'stats/metrics grants do not open nodes/proxy');
  const cri = new CriClient({ endpoint: sim.endpoint, timeoutMs: 30_000 });
  try {
    const res = await kubeletGet(port, '/metrics/resource', reader);
    assert.equal(res.status, 200);
    assert.deepEqual(promtoolCheckMetrics(res.body).problems, []);
    const stats = await cri.listContainerStats();
    for (const name of ['hello', 'chatty']) {
      const mine = stats.find((s) => s.attributes?.labels['io.kubernetes.pod.uid'] === uid(name))!;
      const ws = Number(mine.memory!.workingSetBytes!.value);
      assert.match(res.body, new RegExp(`^container_memory_working_set_bytes\\{container="main",namespace="${NS}",pod="${name}"\\} ${ws} \\d+$`, 'm'));
      const cpu = Number(new RegExp(`^container_cpu_usage_seconds_total\\{container="main",namespace="${NS}",pod="${name}"\\} (\\S+) \\d+$`, 'm').exec(res.body)?.[1]);
      const criCpu = Number(mine.cpu!.usageCoreNanoSeconds!.value) / 1e9;
      // Read a moment apart: the sim's CPU grows 2 ms per running second.
      assert.ok(cpu > 0 && Math.abs(cpu - criCpu) < 0.01, `${name}: cpu ${cpu} vs CRI ${criCpu}`);
    }
    transcript.push(`$ curl -sk -H "Authorization: Bearer <${READER} token>" https://127.0.0.1:${port}/metrics/resource | promtool check metrics   # clean`, ...res.body.split('\n').filter((l) => l.startsWith('container_') || l.startsWith('node_')).slice(0, 6), '');
    const summary = await kubeletGet(port, '/stats/summary', reader);
    assert.equal(summary.status, 200);
    const sum = JSON.parse(summary.body) as { node: { nodeName: string }; pods: Array<{ podRef: { name: string; uid: string }; containers: unknown[] }> };
    assert.equal(sum.node.nodeName, NODE);
    assert.deepEqual(sum.pods.map((p) => p.podRef.name).sort(), ['chatty', 'crasher', 'hello']);
  } finally {
    cri.close();
  }

  // 3. Rotation of the 500-line/s container at 256 KiB, 3 files kept.
  const podDir = path.join(agent.root, 'pods', `${NS}_chatty_${uid('chatty')}`, 'main');
  const rotated = await pollUntil(() => {
    const names = fs.readdirSync(podDir);
    return names.some((n) => n.endsWith('.gz')) ? names : undefined;
  }, { what: 'chatty log rotated twice (a .gz exists)', timeoutMs: 60_000, intervalMs: 250 });
  assert.ok(rotated.length <= 3, `at most 3 files: ${rotated.join(', ')}`);
  const newestRotated = rotated.filter((n) => /\.log\.\d{8}-\d{6}$/.test(n)).sort().at(-1)!;
  const rotatedLast = Math.max(...chatterSeqs(fs.readFileSync(path.join(podDir, newestRotated), 'utf8').trimEnd().split('\n')));
  const after = await kubectlRecorded(cp, transcript, ['logs', '-n', NS, 'chatty', '--tail=3']);
  const seqs = chatterSeqs(after.stdout.trimEnd().split('\n'));
  // At least 3: the container keeps writing while the reader goes on to the end of the file
  // (as the kubelet's non-follow read does).
  assert.ok(seqs.length >= 3, seqs.join(', '));
  assert.ok(seqs[0]! > rotatedLast, `kubectl logs returns lines newer than the rotated file's last (${rotatedLast}): ${seqs.join(', ')}`);
  for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], seqs[i - 1]! + 1, 'consecutive');
  transcript.push(`# log files of chatty after rotation: ${fs.readdirSync(podDir).sort().join(', ')}`, '');
  t.diagnostic(`rotation: ${fs.readdirSync(podDir).sort().join(', ')}; newest lines ${seqs.join(', ')} (rotated file ended at ${rotatedLast}); transcript in ${transcriptFile}`);
});
