/**
 * Ephemeral containers end to end (issue 30), shared by the simulated-runtime and containerd
 * e2e tests: the same requests and expectations on both runtimes, through the real API server
 * (v1.20, the EphemeralContainers feature gate on) and the agent's secure port.
 *
 * kubectl 1.32's `kubectl debug` cannot talk to a v1.20 API server: 1.20's ephemeralcontainers
 * subresource takes an `EphemeralContainers` object (Pod since 1.22), and the fallback kubectl
 * keeps for old servers fails client-side (`no kind "EphemeralContainers" is registered`): the
 * first subtest pins that down. The others send what that fallback sent — the
 * EphemeralContainers object, PUT with `kubectl replace --raw` — then use kubectl as
 * `kubectl debug` does (`attach -i` / `attach -it`, `logs -c`):
 *  - an ephemeral container targeting `main` (`sh -c 'echo hi'`) starts in the pod's sandbox in
 *    the target's PID namespace (the runtime gets pid TARGET with main's id), is reported in
 *    ephemeralContainerStatuses (terminated, exit 0, never restarted), and `kubectl logs -c`
 *    shows its output;
 *  - one with stdin (`sh`, stdin + stdinOnce, as `kubectl debug -i` makes it): `kubectl attach -i`
 *    sends typed lines to its shell and shows their output; `exit` ends it;
 *  - one with a tty too (`kubectl debug -it`): `kubectl attach -it` under a pseudo-terminal;
 *  - the pod's deletion kills them with it.
 */
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1ContainerStatus, V1EphemeralContainer, V1Pod } from '@kubernetes/client-node';
import type { ControlPlane } from '../harness/apiserver-harness.js';
import { freePort } from './agent-harness.js';
import { apiPod, coreApi, createPods, isApiRunning, PodWatchRecorder, startClusterAgent, TEST_IMAGE, type ClusterFixture } from './cluster-harness.js';
import { kubectlRecorded, secureArgs, waitForAgentNode } from './kubelet-api-e2e.js';
import { KubectlProcess } from './streaming-e2e.js';
import { pollUntil } from '../harness/poll.js';
import { CriClient } from '../../src/shared/cri/cri-client.js';

export interface EphemeralScenario {
  f: ClusterFixture;
  cp: ControlPlane;
  NS: string;
  NODE: string;
  transcript: string[];
  /** The containerID scheme: `shardlet-sim` or `containerd`. */
  runtimeName: string;
  imagePullPolicy: 'Never' | 'IfNotPresent';
  /** Run `ps` in an ephemeral container and find the target's process (a real runtime only). */
  processCheck: boolean;
}

function ephemeralStatus(p: V1Pod | undefined, name: string): V1ContainerStatus | undefined {
  return p?.status?.ephemeralContainerStatuses?.find((c) => c.name === name);
}

