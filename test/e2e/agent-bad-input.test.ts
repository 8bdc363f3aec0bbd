/**
 * The agent against hostile input (issue 10, items 15–20), as an operator runs it: the agent and
 * the simulated runtime as separate processes, a manifest directory holding hostile files beside
 * valid ones, and a --manifest-url serving hostile bodies (a climbing uid, then an alias bomb
 * that changes at every poll). The agent must stay healthy, run the valid pods, report each
 * hostile manifest naming its file (or URL) and field in bounded log lines, and write or delete
 * nothing outside its directories.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startSimRuntime, type SimRuntimeInstance } from '../harness/sim-runtime-harness.js';
import { isRunning, pollUntil, runtimeView, startAgent, writePodManifest, type AgentProcess } from './agent-harness.js';
import { aliasBomb, aliasBombFreeForm, CLIMBING_UID, stringAsList } from '../unit/config/bad-input-corpus.js';

let sim: SimRuntimeInstance;
let dir: string;
let agent: AgentProcess | undefined;
let srv: http.Server;
let url: string;
let polls = 0;

const hostileBody = (): string => {
  polls++;
  if (polls <= 2) {
    return JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: [{ metadata: { name: 'evil', uid: CLIMBING_UID }, spec: { containers: [{ name: 'c', image: 'docker.io/local/busybox:1', command: ['sleep', '1000'] }] } }] });
  }
  return `${aliasBombFreeForm(`bomb-${polls}`)}# poll ${polls}\n`; // a new body every poll
};

/** A manifest in the harness's shape with extra lines under metadata. */
function hostile(name: string, meta: string, extraYaml = ''): string {
  const f = writePodManifest(dir, name, { extraYaml });
  fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace('  namespace: default\n', `  namespace: default\n${meta}`));
  return f;
}

