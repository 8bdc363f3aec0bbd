/**
 * The simulated runtime's CRI Attach with stdin (what `kubectl debug -i` / `kubectl attach -i`
 * need) and its PID namespace TARGET (an ephemeral container's --target), over the real CRI
 * socket and SPDY streaming server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CriError } from '../../../src/shared/cri/cri-errors.js';
import { openRemoteCommand, spdyUpgrade, type SpdyTestClient } from '../../harness/spdy-test-client.js';
import { containerConfig, runPod, sandboxConfig, startHarness, type Harness } from './sim-harness.js';

const V4 = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];
const WAIT = 10_000;

async function attachStdin(h: Harness, containerId: string, tty = false): Promise<{ c: SpdyTestClient; s: ReturnType<typeof openRemoteCommand> }> {
  const url = await h.client.attach({ containerId, tty, stdin: true, stdout: true, stderr: !tty });
  const up = await spdyUpgrade(url, { protocols: V4 });
  assert.equal(up.status, 101, up.body);
  const c = up.client!;
  const s = openRemoteCommand(c, { stdin: true, stdout: true, stderr: !tty, ...(tty ? { tty: true } : {}) });
  await c.until(() => s['stdin']!.replied && s['stdout']!.replied && s['error']!.replied, WAIT, 'replies');
  return { c, s };
}

async function stateOf(h: Harness, id: string): Promise<{ state: string; exitCode: number }> {
  const st = (await h.client.containerStatus(id)).status!;
  return { state: st.state, exitCode: st.exitCode };
}

test('a `sh` container with stdin waits for it; attached lines run in order, `exit 3` ends it with 3', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sh'], { stdin: true, stdinOnce: true });
    assert.equal((await stateOf(h, containerId)).state, 'CONTAINER_RUNNING', 'an open stdin keeps sh waiting');
    const { c, s } = await attachStdin(h, containerId);
    c.send(s['stdin']!, 'echo one\necho two >&2\n');
    await c.until(() => s['stdout']!.data.toString() === 'one\n' && s['stderr']!.data.toString() === 'two\n', WAIT, 'both lines ran');
    c.send(s['stdin']!, 'ex');
    c.send(s['stdin']!, 'it 3\n');
    await c.until(() => s['error']!.ended, WAIT, 'the attach ends at the exit');
    assert.deepEqual(await stateOf(h, containerId), { state: 'CONTAINER_EXITED', exitCode: 3 });
    c.close();
  } finally {
    await h.close();
  }
});

test('`cat` with stdinOnce: stdin is echoed, its end ends the container (0)', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['cat'], { stdin: true, stdinOnce: true });
    const { c, s } = await attachStdin(h, containerId);
    c.send(s['stdin']!, 'hello\n', true);
    await c.until(() => s['error']!.ended, WAIT, 'the end');
    assert.equal(s['stdout']!.data.toString(), 'hello\n');
    assert.deepEqual(await stateOf(h, containerId), { state: 'CONTAINER_EXITED', exitCode: 0 });
    c.close();
  } finally {
    await h.close();
  }
});

test('with a tty (kubectl debug -it): typed bytes are echoed, CR ends a line, ^D on an empty line ends sh', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sh'], { stdin: true, stdinOnce: true, tty: true });
    const { c, s } = await attachStdin(h, containerId, true);
    c.send(s['stdin']!, 'echo hi\r');
    await c.until(() => s['stdout']!.data.toString() === 'echo hi\r\nhi\r\n', WAIT, 'the echo and the output, CRLF');
    c.send(s['stdin']!, '\x04');
    await c.until(() => s['error']!.ended, WAIT, 'the end at ^D');
    assert.deepEqual(await stateOf(h, containerId), { state: 'CONTAINER_EXITED', exitCode: 0 });
    c.close();
  } finally {
    await h.close();
  }
});

test('without stdinOnce the stdin stays open after a client goes: the container keeps running', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sh'], { stdin: true });
    const { c, s } = await attachStdin(h, containerId);
    c.send(s['stdin']!, 'echo hi\n', true);
    await c.until(() => s['stdout']!.data.toString() === 'hi\n', WAIT, 'the line ran');
    c.close();
    assert.equal((await stateOf(h, containerId)).state, 'CONTAINER_RUNNING');
  } finally {
    await h.close();
  }
});

test('pid TARGET: accepted for a running container of the same sandbox; refused as containerd does otherwise', async () => {
  const h = await startHarness();
  try {
    const { sandboxId, containerId: target, sandbox } = await runPod(h, ['sleep', '1000']);
    const target1 = (id: string): Parameters<typeof containerConfig>[2] => ({ linux: { securityContext: { namespaceOptions: { pid: 'TARGET', targetId: id } } } });
    const ok = await h.client.createContainer({ podSandboxId: sandboxId, config: containerConfig('debugger', ['sleep', '10'], target1(target)), sandboxConfig: sandbox });
    await h.client.startContainer(ok);
    const create = (name: string, id: string, sb = sandboxId, sbc = sandbox): Promise<string> => h.client.createContainer({ podSandboxId: sb, config: containerConfig(name, ['true'], target1(id)), sandboxConfig: sbc });
    await assert.rejects(create('d2', 'nope'), (e: unknown) => e instanceof CriError && /invalid target container: container "nope" does not exist: not found/.test(e.message));
    const other = sandboxConfig();
    const otherId = await h.client.runPodSandbox({ config: other });
    await assert.rejects(create('d3', target, otherId, other), (e: unknown) => e instanceof CriError && new RegExp(`container "${target}" \\(sandbox ${sandboxId}\\) does not belong to sandbox ${otherId}`).test(e.message));
    await h.client.stopContainer(target, 0);
    await assert.rejects(create('d4', target), (e: unknown) => e instanceof CriError && /is not running - in state CONTAINER_EXITED/.test(e.message));
  } finally {
    await h.close();
  }
});
