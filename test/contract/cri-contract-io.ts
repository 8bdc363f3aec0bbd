/**
 * Contract section: images, ExecSync, container log files, environment and pod networking.
 *
 * - ImageStatus of an absent image answers `image: null` (not an error); a present image has its
 *   tag in repoTags, a `sha256:` id and a size; short references are normalised
 *   (`local/busybox:1` → `docker.io/local/busybox:1`). CreateContainer with an absent image is
 *   NotFound. (PullImage is not in the contract: containerd here has no registry to reach.)
 * - ExecSync runs argv without a shell; output and exit code come back in the response, not as
 *   errors; exec in an exited container fails (UNKNOWN); a timeout is DEADLINE_EXCEEDED.
 * - Logs: `logDirectory/logPath`, CRI format `<RFC3339Nano> <stream> <F|P> <text>` (Go's
 *   RFC3339Nano: trailing zeros of the fraction trimmed, e.g. `…:43.8212458Z`); lines over
 *   16 KiB are split into P chunks of exactly 16384 bytes ending with an F chunk.
 * - Pod network: a POD-network sandbox gets an IPv4 (distinct per sandbox) that is gone once
 *   stopped; host-network sandboxes report ''.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { it } from 'node:test';
import type { ContractContextRef } from './cri-contract.js';
import { BUSYBOX_IMAGE, CRI_LOG_LINE, containerConfig, nowNs, rejectionOf, runPod, startContainer, uniqueName, waitContainerState } from './cri-contract-fixtures.js';

interface LogLine {
  readonly time: string;
  readonly stream: string;
  readonly tag: string;
  readonly text: string;
}

function readCriLog(file: string): LogLine[] {
  const text = fs.readFileSync(file, 'utf8');
  assert.ok(text.endsWith('\n'), 'every log record ends with a newline');
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => {
      const m = CRI_LOG_LINE.exec(line);
      assert.ok(m, `not a CRI log line: ${JSON.stringify(line.slice(0, 120))}`);
      return { time: m[1] ?? '', stream: m[2] ?? '', tag: m[3] ?? '', text: m[4] ?? '' };
    });
}

export function defineIoContract(ref: ContractContextRef): void {
  it('images: ImageStatus absent → null; present → tag, sha256 id, size; short names normalised; ListImages lists it', async () => {
    const { rt } = ref();
    const absent = await rt.imageStatus({ image: 'docker.io/local/absent-image:1' });
    assert.equal(absent.image, null);
    const present = (await rt.imageStatus({ image: BUSYBOX_IMAGE })).image;
    assert.ok(present);
    assert.ok(present.repoTags.includes(BUSYBOX_IMAGE), `repoTags ${JSON.stringify(present.repoTags)}`);
    assert.match(present.id, /^sha256:[0-9a-f]{64}$/);
    assert.ok(Number(present.size) > 0);
    const short = (await rt.imageStatus({ image: 'local/busybox:1' })).image;
    assert.equal(short?.id, present.id);
    const listed = await rt.listImages();
    assert.ok(listed.some((i) => i.id === present.id && i.repoTags.includes(BUSYBOX_IMAGE)));
  });

  it('CreateContainer with an absent image is NotFound', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('noimg'), { logDirectory: logDir });
    const config = { ...containerConfig('c', ['true']), image: { image: 'docker.io/local/absent-image:1' } };
    assert.equal((await rejectionOf(rt.createContainer({ podSandboxId: pod.sandboxId, config, sandboxConfig: pod.config }))).code, 'ERR_CRI_NOT_FOUND');
  });

  it('ExecSync returns stdout, stderr and the exit code in the response', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('exec'), { logDirectory: logDir });
    const id = await startContainer(rt, pod, containerConfig('c', ['sleep', '1000']));
    const r = await rt.execSync({ containerId: id, cmd: ['/bin/sh', '-c', 'echo out; echo err >&2; exit 4'], timeout: 10 });
    assert.equal(r.stdout.toString(), 'out\n');
    assert.equal(r.stderr.toString(), 'err\n');
    assert.equal(r.exitCode, 4);
    const ok = await rt.execSync({ containerId: id, cmd: ['/bin/sh', '-c', 'echo -n ok'], timeout: 10 });
    assert.deepEqual([ok.stdout.toString(), ok.stderr.toString(), ok.exitCode], ['ok', '', 0]);
  });

  it('ExecSync in an exited container fails (UNKNOWN); a command outliving its timeout is DEADLINE_EXCEEDED', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('exec2'), { logDirectory: logDir });
    const done = await startContainer(rt, pod, containerConfig('done', ['true']));
    await waitContainerState(rt, done, 'CONTAINER_EXITED');
    assert.equal((await rejectionOf(rt.execSync({ containerId: done, cmd: ['/bin/true'], timeout: 5 }))).code, 'ERR_CRI_UNKNOWN');
    const live = await startContainer(rt, pod, containerConfig('live', ['sleep', '1000']));
    const began = performance.now();
    assert.equal((await rejectionOf(rt.execSync({ containerId: live, cmd: ['/bin/sleep', '10'], timeout: 1 }))).code, 'ERR_CRI_DEADLINE_EXCEEDED');
    const tookMs = performance.now() - began;
    assert.ok(tookMs >= 900 && tookMs < 8_000, `timeout 1 s ended the exec after ${tookMs.toFixed(0)} ms`);
  });

  it('logs: `echo hello` writes `<RFC3339Nano> stdout F hello` to logDirectory/logPath', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('logs'), { logDirectory: logDir });
    const t0 = nowNs();
    const id = await startContainer(rt, pod, containerConfig('echo', ['echo', 'hello']));
    const st = await waitContainerState(rt, id, 'CONTAINER_EXITED');
    assert.equal(st.exitCode, 0);
    const lines = readCriLog(st.logPath);
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.deepEqual(lines.map((l) => [l.stream, l.tag, l.text]), [['stdout', 'F', 'hello']]);
    const when = BigInt(Date.parse(lines[0]?.time ?? '')) * 1_000_000n;
    assert.ok(when >= t0 - 1_000_000_000n && when <= nowNs(), `log time ${lines[0]?.time} not within the test`);
    // Go's time.RFC3339Nano: up to 9 fraction digits with trailing zeros trimmed (none if 0 ns).
    assert.match(lines[0]?.time ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{0,8}[1-9])?(Z|[+-]\d\d:\d\d)$/, 'RFC3339Nano as Go formats it');
  });

  it('logs: stderr is tagged stderr; a line over 16 KiB splits into P chunks of 16384 bytes ending with F', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('logs2'), { logDirectory: logDir });
    const errId = await startContainer(rt, pod, containerConfig('err', ['sh', '-c', 'echo to-err >&2']));
    const errSt = await waitContainerState(rt, errId, 'CONTAINER_EXITED');
    assert.deepEqual(readCriLog(errSt.logPath).map((l) => [l.stream, l.tag, l.text]), [['stderr', 'F', 'to-err']]);
    const id = await startContainer(rt, pod, containerConfig('long', ['echo', 'a'.repeat(20000)]));
    const st = await waitContainerState(rt, id, 'CONTAINER_EXITED');
    assert.equal(st.exitCode, 0);
    const lines = readCriLog(st.logPath);
    const out = lines.filter((l) => l.stream === 'stdout');
    assert.deepEqual(out.map((l) => [l.tag, l.text.length]), [['P', 16384], ['F', 20000 - 16384]]);
    assert.equal(out.map((l) => l.text).join(''), 'a'.repeat(20000));
  });

  it('env: CreateContainer envs reach the process (KeyValue.value is a string in upstream CRI)', async () => {
    const { rt, logDir } = ref();
    const pod = await runPod(rt, uniqueName('env'), { logDirectory: logDir });
    const config = { ...containerConfig('env', ['sleep', '1000']), envs: [{ key: 'GREETING', value: 'hi there' }] };
    const id = await startContainer(rt, pod, config);
    const r = await rt.execSync({ containerId: id, cmd: ['/bin/sh', '-c', 'echo -n "$GREETING"'], timeout: 10 });
    assert.equal(r.stdout.toString(), 'hi there');
  });

  it('pod network: POD-network sandboxes get distinct IPv4 addresses, released on stop', async () => {
    const { rt, logDir } = ref();
    const a = await runPod(rt, uniqueName('neta'), { logDirectory: logDir, hostNetwork: false });
    const b = await runPod(rt, uniqueName('netb'), { logDirectory: logDir, hostNetwork: false });
    const ipA = (await rt.podSandboxStatus(a.sandboxId)).status?.network?.ip ?? '';
    const ipB = (await rt.podSandboxStatus(b.sandboxId)).status?.network?.ip ?? '';
    assert.ok(net.isIPv4(ipA), `pod IP ${JSON.stringify(ipA)}`);
    assert.ok(net.isIPv4(ipB), `pod IP ${JSON.stringify(ipB)}`);
    assert.notEqual(ipA, ipB);
    const id = await startContainer(rt, a, containerConfig('c', ['sleep', '1000']));
    assert.equal((await rt.containerStatus(id)).status?.state, 'CONTAINER_RUNNING');
    await rt.stopPodSandbox(a.sandboxId);
    assert.equal((await rt.podSandboxStatus(a.sandboxId)).status?.network?.ip, '');
  });
}