before(async () => {
  sim = await startSimRuntime({ extraArgs: ['--image', 'docker.io/local/busybox:1'] });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-manifests-'));
  srv = http.createServer((_req, res) => res.end(hostileBody()));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/pods`;
});

after(async () => {
  await agent?.kill();
  await sim?.stop();
  srv?.closeAllConnections();
  await new Promise<void>((r) => srv?.close(() => r()));
  fs.rmSync(dir, { recursive: true, force: true });
  if (agent) fs.rmSync(agent.root, { recursive: true, force: true });
});

test('hostile manifests and a hostile URL beside valid pods: the agent stays healthy, runs the valid pods, touches nothing outside its dirs', async () => {
  writePodManifest(dir, 'web');
  writePodManifest(dir, 'grace', { extraYaml: '' });
  // A shared process namespace: its `sleep` is not PID 1, so SIGTERM ends it (as PID 1 it would
  // ignore SIGTERM and StopContainer would rightly wait out the grace period, clamped to 24.8 days).
  fs.writeFileSync(path.join(dir, 'grace.yaml'), fs.readFileSync(path.join(dir, 'grace.yaml'), 'utf8').replace('terminationGracePeriodSeconds: 2', 'terminationGracePeriodSeconds: 400000000000\n  shareProcessNamespace: true'));
  // Valid, and at the int32 limit: the probe's ExecSync deadline must still be one grpc and Node take.
  writePodManifest(dir, 'probemax', { extraYaml: '    livenessProbe: {exec: {command: ["true"]}, timeoutSeconds: 2147483647, periodSeconds: 1}\n' });
  const a = (agent = await startAgent({ endpoint: sim.endpoint, manifestDir: dir, workers: 2, extraArgs: ['--manifest-url', url, '--http-check-frequency', '1s'] }));
  const victim = path.join(a.root, 'victim');
  fs.mkdirSync(victim);
  fs.writeFileSync(path.join(victim, 'precious'), 'x');

  hostile('climb', `  uid: "${CLIMBING_UID}"\n`);
  hostile('victim-uid', '  uid: "../../../victim"\n');
  fs.writeFileSync(path.join(dir, 'bomb.yaml'), aliasBomb());
  fs.writeFileSync(path.join(dir, 'anybomb.yaml'), aliasBombFreeForm());
  fs.writeFileSync(path.join(dir, 'strlist.yaml'), stringAsList());
  hostile('probe', '', '    livenessProbe: {exec: {command: ["true"]}, timeoutSeconds: 9223372036854775808}\n');
  hostile('envbad', '', '    env: [{name: 1=bad, value: x}]\n');
  hostile('bigname', `  annotations: {a: "${'v'.repeat(1024 * 1024)}"}\n`);
  fs.writeFileSync(path.join(dir, 'empty.yaml'), '');
  // Pod-level fields that become a pod's resolv.conf and /etc/hosts (issue 24, "Bad input").
  const withSpec = (name: string, yaml: string): void => {
    const f = writePodManifest(dir, name);
    fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace('  hostNetwork: true\n', `  hostNetwork: true\n${yaml}`));
  };
  withSpec('tenns', `  dnsConfig: {nameservers: [${Array.from({ length: 10 }, (_, i) => `"10.0.0.${i}"`).join(', ')}]}\n`);
  withSpec('searches', `  dnsConfig: {searches: [${Array.from({ length: 100 }, (_, i) => `"s${i}.example"`).join(', ')}]}\n`);
  withSpec('aliasip', '  hostAliases: [{ip: "10.0.0.300", hostnames: ["evil"]}]\n');

  const want: Array<[string, string]> = [
    ['climb.yaml', 'metadata.uid'], ['victim-uid.yaml', 'metadata.uid'], ['bomb.yaml', 'spec.containers[0].args'],
    ['anybomb.yaml', 'expands to too many values'], ['strlist.yaml', 'spec.containers[0].args'],
    ['probe.yaml', 'livenessProbe.timeoutSeconds'], ['envbad.yaml', 'env[0].name'], ['bigname.yaml', 'metadata.annotations'],
    [url, 'items[0].metadata.uid'], [url, 'expands to too many values'],
    ['tenns.yaml', 'spec.dnsConfig.nameservers'], ['searches.yaml', 'spec.dnsConfig.searches'], ['aliasip.yaml', 'spec.hostAliases[0].ip'],
  ];
  await pollUntil(() => {
    const lines = a.logs.filter((l) => l.includes('"level":"error"'));
    return want.every(([f, field]) => lines.some((l) => l.includes(f) && l.includes(field))) ? true : undefined;
  }, { what: 'an error naming file and field for each hostile manifest and URL body', timeoutMs: 60_000 });
  await pollUntil(() => (a.logs.some((l) => l.includes('Manifest file contains no pods') && l.includes('empty.yaml')) ? true : undefined), { what: 'the empty-file note', timeoutMs: 30_000 });

  await pollUntil(async () => {
    const pods = await a.pods();
    return pods.length === 3 && pods.every(isRunning) ? true : undefined;
  }, { what: 'the three valid pods running', timeoutMs: 60_000, intervalMs: 250 });
  assert.equal((await a.get('/healthz')).status, 200);
  const longest = Math.max(...a.logs.map((l) => l.length));
  assert.ok(longest < 16 * 1024, `longest log line ${longest} characters`);

  // A non-atomic rewrite of web.yaml keeps the pod: same sandbox, no restart.
  const webUid = (await a.pods()).find((p) => p.metadata?.name?.startsWith('web-'))?.metadata?.uid ?? '';
  const before = (await runtimeView(sim.endpoint)).get(webUid);
  const webText = fs.readFileSync(path.join(dir, 'web.yaml'), 'utf8');
  fs.writeFileSync(path.join(dir, 'web.yaml'), '');
  await pollUntil(() => (a.logs.some((l) => l.includes('keeping its pods')) ? true : undefined), { what: 'the empty read held', timeoutMs: 30_000 });
  fs.writeFileSync(path.join(dir, 'web.yaml'), webText);
  writePodManifest(dir, 'later');
  await pollUntil(async () => {
    const pods = await a.pods();
    return pods.length === 4 && pods.every(isRunning) ? true : undefined;
  }, { what: 'a later pod running (the rewrite has been read meanwhile)', timeoutMs: 60_000, intervalMs: 250 });
  const afterView = (await runtimeView(sim.endpoint)).get(webUid);
  assert.deepEqual(afterView?.sandboxes.map((s) => s.id), before?.sandboxes.map((s) => s.id), 'same sandbox');
  assert.deepEqual(afterView?.containers.map((c) => [c.id, c.state, c.attempt]), before?.containers.map((c) => [c.id, c.state, c.attempt]), 'no restart');

  // The pod with a 400000000000 s grace period is killed when its file goes (its command ends on
  // SIGTERM: StopContainer returns when it exits, not at a deadline computed from the grace).
  const graceUid = (await a.pods()).find((p) => p.metadata?.name?.startsWith('grace-'))?.metadata?.uid ?? '';
  assert.ok((await runtimeView(sim.endpoint)).get(graceUid)?.containers.some((c) => c.state === 'CONTAINER_RUNNING'));
  fs.rmSync(path.join(dir, 'grace.yaml'));
  await pollUntil(async () => {
    const pods = await a.pods();
    const left = (await runtimeView(sim.endpoint)).get(graceUid);
    return !pods.some((p) => p.metadata?.uid === graceUid) && !left?.containers.some((c) => c.state === 'CONTAINER_RUNNING') ? true : undefined;
  }, { what: 'the long-grace pod killed and gone', timeoutMs: 60_000, intervalMs: 250 });
  assert.equal((await a.get('/healthz')).status, 200);
  assert.ok(!a.logs.some((l) => /(pod worker|PLEG) thread (error|exited|failed)|the PLEG thread died/.test(l)), 'no worker or PLEG thread died');

  // Nothing outside the agent's directories.
  assert.ok(fs.existsSync(path.join(victim, 'precious')), 'the victim directory is intact');
  assert.ok(!fs.existsSync(path.join(a.root, 'outside-the-logs-dir')));
  assert.ok(!fs.existsSync(path.join(path.dirname(a.root), 'outside-the-logs-dir')));
  const logDirs = fs.readdirSync(path.join(a.root, 'pods'));
  // Log directories, and the pods' own directories (`<uid>`: hosts file, termination logs).
  assert.ok(logDirs.every((d) => /^default_(web|later|grace|probemax)-node-e2e_[0-9a-f]{32}$/.test(d) || /^[0-9a-f]{32}$/.test(d)), logDirs.join(', '));
  assert.ok(polls >= 3, `the URL was polled ${polls} times (a new bomb body each time)`);
  assert.equal(await a.stop(), 0);
});
