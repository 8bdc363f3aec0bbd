/**
 * Where shardlet used to differ from the kubelet, against a real kube-apiserver (Node,RBAC +
 * NodeRestriction; the agent uses the node identity) on the simulated runtime, with
 * `--node-ip 127.0.0.2`; one control plane and one agent for the file, in order:
 *  1. service links: a Service created before the agent and one created while it runs (the
 *     node's one Service watch) show up in a new pod's environment as the kubelet makes them
 *     (read inside the container through CRI ExecSync), with the master service `kubernetes`;
 *     with enableServiceLinks false only the master service's;
 *  2. host network: status.podIP(s) and the containers' POD_IP are the node IP (--node-ip), as
 *     are status.hostIP and the Node's InternalIP;
 *  3. a readiness gate: the pod is Running with ready containers but Ready=False
 *     (ReadinessGatesNotReady, the kubelet's message) until the test client sets the gate's
 *     condition True in the API; then Ready=True without a reason, and the gate condition is
 *     never overwritten by the agent's status writes;
 *  4. a pod that finished keeps its podIP;
 *  5. OS admission: an API pod labelled kubernetes.io/os=windows is Failed with
 *     PodOSSelectorNodeLabelDoesNotMatch (and a Warning event), and a static pod with spec.os.name windows (the 1.20
 *     API server has no spec.os, so it comes from a manifest) with PodOSNotSupported; neither
 *     ever reaches the runtime.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { pollUntil, runtimeView, writePodManifest } from './agent-harness.js';
import { apiPod, clusterSimFixture, coreApi, createPods, isApiRunning, PodWatchRecorder, startClusterAgent } from './cluster-harness.js';
import { execIn } from './cluster-volumes.js';

const NS = 'div';
const NODE = 'node-div';
const NODE_IP = '127.0.0.2';
const GATE = 'example.com/lb-ready';
const manifestDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-div-manifests-'));
const f = clusterSimFixture({ namespace: NS, teardown: () => fs.rmSync(manifestDir, { recursive: true, force: true }) });

/** The container's view of some variables, through ExecSync (`sh -c echo` in the simulated busybox). */
async function envInside(uid: string, names: readonly string[]): Promise<Record<string, string>> {
  const script = names.map((n) => `echo "${n}=$${n}"`).join('; ');
  const r = await execIn(f.endpoint, uid, 'main', ['sh', '-c', script]);
  assert.equal(r.exitCode, 0, `exec: ${r.stderr}`);
  return Object.fromEntries(r.stdout.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

test('cluster mode on the sim: service links, host-network IPs, readiness gates, kept podIP, OS admission', { timeout: 600_000 }, async (t) => {
  const { cp } = f;
  const { core } = coreApi(cp.adminKubeconfig);
  const master = await pollUntil(async () => {
    try {
      return await core.readNamespacedService({ name: 'kubernetes', namespace: 'default' });
    } catch {
      return undefined;
    }
  }, { what: 'the master service default/kubernetes', timeoutMs: 60_000, intervalMs: 250 });
  const web = await core.createNamespacedService({ namespace: NS, body: { metadata: { name: 'web-front' }, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'dns', port: 53, protocol: 'UDP' }] } } });
  await core.createNamespacedService({ namespace: NS, body: { metadata: { name: 'headless' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } } });

  const r = (f.rec = new PodWatchRecorder(cp.adminKubeconfig, NS));
  await r.start();
  const agent = (f.agent = await startClusterAgent({ cp, nodeName: NODE, endpoint: f.endpoint, manifestDir, extraArgs: ['--node-ip', NODE_IP] }));
  // On a failure, the agent's last log lines say why.
  t.after(() => {
    if (agent.logs.length > 0) t.diagnostic(`agent log tail:\n${agent.logs.slice(-60).join('\n')}`);
  });
  const running = async (uid: string, what: string): Promise<V1Pod> =>
    r.waitFor(() => { const p = r.pods.get(uid); return p && isApiRunning(p) ? p : undefined; }, what, 120_000);

  // 1. Service links.
  // Created while the agent runs: it reaches the agent through the watch, not its first list.
  const late = await core.createNamespacedService({ namespace: NS, body: { metadata: { name: 'late' }, spec: { ports: [{ port: 9090 }] } } });
  const [links, nolinks] = await createPods(core, [
    apiPod('links', NS, NODE),
    { ...apiPod('nolinks', NS, NODE), spec: { ...apiPod('nolinks', NS, NODE).spec!, enableServiceLinks: false } },
  ]);
  await running(links!.metadata!.uid!, 'the service-links pod Running');
  await running(nolinks!.metadata!.uid!, 'the enableServiceLinks=false pod Running');
  const webIP = web.spec!.clusterIP!;
  const masterIP = master.spec!.clusterIP!;
  const masterPort = master.spec!.ports![0]!.port;
  // (The late service is left out here: this pod's start races its watch event; the pod
  // created after it was seen is checked below.)
  const names = ['WEB_FRONT_SERVICE_HOST', 'WEB_FRONT_SERVICE_PORT', 'WEB_FRONT_SERVICE_PORT_HTTP', 'WEB_FRONT_SERVICE_PORT_DNS', 'WEB_FRONT_PORT', 'WEB_FRONT_PORT_53_UDP', 'WEB_FRONT_PORT_53_UDP_ADDR',
    'HEADLESS_SERVICE_HOST', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT', 'KUBERNETES_PORT'];
  assert.deepEqual(await envInside(links!.metadata!.uid!, names), {
    WEB_FRONT_SERVICE_HOST: webIP,
    WEB_FRONT_SERVICE_PORT: '80',
    WEB_FRONT_SERVICE_PORT_HTTP: '80',
    WEB_FRONT_SERVICE_PORT_DNS: '53',
    WEB_FRONT_PORT: `tcp://${webIP}:80`,
    WEB_FRONT_PORT_53_UDP: `udp://${webIP}:53`,
    WEB_FRONT_PORT_53_UDP_ADDR: webIP,
    HEADLESS_SERVICE_HOST: '',
    KUBERNETES_SERVICE_HOST: masterIP,
    KUBERNETES_SERVICE_PORT: String(masterPort),
    KUBERNETES_PORT: `tcp://${masterIP}:${masterPort}`,
  });
  const [after] = await createPods(core, [apiPod('links-after', NS, NODE)]);
  await running(after!.metadata!.uid!, 'a pod created after the late service Running');
  const lateIP = late.spec!.clusterIP!;
  assert.deepEqual(await envInside(after!.metadata!.uid!, ['LATE_SERVICE_HOST', 'LATE_PORT']), { LATE_SERVICE_HOST: lateIP, LATE_PORT: `tcp://${lateIP}:9090` }, 'a service added while the agent runs (watch event)');
  assert.deepEqual(await envInside(nolinks!.metadata!.uid!, ['WEB_FRONT_SERVICE_HOST', 'KUBERNETES_SERVICE_HOST']), { WEB_FRONT_SERVICE_HOST: '', KUBERNETES_SERVICE_HOST: masterIP }, 'enableServiceLinks false: the master service only');
  t.diagnostic(`service links: web-front ${webIP}, late ${lateIP}, kubernetes ${masterIP}:${masterPort}`);

  // 2. Host network (apiPod's default): the node IP everywhere.
  const [hn] = await createPods(core, [{
    ...apiPod('hostnet', NS, NODE),
    spec: { ...apiPod('hostnet', NS, NODE).spec!, containers: [{ ...apiPod('hostnet', NS, NODE).spec!.containers[0]!, env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }, { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } }] }] },
  }]);
  const hnRunning = await running(hn!.metadata!.uid!, 'the host-network pod Running');
  assert.equal(hnRunning.status?.podIP, NODE_IP);
  assert.deepEqual(hnRunning.status?.podIPs, [{ ip: NODE_IP }]);
  assert.equal(hnRunning.status?.hostIP, NODE_IP);
  assert.deepEqual(await envInside(hn!.metadata!.uid!, ['POD_IP', 'HOST_IP']), { POD_IP: NODE_IP, HOST_IP: NODE_IP });
  const node = await core.readNode({ name: NODE });
  assert.deepEqual(node.status?.addresses?.filter((a) => a.type === 'InternalIP').map((a) => a.address), [NODE_IP]);

  // 3. A readiness gate set by another client.
  const [gated] = await createPods(core, [{ ...apiPod('gated', NS, NODE), spec: { ...apiPod('gated', NS, NODE).spec!, readinessGates: [{ conditionType: GATE }] } }]);
  const gUid = gated!.metadata!.uid!;
  const cond = (p: V1Pod | undefined, type: string) => p?.status?.conditions?.find((c) => c.type === type);
  const waiting = await r.waitFor(() => {
    const p = r.pods.get(gUid);
    return p && isApiRunning(p) && cond(p, 'ContainersReady')?.status === 'True' && cond(p, 'Ready')?.status === 'False' ? p : undefined;
  }, 'the gated pod Running with ready containers', 120_000);
  assert.equal(cond(waiting, 'Ready')?.reason, 'ReadinessGatesNotReady');
  assert.equal(cond(waiting, 'Ready')?.message, `corresponding condition of pod readiness gate "${GATE}" does not exist.`);
  await core.patchNamespacedPodStatus({ name: 'gated', namespace: NS, body: { status: { conditions: [{ type: GATE, status: 'True' }] } } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
  const ready = await r.waitFor(() => { const p = r.pods.get(gUid); return cond(p, 'Ready')?.status === 'True' ? p : undefined; }, 'the gated pod Ready once the gate is True', 60_000);
  assert.equal(cond(ready, 'Ready')?.reason, undefined, 'no stale ReadinessGatesNotReady reason');
  assert.equal(cond(ready, 'Ready')?.message, undefined);
  assert.equal(cond(ready, GATE)?.status, 'True');
  // The gate goes False again: Ready follows; the agent's writes never touch the gate.
  await core.patchNamespacedPodStatus({ name: 'gated', namespace: NS, body: { status: { conditions: [{ type: GATE, status: 'False' }] } } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
  const unready = await r.waitFor(() => { const p = r.pods.get(gUid); return cond(p, 'Ready')?.status === 'False' ? p : undefined; }, 'Ready=False once the gate is False', 60_000);
  assert.equal(cond(unready, 'Ready')?.message, `the status of pod readiness gate "${GATE}" is not "True", but False`);
  assert.equal(cond(unready, GATE)?.status, 'False');

  // 4. A pod that finished keeps its podIP (pod network on the sim: it has a sandbox IP).
  const [once] = await createPods(core, [apiPod('once', NS, NODE, { podNetwork: true, restartPolicy: 'Never', command: ['sh', '-c', 'sleep 1'] })]);
  const oUid = once!.metadata!.uid!;
  const withIP = await r.waitFor(() => { const p = r.pods.get(oUid); return p?.status?.podIP ? p : undefined; }, 'the short pod has a podIP', 60_000);
  const done = await r.waitFor(() => { const p = r.pods.get(oUid); return p?.status?.phase === 'Succeeded' ? p : undefined; }, 'the short pod Succeeded', 60_000);
  await pollUntil(async () => {
    const v = (await runtimeView(f.endpoint)).get(oUid);
    return v !== undefined && v.sandboxes.every((s) => s.state !== 'SANDBOX_READY') ? true : undefined;
  }, { what: 'the finished pod\'s sandbox stopped', timeoutMs: 60_000, intervalMs: 200 });
  const final = await core.readNamespacedPod({ name: 'once', namespace: NS });
  assert.notEqual(withIP.status?.podIP, NODE_IP, 'a pod-network IP, not the node\'s');
  assert.equal(done.status?.podIP, withIP.status?.podIP);
  assert.equal(final.status?.podIP, withIP.status?.podIP, 'podIP kept once the sandbox is stopped');
  assert.deepEqual(final.status?.podIPs?.map((x) => x.ip), [withIP.status!.podIP!]);

  // 5. OS admission. The static pod with spec.os windows arrives in the agent's manifest
  // directory now (not at its start, when its manifest decoder competes with everything else).
  writePodManifest(manifestDir, 'win', { extraYaml: '  os:\n    name: windows\n' });
  const [labelled] = await createPods(core, [{ ...apiPod('win-label', NS, NODE), metadata: { name: 'win-label', namespace: NS, labels: { 'kubernetes.io/os': 'windows' } } }]);
  const lUid = labelled!.metadata!.uid!;
  const rejected = await r.waitFor(() => { const p = r.pods.get(lUid); return p?.status?.phase === 'Failed' ? p : undefined; }, 'the windows-labelled pod Failed', 60_000);
  assert.equal(rejected.status?.reason, 'PodOSSelectorNodeLabelDoesNotMatch');
  assert.equal(rejected.status?.message, "Pod was rejected: Failed to admit pod as the `kubernetes.io/os` label doesn't match node label");
  const ev = await pollUntil(async () => (await core.listNamespacedEvent({ namespace: NS })).items.find((e) => e.involvedObject.uid === lUid && e.reason === 'PodOSSelectorNodeLabelDoesNotMatch'), { what: 'the rejection event', timeoutMs: 30_000, intervalMs: 250 });
  assert.equal(ev.type, 'Warning');
  assert.equal(ev.message, "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label");
  let lastSeen = '';
  const win = await pollUntil(async () => {
    const all = await agent.pods();
    lastSeen = all.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}:${p.status?.phase}`).join(' ');
    return all.find((p) => p.metadata?.name?.startsWith('win-') && p.metadata.namespace === 'default' && p.status?.phase === 'Failed');
  }, { what: 'the spec.os windows static pod Failed', timeoutMs: 60_000, intervalMs: 250 }).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; /pods: ${lastSeen}`);
  });
  assert.equal(win.status?.reason, 'PodOSNotSupported');
  assert.equal(win.status?.message, "Pod was rejected: Failed to admit pod as the OS field doesn't match node OS");
  const view = await runtimeView(f.endpoint);
  assert.equal(view.has(lUid), false, 'the rejected API pod never reached the runtime');
  assert.equal(view.has(win.metadata!.uid!), false, 'the rejected static pod never reached the runtime');
  assert.deepEqual(r.violations, [], 'no status went backwards');
});
