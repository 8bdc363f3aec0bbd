/**
 * `npm run bench -- --hollow`: one hollow-mode session against a private control plane (the real
 * kube-apiserver, kube-scheduler and kube-controller-manager v1.20.2):
 *   1. `shardlet hollow --nodes N` starts; time until N Nodes are Ready (from the spawn);
 *   2. a Deployment of N × P replicas (busybox sleep, no requests) is created; time until the
 *      Deployment reports every replica available (scheduler + controller-manager + the nodes);
 *   3. a steady window (--steady-seconds) with every pod running: CPU and RSS of the hollow
 *      process, of kube-apiserver and of etcd; the lease lateness histogram (all nodes' renewals
 *      in the window, p50/p99/max bucket); the API requests each node sent in the whole session,
 *      by client, verb and resource (shardlet_api_requests_total + shardlet_heartbeat_api_requests_total,
 *      and events by result), as mean per node.
 * `--bare-pods` skips the controller-manager: N × P bare pods that tolerate the not-ready taint,
 * placed by the scheduler ("available" = all Running and Ready).
 * Writes hollow.json and hollow.md into --out and prints the table.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startControlPlane, type ControlPlane } from '../test/harness/apiserver-harness.js';
import { hollowNodes, startHollow, type HollowProcess } from '../test/harness/hollow-process.js';
import { pollUntil } from '../test/harness/poll.js';
import { readCpuSeconds, readMemory } from './measure.js';
import { BENCH_IMAGE } from './pod-manifests.js';
import { histogramBuckets, parsePromText, type ParsedMetrics } from './prom-text.js';
import { bucketDelta, histogramQuantile } from './stats.js';

const USAGE = `usage: npm run bench -- --hollow [--nodes N] [--pods-per-node P] [--steady-seconds S] [--bare-pods] [--out DIR]
  --nodes N            hollow nodes (default 100)
  --pods-per-node P    replicas per node (default 30)
  --steady-seconds S   measurement window once everything runs (default 60)
  --bare-pods          no controller-manager: bare pods placed by the scheduler instead of a Deployment
  --start-concurrency C  hollow --start-concurrency (default 16)
  --out DIR            results directory (default bench/results/hollow-<timestamp>)
`;

const NS = 'hollow-bench';

interface ProcUsage {
  cpuCores: number;
  rssMiB: number | null;
}

function usageOver(pid: number, cpu0: number, ms: number): ProcUsage {
  return { cpuCores: (readCpuSeconds(pid) - cpu0) / (ms / 1000), rssMiB: readMemory(pid).rssMiB };
}

function requestMix(m: ParsedMetrics, nodes: number): Record<string, number> {
  const mix = new Map<string, number>();
  const add = (key: string, v: number): void => void mix.set(key, (mix.get(key) ?? 0) + v);
  for (const s of m.samples) {
    if (s.name === 'shardlet_api_requests_total') add(`main ${s.labels['verb']} ${s.labels['resource']}`, s.value);
    else if (s.name === 'shardlet_heartbeat_api_requests_total') add(`heartbeat ${s.labels['verb']} ${s.labels['resource']}`, s.value);
    else if (s.name === 'shardlet_events_total') add(`events ${s.labels['result']}`, s.value);
  }
  return Object.fromEntries([...mix].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round((v / nodes) * 100) / 100]));
}

async function deployment(cp: ControlPlane, replicas: number): Promise<void> {
  const d = {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'hollow-load', namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'hollow-load' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '100%', maxUnavailable: '100%' } },
      template: {
        metadata: { labels: { app: 'hollow-load' } },
        spec: { automountServiceAccountToken: false, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: BENCH_IMAGE, command: ['sleep', '86400'] }] },
      },
    },
  };
  const r = await cp.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify(d), timeoutMs: 120_000 });
  if (r.code !== 0) throw new Error(`create deployment: ${r.stderr}`);
}

async function bareRunningReady(cp: ControlPlane): Promise<number> {
  const r = await cp.kubectl(['get', 'pods', '-n', NS, '-o', 'jsonpath={range .items[*]}{.status.phase}/{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}'], { timeoutMs: 120_000 });
  if (r.code !== 0) throw new Error(r.stderr);
  return r.stdout.split('\n').filter((l) => l === 'Running/True').length;
}

async function createBarePods(cp: ControlPlane, count: number): Promise<void> {
  for (let i = 0; i < count; i += 500) {
    const items = Array.from({ length: Math.min(500, count - i) }, (_, j) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: `load-${i + j}`, namespace: NS },
      spec: { automountServiceAccountToken: false, terminationGracePeriodSeconds: 1, tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' }], containers: [{ name: 'c', image: BENCH_IMAGE, command: ['sleep', '86400'] }] },
    }));
    const r = await cp.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }), timeoutMs: 300_000 });
    if (r.code !== 0) throw new Error(`create pods: ${r.stderr}`);
  }
}

async function availableReplicas(cp: ControlPlane): Promise<number> {
  const r = await cp.kubectl(['get', 'deployment', '-n', NS, 'hollow-load', '-o', 'jsonpath={.status.availableReplicas}'], { timeoutMs: 60_000 });
  return r.code === 0 ? Number(r.stdout || '0') : 0;
}

export async function runHollowBench(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv.filter((a) => a !== '--hollow'),
    strict: true,
    options: { nodes: { type: 'string' }, 'pods-per-node': { type: 'string' }, 'steady-seconds': { type: 'string' }, 'bare-pods': { type: 'boolean' }, 'start-concurrency': { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean' } },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const num = (v: string | undefined, d: number, name: string, max: number): number => {
    const n = v === undefined ? d : Number(v);
    if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`--${name} must be an integer in 1..${max}, got ${v}`);
    return n;
  };
  const nodes = num(values.nodes, 100, 'nodes', 5000);
  const perNode = num(values['pods-per-node'], 30, 'pods-per-node', 110);
  const steadyS = num(values['steady-seconds'], 60, 'steady-seconds', 3600);
  const concurrency = num(values['start-concurrency'], 16, 'start-concurrency', 256);
  const bare = values['bare-pods'] === true;
  const out = path.resolve(values.out ?? path.join('bench', 'results', `hollow-${new Date().toISOString().replace(/[:.]/g, '-')}`));
  fs.mkdirSync(out, { recursive: true });
  const log = (msg: string): void => void process.stderr.write(`hollow-bench: ${msg}\n`);
  const pods = nodes * perNode;
  log(`${nodes} nodes × ${perNode} pods = ${pods} (${bare ? 'bare pods' : 'Deployment'}) → ${out}`);

  const cp = await startControlPlane({ watchCache: true, scheduler: true, controllerManager: !bare, extraApiserverArgs: ['--max-requests-inflight=1000', '--max-mutating-requests-inflight=500'] });
  let hollow: HollowProcess | undefined;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-hollow-bench-'));
  try {
    await cp.ensureNamespace(NS);
    const agentConfig = path.join(tmp, 'agent.yaml');
    // Pods have no requests; allocatable only bounds pods per node.
    // A cluster DNS, as every real cluster has (without it the kubelet warns MissingClusterDNS on every pod sync).
    fs.writeFileSync(agentConfig, 'kubeAPIQPS: 50\nkubeAPIBurst: 100\nclusterDNS: [10.0.0.10]\nclusterDomain: cluster.local\n');
    const apiCpu0 = readCpuSeconds(cp.apiserverPid ?? 0);
    const etcdCpu0 = readCpuSeconds(cp.etcdPid);
    const t0 = Date.now();
    hollow = await startHollow(['--kubeconfig', cp.adminKubeconfig, '--nodes', String(nodes), '--node-name-prefix', 'hb-', '--max-pods', String(Math.max(perNode + 10, 40)), '--agent-config', agentConfig, '--start-concurrency', String(concurrency)], { rootDir: path.join(tmp, 'root'), stderrFile: path.join(out, 'hollow-stderr.log') });
    const pid = hollow.child.pid as number;
    const hollowCpu0 = readCpuSeconds(pid);
    await pollUntil(async () => ((await hollowNodes(cp, 'hb-')).filter((n) => n.ready === 'True').length === nodes ? true : undefined), { what: `${nodes} nodes Ready`, timeoutMs: Math.max(300_000, nodes * 1_000), intervalMs: 2_000 });
    const readyS = (Date.now() - t0) / 1000;
    log(`${nodes} nodes Ready in ${readyS.toFixed(1)} s`);
    const t1 = Date.now();
    if (bare) await createBarePods(cp, pods);
    else await deployment(cp, pods);
    await pollUntil(async () => ((bare ? await bareRunningReady(cp) : await availableReplicas(cp)) >= pods ? true : undefined), { what: `${pods} replicas available`, timeoutMs: Math.max(600_000, pods * 200), intervalMs: 5_000 });
    const availableS = (Date.now() - t1) / 1000;
    log(`${pods} replicas available in ${availableS.toFixed(1)} s`);
    // Steady window.
    const before = parsePromText(await hollow.metrics());
    const w0 = Date.now();
    const hCpu = readCpuSeconds(pid);
    const aCpu = readCpuSeconds(cp.apiserverPid ?? 0);
    const eCpu = readCpuSeconds(cp.etcdPid);
    await new Promise((r) => setTimeout(r, steadyS * 1000)); // the measurement window itself, not a synchronisation
    const windowMs = Date.now() - w0;
    const after = parsePromText(await hollow.metrics());
    const hollowUse = usageOver(pid, hCpu, windowMs);
    const apiUse = usageOver(cp.apiserverPid ?? 0, aCpu, windowMs);
    const etcdUse = usageOver(cp.etcdPid, eCpu, windowMs);
    const lateness = bucketDelta(histogramBuckets(before, 'shardlet_node_lease_renew_lateness_seconds'), histogramBuckets(after, 'shardlet_node_lease_renew_lateness_seconds'));
    const sessionS = (Date.now() - t0) / 1000;
    const results = {
      nodes, podsPerNode: perNode, pods, mode: bare ? 'bare pods (scheduler)' : 'Deployment (scheduler + controller-manager)',
      machine: { cpus: os.cpus().length, memGiB: Math.round(os.totalmem() / 2 ** 30), load1mAtEnd: os.loadavg()[0] },
      timeToReadyS: readyS, timeToAvailableS: availableS,
      leaseLatenessS: { renewals: lateness.at(-1)?.count ?? 0, p50: histogramQuantile(lateness, 0.5), p99: histogramQuantile(lateness, 0.99) },
      hollow: { cpuCoresSteady: hollowUse.cpuCores, cpuCoresSession: (readCpuSeconds(pid) - hollowCpu0) / sessionS, rssMiB: hollowUse.rssMiB, rssMiBPerNode: hollowUse.rssMiB === null ? null : hollowUse.rssMiB / nodes },
      apiserver: { cpuCoresSteady: apiUse.cpuCores, cpuCoresSession: (readCpuSeconds(cp.apiserverPid ?? 0) - apiCpu0) / ((Date.now() - t0) / 1000), rssMiB: apiUse.rssMiB },
      etcd: { cpuCoresSteady: etcdUse.cpuCores, cpuCoresSession: (readCpuSeconds(cp.etcdPid) - etcdCpu0) / ((Date.now() - t0) / 1000), rssMiB: etcdUse.rssMiB },
      requestsPerNodeSession: requestMix(after, nodes),
      requestsPerNodeSteadyPerMinute: Object.fromEntries(Object.entries(requestMix(after, nodes)).map(([k, v]) => [k, Math.round(((v - (requestMix(before, nodes)[k] ?? 0)) * 60_000 / windowMs) * 100) / 100])),
    };
    fs.writeFileSync(path.join(out, 'hollow.json'), JSON.stringify(results, null, 2) + '\n');
    const md = [
      `# Hollow bench: ${nodes} nodes × ${perNode} pods (${results.mode})`, '',
      '| measure | value |', '|---|---|',
      `| nodes Ready (from spawn) | ${readyS.toFixed(1)} s |`,
      `| ${pods} replicas available (from create) | ${availableS.toFixed(1)} s |`,
      `| lease lateness p50 / p99 (${results.leaseLatenessS.renewals} renewals, steady) | ${results.leaseLatenessS.p50.toFixed(3)} / ${results.leaseLatenessS.p99.toFixed(3)} s |`,
      `| hollow RSS (total / per node) | ${hollowUse.rssMiB?.toFixed(0)} MiB / ${results.hollow.rssMiBPerNode?.toFixed(2)} MiB |`,
      `| hollow CPU steady / session | ${hollowUse.cpuCores.toFixed(2)} / ${results.hollow.cpuCoresSession.toFixed(2)} cores |`,
      `| kube-apiserver CPU steady / session, RSS | ${apiUse.cpuCores.toFixed(2)} / ${results.apiserver.cpuCoresSession.toFixed(2)} cores, ${apiUse.rssMiB?.toFixed(0)} MiB |`,
      `| etcd CPU steady / session, RSS | ${etcdUse.cpuCores.toFixed(2)} / ${results.etcd.cpuCoresSession.toFixed(2)} cores, ${etcdUse.rssMiB?.toFixed(0)} MiB |`,
      '', '| requests per node (client verb resource) | whole session | steady, per minute |', '|---|---|---|',
      ...Object.entries(results.requestsPerNodeSession).map(([k, v]) => `| ${k} | ${v} | ${results.requestsPerNodeSteadyPerMinute[k] ?? 0} |`),
      '',
    ].join('\n');
    fs.writeFileSync(path.join(out, 'hollow.md'), md);
    process.stdout.write(md + '\n');
    return 0;
  } finally {
    if (hollow !== undefined) {
      const code = await hollow.stop(120_000).catch(() => null);
      log(`hollow exited ${code}`);
    }
    await cp.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
