/**
 * The compressed-months soak (`npm run bench -- --soak`): on the simulated runtime, N
 * long-running pods stay up while L pod lifecycles (crash loops, completions, running pods,
 * each deleted after its lifetime) go through the agent at an even rate for M minutes; then
 * every churn pod is deleted and the soak waits (bounded) for the node to be back where it
 * started. It samples the agent's RSS and fds, the runtime's dead containers, sandboxes and
 * images, and the disk under the pod logs and pods directories, and judges:
 *   - dead containers stay under a bound derived from the GC limits (maximum 1 dead instance
 *     per container, a container GC pass every minute): crash-loop pods alive or gone less than
 *     a GC period ago, times the restarts their backoff allows within that time;
 *   - at the end: no dead container, no not-ready sandbox, images back to at most the start
 *     plus those used within the image GC's reach (its 5-minute period + the 1-minute maximum
 *     age);
 *   - agent RSS flat (±5%): the median of the churn's last fifth against its first fifth (the
 *     heap under a steady churn; after the churn V8 may keep its grown heap);
 *   - agent fds flat (±5%): after the settle against before the churn (during the churn the
 *     count follows the work in flight: open log files, CRI streams);
 *   - disk: the entries and bytes under the pod logs directory and the pods directory back to
 *     their start values.
 * Agent flags: --image-maximum-gc-age 1m --minimum-image-ttl-duration 30s (image GC by age
 * collects the rotating churn images; the thresholds are not reached on the sim's large disk).
 * Writes soak.json and soak.md into --out; exit 1 when a judgement fails.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { realClock } from '../src/shared/clock/clock.js';
import { CriClient } from '../src/shared/cri/cri-client.js';
import { freePort, startAgent, startSimRuntime, type ManagedProcess } from './processes.js';
import { parseSoakArgs, type SoakConfig } from './soak-config.js';
import { SOAK_BASE_IMAGE, deleteManifest, soakImage, soakManifest, writeManifest, type SoakPodKind } from './soak-pods.js';
import { takeSample, type SoakSample } from './soak-sample.js';

const KINDS: readonly SoakPodKind[] = ['crashloop', 'completion', 'running'];
const CONTAINER_GC_PERIOD_S = 60;
const IMAGE_GC_REACH_S = 5 * 60 + 60;

interface Judgement {
  what: string;
  ok: boolean;
  detail: string;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)]!;
};

export async function runSoak(cfg: SoakConfig): Promise<{ samples: SoakSample[]; judgements: Judgement[]; createdByKind: Record<string, number> }> {
  const clock = realClock;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-soak-'));
  const manifests = path.join(tmp, 'manifests');
  const root = path.join(tmp, 'root');
  const podLogsDir = path.join(tmp, 'pod-logs');
  for (const d of [manifests, root, podLogsDir]) fs.mkdirSync(d, { recursive: true });
  fs.mkdirSync(cfg.outDir, { recursive: true });
  const socket = path.join(tmp, 'cri.sock');
  const rate = cfg.lifecycles / (cfg.minutes * 60);
  const inflight = Math.ceil(rate * cfg.lifetimeSeconds);
  const log = (m: string): void => void process.stderr.write(`soak: ${m}\n`);
  log(`${cfg.pods} pods, ${cfg.lifecycles} lifecycles in ${cfg.minutes} min (${rate.toFixed(2)}/s, ~${inflight} churn pods alive), workers ${cfg.workers}; tmp ${tmp}`);
  let sim: ManagedProcess | undefined;
  let agent: ManagedProcess | undefined;
  const cri = new CriClient({ endpoint: `unix://${socket}`, timeoutMs: 30_000 });
  const samples: SoakSample[] = [];
  const createdByKind: Record<string, number> = { crashloop: 0, completion: 0, running: 0 };
  const t0 = clock.monotonic();
  const nowS = (): number => (clock.monotonic() - t0) / 1000;
  try {
    // Generous start bounds: the soak is meant for loaded machines too.
    sim = await startSimRuntime({ clock, socket, profile: 'zero', images: [SOAK_BASE_IMAGE], logFile: path.join(cfg.outDir, 'sim-runtime.log'), readyTimeoutMs: 180_000 });
    const port = await freePort();
    agent = await startAgent({
      clock, endpoint: `unix://${socket}`, manifestDir: manifests, rootDir: root, podLogsDir, nodeName: 'soak-node', workers: cfg.workers,
      maxPods: cfg.pods + inflight * 3 + 100, port, verbosity: 1, logFile: path.join(cfg.outDir, 'agent.log'), readyTimeoutMs: 300_000,
      extraArgs: ['--image-maximum-gc-age', '1m', '--minimum-image-ttl-duration', '30s'],
    });
    const agentPid = agent.pid;
    const sample = async (): Promise<SoakSample> => {
      const s = await takeSample({ atS: nowS(), agentPid, cri, podLogsDir, podsDir: path.join(root, 'pods') });
      samples.push(s);
      return s;
    };

    // Steady pods, all running before the churn starts.
    for (let i = 0; i < cfg.pods; i++) await writeManifest(manifests, `steady-${i}`, soakManifest(`steady-${i}`, 'steady', SOAK_BASE_IMAGE));
    const runningSteady = async (): Promise<number> => (await cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } })).filter((c) => (c.labels['io.kubernetes.pod.name'] ?? '').startsWith('steady-')).length;
    const steadyDeadline = clock.monotonic() + 15 * 60_000;
    while ((await runningSteady()) < cfg.pods) {
      if (clock.monotonic() > steadyDeadline) throw new Error(`only ${await runningSteady()} of ${cfg.pods} steady pods running after 15 min`);
      await clock.sleep(1000);
    }
    log(`steady pods running at ${nowS().toFixed(0)} s`);
    const baseline = await sample();
    const churnStartS = nowS();

    // The churn: lifecycle i is created at i / rate seconds and deleted `lifetimeSeconds` later.
    const live: Array<{ name: string; deleteAtS: number }> = [];
    let created = 0;
    let nextSampleS = churnStartS + cfg.sampleSeconds;
    let sampling: Promise<unknown> | undefined;
    const churnEndS = churnStartS + cfg.minutes * 60;
    while (created < cfg.lifecycles || nowS() < churnEndS) {
      const t = nowS();
      const due = Math.min(cfg.lifecycles, Math.floor((t - churnStartS) * rate));
      const writes: Array<Promise<void>> = [];
      for (; created < due; created++) {
        const kind = KINDS[created % KINDS.length]!;
        const name = `churn-${created}`;
        createdByKind[kind]!++;
        live.push({ name, deleteAtS: t + cfg.lifetimeSeconds });
        writes.push(writeManifest(manifests, name, soakManifest(name, kind, soakImage(created, cfg.lifecyclesPerImage))));
      }
      while (live.length > 0 && live[0]!.deleteAtS <= t) writes.push(deleteManifest(manifests, live.shift()!.name));
      await Promise.all(writes);
      if (t >= nextSampleS && sampling === undefined) {
        nextSampleS = t + cfg.sampleSeconds;
        sampling = sample().finally(() => (sampling = undefined));
      }
      if (created % 1000 === 0 && writes.length > 0) log(`${created} lifecycles at ${t.toFixed(0)} s`);
      await clock.sleep(100);
    }
    await sampling;
    const churnEnd = nowS();
    log(`churn done at ${churnEnd.toFixed(0)} s (${created} lifecycles); deleting the ${live.length} left`);
    await Promise.all(live.splice(0).map((p) => deleteManifest(manifests, p.name)));

    // Settle: bounded wait until the runtime holds only the steady pods and the disk is back.
    const settleDeadline = clock.monotonic() + cfg.settleSeconds * 1000;
    let last = await sample();
    const settled = (s: SoakSample): boolean => s.deadContainers === 0 && s.notReadySandboxes === 0 && s.containers === cfg.pods && s.sandboxes === cfg.pods && s.logEntries === baseline.logEntries && s.podDirEntries === baseline.podDirEntries;
    while (!settled(last) && clock.monotonic() < settleDeadline) {
      await clock.sleep(cfg.sampleSeconds * 1000);
      last = await sample();
    }
    // The image GC runs every 5 minutes: one more pass within the settle bound if images remain.
    const imageBound = baseline.images + Math.ceil((IMAGE_GC_REACH_S * rate) / cfg.lifecyclesPerImage) + 1;
    log(`settled=${settled(last)} at ${nowS().toFixed(0)} s`);

    const churn = samples.filter((s) => s.atS >= churnStartS && s.atS <= churnEnd);
    const fifth = Math.max(1, Math.floor(churn.length / 5));
    const early = churn.slice(0, fifth);
    const late = churn.slice(-fifth);
    const flat = (what: string, pick: (s: SoakSample) => number | null): Judgement => {
      const a = median(early.map(pick).filter((x): x is number => x !== null));
      const b = median(late.map(pick).filter((x): x is number => x !== null));
      const change = (b - a) / a;
      return { what: `${what} flat (±5%)`, ok: Math.abs(change) <= 0.05, detail: `churn first fifth median ${a.toFixed(1)}, last fifth ${b.toFixed(1)} (${(change * 100).toFixed(1)}%); before churn ${pick(baseline)?.toFixed(1)}, after settle ${pick(last)?.toFixed(1)}` };
    };
    // Crash-loop pods that may hold dead instances: alive, or gone less than a GC period ago;
    // each has at most 1 + the restarts its backoff (10 s, 20 s, 40 s, …) allows between passes.
    const crashPods = Math.ceil((rate / KINDS.length) * (cfg.lifetimeSeconds + CONTAINER_GC_PERIOD_S + 10));
    const donePods = Math.ceil((rate * 2 / KINDS.length) * (cfg.lifetimeSeconds + CONTAINER_GC_PERIOD_S + 10));
    const deadBound = crashPods * 4 + donePods;
    const peakDead = Math.max(...churn.map((s) => s.deadContainers), 0);
    const peakSandboxes = Math.max(...churn.map((s) => s.sandboxes), 0);
    const peakImages = Math.max(...samples.map((s) => s.images), 0);
    const judgements: Judgement[] = [
      { what: 'dead containers bounded during the churn', ok: peakDead <= deadBound, detail: `peak ${peakDead} ≤ bound ${deadBound}` },
      { what: 'no dead container, no not-ready sandbox at the end', ok: last.deadContainers === 0 && last.notReadySandboxes === 0, detail: `dead ${last.deadContainers}, not-ready sandboxes ${last.notReadySandboxes}, sandboxes ${last.sandboxes} (peak ${peakSandboxes})` },
      { what: 'images bounded by the image GC', ok: last.images <= imageBound, detail: `start ${baseline.images}, peak ${peakImages}, end ${last.images} ≤ ${imageBound}; ${Math.ceil(cfg.lifecycles / cfg.lifecyclesPerImage)} churn images used` },
      flat('agent RSS MiB', (s) => s.rssMiB),
      { what: 'agent fds flat (±5%)', ok: baseline.fds !== null && last.fds !== null && Math.abs(last.fds - baseline.fds) <= 0.05 * baseline.fds, detail: `before churn ${baseline.fds}, after settle ${last.fds}; churn first fifth median ${median(early.map((s) => s.fds ?? NaN))}, last fifth ${median(late.map((s) => s.fds ?? NaN))}` },
      { what: 'pod logs back to start', ok: last.logEntries === baseline.logEntries && last.logBytes === baseline.logBytes, detail: `entries ${baseline.logEntries} → ${last.logEntries}, bytes ${baseline.logBytes} → ${last.logBytes}` },
      { what: 'pod directories back to start', ok: last.podDirEntries === baseline.podDirEntries && last.podDirBytes === baseline.podDirBytes, detail: `entries ${baseline.podDirEntries} → ${last.podDirEntries}, bytes ${baseline.podDirBytes} → ${last.podDirBytes}` },
    ];
    return { samples, judgements, createdByKind };
  } finally {
    await agent?.stop();
    await sim?.stop();
    cri.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

export function renderSoak(cfg: SoakConfig, r: Awaited<ReturnType<typeof runSoak>>, argv: readonly string[]): string {
  const lines = [
    `# Soak: ${cfg.pods} pods, ${cfg.lifecycles} lifecycles, ${cfg.minutes} min`,
    '',
    `Command: \`npm run bench -- ${argv.join(' ')}\``,
    `Lifecycles by kind: ${Object.entries(r.createdByKind).map(([k, n]) => `${k} ${n}`).join(', ')}; lifetime ${cfg.lifetimeSeconds} s; workers ${cfg.workers}; machine load ${os.loadavg()[0]?.toFixed(1)} (1 min) on ${os.availableParallelism()} CPUs.`,
    '',
    '| check | verdict | detail |',
    '|---|---|---|',
    ...r.judgements.map((j) => `| ${j.what} | ${j.ok ? 'ok' : 'FAIL'} | ${j.detail} |`),
    '',
    '| t (s) | RSS MiB | fds | containers | dead | sandboxes | not ready | images | log entries | log bytes | pod-dir entries |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...r.samples.map((s) => `| ${s.atS.toFixed(0)} | ${s.rssMiB?.toFixed(1) ?? '-'} | ${s.fds ?? '-'} | ${s.containers} | ${s.deadContainers} | ${s.sandboxes} | ${s.notReadySandboxes} | ${s.images} | ${s.logEntries} | ${s.logBytes} | ${s.podDirEntries} |`),
    '',
  ];
  return lines.join('\n');
}

/** `npm run bench -- --soak ...` (run.ts hands the arguments over). */
export async function soakMain(argv: readonly string[]): Promise<number> {
  const cfg = parseSoakArgs(argv, new Date());
  const r = await runSoak(cfg);
  const md = renderSoak(cfg, r, argv);
  fs.writeFileSync(path.join(cfg.outDir, 'soak.json'), JSON.stringify({ config: cfg, ...r }, null, 2) + '\n');
  fs.writeFileSync(path.join(cfg.outDir, 'soak.md'), md);
  process.stdout.write(md);
  const failed = r.judgements.filter((j) => !j.ok);
  process.stdout.write(`\nsoak: ${failed.length === 0 ? 'PASS' : `FAIL (${failed.map((j) => j.what).join('; ')})`}\n`);
  return failed.length === 0 ? 0 : 1;
}