export async function runEphemeralScenario(t: TestContext, o: EphemeralScenario): Promise<void> {
  const { cp, f, NS, NODE, transcript } = o;
  const port = await freePort();
  f.agent = await startClusterAgent({ cp, nodeName: NODE, endpoint: f.endpoint, extraArgs: secureArgs(cp, port) });
  await waitForAgentNode(cp, NODE, port);
  const { core } = coreApi(cp.adminKubeconfig);
  const r = (f.rec = new PodWatchRecorder(cp.adminKubeconfig, NS));
  await r.start();
  // A PID namespace of its own (no shareProcessNamespace), so --target means pid TARGET.
  const base = apiPod('target', NS, NODE, { imagePullPolicy: o.imagePullPolicy, graceSeconds: 2 });
  const [created] = await createPods(core, [{ ...base, spec: { ...base.spec!, shareProcessNamespace: false } }]);
  const uid = created!.metadata!.uid!;
  await r.waitFor(() => { const x = r.pods.get(uid); return x !== undefined && isApiRunning(x) ? true : undefined; }, 'pod Running in the API', 120_000);
  const subresource = `/api/v1/namespaces/${NS}/pods/target/ephemeralcontainers`;
  /** Appends one ephemeral container through the v1.20 subresource (kubectl debug's legacy request). */
  const addEphemeral = async (ec: V1EphemeralContainer): Promise<void> => {
    const got = await kubectlRecorded(cp, transcript, ['get', '--raw', subresource]);
    assert.equal(got.code, 0, got.stderr);
    const obj = JSON.parse(got.stdout) as { kind: string; ephemeralContainers?: V1EphemeralContainer[] };
    assert.equal(obj.kind, 'EphemeralContainers');
    obj.ephemeralContainers = [...(obj.ephemeralContainers ?? []), ec];
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ephemeral-')), 'ec.json');
    fs.writeFileSync(file, JSON.stringify(obj));
    const put = await kubectlRecorded(cp, transcript, ['replace', '--raw', subresource, '-f', file]);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
    assert.equal(put.code, 0, put.stderr);
  };

  await t.test('kubectl 1.32 debug against the v1.20 API server fails in kubectl itself', async () => {
    const res = await kubectlRecorded(cp, transcript, ['debug', '-n', NS, 'target', `--image=${TEST_IMAGE}`, '--target=main', '-c', 'never', '--', 'true']);
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /no kind "EphemeralContainers" is registered/);
  });

  await t.test('an ephemeral container --target main, sh -c "echo hi": status and kubectl logs -c', async () => {
    await addEphemeral({ name: 'dbg', image: TEST_IMAGE, imagePullPolicy: o.imagePullPolicy, targetContainerName: 'main', command: ['sh', '-c', 'echo hi from debug'], terminationMessagePolicy: 'File' });
    const st = await r.waitFor(() => { const s = ephemeralStatus(r.pods.get(uid), 'dbg'); return s?.state?.terminated ? s : undefined; }, 'dbg terminated in ephemeralContainerStatuses', 60_000);
    assert.equal(st.state?.terminated?.exitCode, 0);
    assert.equal(st.state?.terminated?.reason, 'Completed');
    assert.equal(st.restartCount, 0);
    assert.match(st.containerID ?? '', new RegExp(`^${o.runtimeName}://[0-9a-f]{64}$`));
    // The runtime got pid TARGET with the id of the target container `main`.
    const mainId = (r.pods.get(uid)?.status?.containerStatuses ?? []).find((c) => c.name === 'main')?.containerID?.replace(/^[^:]+:\/\//, '');
    const cri = new CriClient({ endpoint: f.endpoint, timeoutMs: 30_000 });
    try {
      const info = (await cri.containerStatus(st.containerID!.replace(/^[^:]+:\/\//, ''), { verbose: true })).info['info'] ?? '{}';
      // The sim answers with the CRI config as given (camelCase, enum names); containerd with its
      // Go JSON (snake_case, enum numbers: TARGET = 3).
      type Obj = Record<string, unknown>;
      const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null ? (v as Obj) : {});
      const linux = obj(obj(obj(JSON.parse(info))['config'])['linux']);
      const sc = obj(linux['securityContext'] ?? linux['security_context']);
      const ns = obj(sc['namespaceOptions'] ?? sc['namespace_options']);
      assert.ok(ns['pid'] === 'TARGET' || ns['pid'] === 3, `pid namespace mode ${JSON.stringify(ns)}`);
      assert.equal(ns['targetId'] ?? ns['target_id'], mainId);
    } finally {
      cri.close();
    }
    const logs = await kubectlRecorded(cp, transcript, ['logs', '-n', NS, 'target', '-c', 'dbg']);
    assert.equal(logs.code, 0, logs.stderr);
    assert.equal(logs.stdout, 'hi from debug\n');
    const desc = await kubectlRecorded(cp, transcript, ['get', 'pod', '-n', NS, 'target', '-o', 'jsonpath={.status.ephemeralContainerStatuses[0].state.terminated.reason} {.status.phase} {.status.containerStatuses[0].ready}']);
    assert.equal(desc.stdout, 'Completed Running true', 'the pod and its app container are untouched');
  });

  if (o.processCheck) {
    await t.test('the target\'s processes are visible from the ephemeral container (ps)', async () => {
      await addEphemeral({ name: 'ps', image: TEST_IMAGE, imagePullPolicy: o.imagePullPolicy, targetContainerName: 'main', command: ['ps'], terminationMessagePolicy: 'File' });
      await r.waitFor(() => (ephemeralStatus(r.pods.get(uid), 'ps')?.state?.terminated ? true : undefined), 'ps terminated', 60_000);
      const logs = await kubectlRecorded(cp, transcript, ['logs', '-n', NS, 'target', '-c', 'ps']);
      assert.match(logs.stdout, /sleep 100000/, 'main\'s sleep is in the PID namespace the ephemeral container joined');
    });
  }

  await t.test('stdin through kubectl attach -i (what kubectl debug -i does)', async () => {
    await addEphemeral({ name: 'shell', image: TEST_IMAGE, imagePullPolicy: o.imagePullPolicy, targetContainerName: 'main', command: ['sh'], stdin: true, stdinOnce: true, terminationMessagePolicy: 'File' });
    await r.waitFor(() => (ephemeralStatus(r.pods.get(uid), 'shell')?.state?.running ? true : undefined), 'shell running', 60_000);
    const k = new KubectlProcess(cp, ['attach', '-i', '-n', NS, 'target', '-c', 'shell'], { stdin: true });
    try {
      // kubectl says "If you don't see a command prompt, try pressing enter." once attached.
      await k.waitFor(/If you don't see a command prompt/, 'kubectl attached', 60_000, 'stderr');
      k.write('echo typed into the debug shell\n');
      await k.waitFor(/typed into the debug shell\n/, 'the typed command ran');
      k.write('exit 0\n');
      await pollUntil(() => (k.exitCode !== undefined ? true : undefined), { what: 'kubectl debug -i exits after `exit`', timeoutMs: 60_000, intervalMs: 50 });
    } finally {
      await k.kill();
    }
    transcript.push(`$ kubectl attach -i -n ${NS} target -c shell`, '> echo typed into the debug shell', k.stdout.trimEnd(), `[stderr] ${k.stderr.trim()}`, `[exit ${String(k.exitCode)}]`, '');
    assert.equal(k.exitCode, 0, k.stderr);
    const st = await r.waitFor(() => { const s = ephemeralStatus(r.pods.get(uid), 'shell'); return s?.state?.terminated ? s : undefined; }, 'shell terminated', 60_000);
    assert.equal(st.state?.terminated?.exitCode, 0);
    const logs = await kubectlRecorded(cp, transcript, ['logs', '-n', NS, 'target', '-c', 'shell']);
    assert.match(logs.stdout, /typed into the debug shell/);
  });

  await t.test('with a tty through kubectl attach -it under a pseudo-terminal (what kubectl debug -it does)', async () => {
    await addEphemeral({ name: 'tty', image: TEST_IMAGE, imagePullPolicy: o.imagePullPolicy, targetContainerName: 'main', command: ['sh'], stdin: true, stdinOnce: true, tty: true, terminationMessagePolicy: 'File' });
    await r.waitFor(() => (ephemeralStatus(r.pods.get(uid), 'tty')?.state?.running ? true : undefined), 'tty running', 60_000);
    const cmd = `${cp.tools.kubectl} --kubeconfig=${cp.adminKubeconfig} attach -it -n ${NS} target -c tty`;
    const child = spawn('script', ['-qec', cmd, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    let code: number | null | undefined;
    const exited = new Promise<void>((resolve) => child.once('exit', (c) => { code = c; resolve(); }));
    try {
      await pollUntil(() => (/If you don't see a command prompt/.test(out) ? true : undefined), { what: `kubectl attach -it attached (${out})`, timeoutMs: 60_000, intervalMs: 50 });
      child.stdin.write('echo typed-on-a-tty\r');
      await pollUntil(() => (/typed-on-a-tty\r\n(?:[^\n]*\r\n)?typed-on-a-tty\r\n/.test(out) ? true : undefined), { what: `the echo and the output (${JSON.stringify(out)})`, timeoutMs: 60_000, intervalMs: 50 });
      child.stdin.write('exit\r');
      await pollUntil(() => (code !== undefined ? true : undefined), { what: 'kubectl attach -it exits after `exit`', timeoutMs: 60_000, intervalMs: 50 });
    } finally {
      if (code === undefined) child.kill('SIGKILL');
      await exited;
    }
    transcript.push(`$ script -qec 'kubectl attach -it -n ${NS} target -c tty' /dev/null`, '> echo typed-on-a-tty⏎ exit⏎', JSON.stringify(out), `[exit ${String(code)}]`, '');
    assert.equal(code, 0, out);
    const st = await r.waitFor(() => { const x = ephemeralStatus(r.pods.get(uid), 'tty'); return x?.state?.terminated ? x : undefined; }, 'tty terminated', 60_000);
    assert.equal(st.state?.terminated?.exitCode, 0);
  });

  await t.test('the pod deleted: its ephemeral containers go with it', async () => {
    await addEphemeral({ name: 'sleeper', image: TEST_IMAGE, imagePullPolicy: o.imagePullPolicy, command: ['sleep', '100000'], terminationMessagePolicy: 'File' });
    await r.waitFor(() => (ephemeralStatus(r.pods.get(uid), 'sleeper')?.state?.running ? true : undefined), 'sleeper running', 60_000);
    await core.deleteNamespacedPod({ name: 'target', namespace: NS });
    await r.waitFor(() => (r.pods.has(uid) ? undefined : true), 'pod gone from the API', 60_000);
    const cri = new CriClient({ endpoint: f.endpoint, timeoutMs: 30_000 });
    try {
      await pollUntil(async () => ((await cri.listContainers()).some((c) => c.labels['io.kubernetes.pod.uid'] === uid && c.state === 'CONTAINER_RUNNING') ? undefined : true), { what: 'no running container of the pod left in the runtime', timeoutMs: 30_000, intervalMs: 100 });
    } finally {
      cri.close();
    }
  });
}
