/**
 * The agent's own log (JSON lines on stderr) at -v 4, on the real agent process: pod events
 * carry the pod's namespace/name and UID (fields `pod` = "ns/name" and `podUID`, matching
 * /pods), and a container env value never appears in the log — not while the pod starts and
 * runs, not when its container fails to start or crashes and is restarted, not when it is
 * killed. The secret does reach the container (its own log file shows it), so the check is not
 * vacuous.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { isRunning, pollUntil, startAgent, writePodManifest, type AgentProcess } from './agent-harness.js';

const SECRET = `s3cret-${randomBytes(12).toString('hex')}`;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-logs-'));
const dir = path.join(root, 'manifests');
const podLogsDir = path.join(root, 'pod-logs');

let sim: SimRuntimeInstance | undefined;
let agent: AgentProcess | undefined;

const envYaml = `    env:\n    - name: API_TOKEN\n      value: ${JSON.stringify(SECRET)}\n`;

before(async () => {
  fs.mkdirSync(dir);
  sim = await startSimRuntime({ extraArgs: ['--image', 'docker.io/local/busybox:1'] });
  // Runs and prints its secret to its own stdout (the container log, not the agent log).
  writePodManifest(dir, 'sec-ok', { command: ['sh', '-c', 'echo token=$API_TOKEN; sleep 100000'], extraYaml: envYaml });
  // StartContainer fails: the error path logs the failure.
  writePodManifest(dir, 'sec-fail', { annotations: { 'sim.shardlet.io/start-fail': 'true' }, extraYaml: envYaml });
  // Crashes after start and is restarted with backoff.
  writePodManifest(dir, 'sec-crash', { annotations: { 'sim.shardlet.io/crash-after-ms': '300', 'sim.shardlet.io/exit-code': '2' }, extraYaml: envYaml });
  // A few plain pods alongside.
  for (let i = 0; i < 5; i++) writePodManifest(dir, `plain-${i}`);
  agent = await startAgent({ endpoint: sim.endpoint, manifestDir: dir, workers: 2, extraArgs: ['-v', '4', '--pod-logs-dir', podLogsDir] });
});

after(async () => {
  await agent?.kill();
  await sim?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

interface LogRecord { level: string; v: number; msg: string; pod?: string; podUID?: string; [k: string]: unknown }

function records(a: AgentProcess): { parsed: LogRecord[]; unparsed: string[] } {
  const parsed: LogRecord[] = [];
  const unparsed: string[] = [];
  for (const line of a.logs) {
    try {
      parsed.push(JSON.parse(line) as LogRecord);
    } catch {
      unparsed.push(line);
    }
  }
  return { parsed, unparsed };
}

/** Every container log file under --pod-logs-dir, concatenated. */
function containerLogs(): string {
  if (!fs.existsSync(podLogsDir)) return '';
  return fs.readdirSync(podLogsDir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => fs.readFileSync(path.join(e.parentPath, e.name), 'utf8'))
    .join('\n');
}

function byName(pods: readonly V1Pod[], name: string): V1Pod {
  const p = pods.find((x) => x.metadata?.name === `${name}-node-e2e`);
  assert.ok(p, `pod ${name} on /pods`);
  return p;
}

test('pod events in the log carry namespace/name and UID; the env secret never appears at -v 4', async () => {
  const a = agent!;
  // Wait for each path to have run: sec-ok running, sec-fail's start failed, sec-crash restarted.
  const pods = await pollUntil(async () => {
    const list = await a.pods();
    const ok = list.find((p) => p.metadata?.name === 'sec-ok-node-e2e');
    const fail = list.find((p) => p.metadata?.name === 'sec-fail-node-e2e');
    const crash = list.find((p) => p.metadata?.name === 'sec-crash-node-e2e');
    const failWaiting = fail?.status?.containerStatuses?.[0]?.state?.waiting?.reason;
    const crashRestarts = crash?.status?.containerStatuses?.[0]?.restartCount ?? 0;
    return ok && isRunning(ok) && failWaiting !== undefined && failWaiting !== 'ContainerCreating' && crashRestarts >= 1 ? list : undefined;
  }, { what: 'sec-ok running, sec-fail failed to start, sec-crash restarted', timeoutMs: 90_000, intervalMs: 250 });

  // The secret reached the container (so the check below is not vacuous): its own log shows it.
  // (Read before the pod is removed: removal deletes the pod's log directory.)
  await pollUntil(() => (containerLogs().includes(`token=${SECRET}`) ? true : undefined), { what: 'the container to print its env value to its own log', timeoutMs: 30_000 });

  // Then a kill: remove sec-ok and wait until it is gone.
  const okUid = byName(pods, 'sec-ok').metadata!.uid!;
  fs.rmSync(path.join(dir, 'sec-ok.yaml'));
  await pollUntil(async () => ((await a.pods()).some((p) => p.metadata?.uid === okUid) ? undefined : true), { what: 'sec-ok removed', timeoutMs: 60_000 });
  await pollUntil(() => (a.logs.some((l) => l.includes('"msg":"pod terminated"') && l.includes(okUid)) ? true : undefined), { what: 'the termination logged', timeoutMs: 30_000 });

  // The secret is nowhere in the agent's log.
  const leaked = a.logs.filter((l) => l.includes(SECRET));
  assert.deepEqual(leaked, [], 'env values never appear in the agent log');

  // Every line is a JSON record; pod events name the pod as "ns/name" with its UID.
  const { parsed, unparsed } = records(a);
  assert.deepEqual(unparsed, [], 'every stderr line is a JSON log record');
  assert.ok(parsed.some((r) => r.v === 4), 'the log really is at -v 4');
  const uidOf = new Map<string, string>();
  for (const p of pods) uidOf.set(`${p.metadata?.namespace}/${p.metadata?.name}`, p.metadata?.uid ?? '');
  const podRecords = parsed.filter((r) => r.pod !== undefined || r.podUID !== undefined);
  assert.ok(podRecords.length > 0);
  const wrong = podRecords.filter((r) => r.pod === undefined || r.podUID === undefined || uidOf.get(r.pod) !== r.podUID);
  assert.deepEqual(wrong.map((r) => `${r.msg}: pod=${r.pod} podUID=${r.podUID}`), [], 'pod and podUID agree with /pods');

  // The events of each path are there, each with the pod's identity.
  const eventFor = (name: string, msg: RegExp): LogRecord | undefined => {
    const uid = uidOf.get(`default/${name}-node-e2e`);
    return parsed.find((r) => r.podUID === uid && r.pod === `default/${name}-node-e2e` && msg.test(r.msg));
  };
  assert.ok(eventFor('sec-ok', /^pod running$/), 'sec-ok: "pod running"');
  assert.ok(eventFor('sec-ok', /^pod terminating$/), 'sec-ok: "pod terminating"');
  assert.ok(eventFor('sec-ok', /^pod terminated$/), 'sec-ok: "pod terminated"');
  assert.ok(eventFor('sec-crash', /^Started container$/), 'sec-crash: "Started container"');
  const failRecords = parsed.filter((r) => r.podUID === uidOf.get('default/sec-fail-node-e2e'));
  assert.ok(failRecords.some((r) => r.level === 'error' || /fail|error|back-off/i.test(r.msg)), `sec-fail: a failure record (got ${JSON.stringify(failRecords.map((r) => r.msg))})`);
});
