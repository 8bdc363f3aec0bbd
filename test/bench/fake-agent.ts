/**
 * A stand-in agent for the bench's own tests: the smallest thing that speaks the bench's
 * contract with `shardlet agent` (kubelet-style flags; manifests in --pod-manifest-path; CRI on
 * --container-runtime-endpoint; /healthz, /pods, /metrics on --read-only-port; a `pod running` JSON line
 * on stderr). It lets the bench machinery be tested end to end against the real sim-runtime
 * without the real agent. Not a model of the agent: one pod at a time, a 50 ms directory poll.
 *
 * FAKE_AGENT_BUG selects a deliberate bug the bench must catch:
 *   duplicate  the first pod gets a second sandbox
 *   leak       deleted pods are never torn down
 *   nolog      no `pod running` lines (the bench must fall back to polling /pods)
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { CriClient } from '../../src/shared/cri/cri-client.js';

const { values } = parseArgs({
  strict: false,
  options: {
    'container-runtime-endpoint': { type: 'string' },
    'pod-manifest-path': { type: 'string' },
    'node-name': { type: 'string' },
    'read-only-port': { type: 'string' },
  },
});
const bug = process.env['FAKE_AGENT_BUG'] ?? '';
const dir = String(values['pod-manifest-path']);
const node = String(values['node-name']);
const cri = new CriClient({ endpoint: String(values['container-runtime-endpoint']) });
const eld = monitorEventLoopDelay({ resolution: 10 });
eld.enable();

interface Pod { uid: string; name: string; ns: string; seenAt: number; sandboxes: string[]; container: string; running: boolean }
const pods = new Map<string, Pod>(); // by file name

async function start(file: string): Promise<void> {
  const m = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { metadata: { name: string; namespace: string; uid: string }; spec: { containers: Array<{ name: string; image: string; command: string[] }> } };
  const p: Pod = { uid: m.metadata.uid, name: `${m.metadata.name}-${node}`, ns: m.metadata.namespace, seenAt: performance.now(), sandboxes: [], container: '', running: false };
  pods.set(file, p);
  const labels = { 'io.kubernetes.pod.uid': p.uid, 'io.kubernetes.pod.name': p.name, 'io.kubernetes.pod.namespace': p.ns };
  const config = { metadata: { name: p.name, uid: p.uid, namespace: p.ns, attempt: 0 }, labels, linux: { securityContext: { namespaceOptions: { network: 'NODE' } } } };
  const copies = bug === 'duplicate' && pods.size === 1 ? 2 : 1;
  for (let i = 0; i < copies; i++) p.sandboxes.push(await cri.runPodSandbox({ config: { ...config, metadata: { ...config.metadata, attempt: i } } } as never));
  const c = m.spec.containers[0];
  p.container = await cri.createContainer({ podSandboxId: p.sandboxes[0], config: { metadata: { name: c?.name, attempt: 0 }, image: { image: c?.image }, command: c?.command, labels }, sandboxConfig: config } as never);
  await cri.startContainer(p.container);
  p.running = true;
  if (bug !== 'nolog') process.stderr.write(JSON.stringify({ msg: 'pod running', pod: `${p.ns}/${p.name}`, podUID: p.uid, seenToRunningMs: performance.now() - p.seenAt }) + '\n');
}

async function stop(file: string, p: Pod): Promise<void> {
  pods.delete(file);
  if (bug === 'leak') return;
  await cri.stopContainer(p.container, 0);
  await cri.removeContainer(p.container);
  for (const s of p.sandboxes) {
    await cri.stopPodSandbox(s);
    await cri.removePodSandbox(s);
  }
}

let busy = false;
setInterval(() => {
  if (busy) return;
  busy = true;
  const files = new Set(fs.readdirSync(dir).filter((f) => !f.startsWith('.')));
  const work: Promise<void>[] = [];
  for (const f of files) if (!pods.has(f)) work.push(start(f));
  for (const [f, p] of pods) if (!files.has(f) && p.running) work.push(stop(f, p));
  void Promise.all(work)
    .catch((err: unknown) => process.stderr.write(`fake-agent: ${String(err)}\n`))
    .finally(() => (busy = false));
}, 50);

http.createServer((req, res) => {
  if (req.url === '/healthz') res.end('ok');
  else if (req.url === '/pods') {
    const items = [...pods.values()].map((p) => ({
      metadata: { uid: p.uid, name: p.name, namespace: p.ns },
      status: { phase: p.running ? 'Running' : 'Pending', containerStatuses: [{ state: p.running ? { running: {} } : { waiting: {} } }] },
    }));
    res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', items }));
  } else if (req.url === '/metrics') {
    const s = (v: number): number => (Number.isFinite(v) ? v / 1e9 : 0);
    res.end(`shardlet_main_event_loop_delay_seconds{stat="p50"} ${s(eld.percentile(50))}\nshardlet_main_event_loop_delay_seconds{stat="p99"} ${s(eld.percentile(99))}\nshardlet_main_event_loop_delay_seconds{stat="max"} ${s(eld.max)}\n`);
    eld.reset();
  } else {
    res.statusCode = 404;
    res.end();
  }
}).listen(Number(values['read-only-port']), '127.0.0.1');

process.on('SIGTERM', () => process.exit(0));
