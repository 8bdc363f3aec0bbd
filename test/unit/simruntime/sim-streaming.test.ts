/**
 * The simulated runtime's CRI streaming server end to end over SPDY/3.1 (the transport
 * kube-apiserver uses towards kubelets): CRI Exec/Attach/PortForward answer URLs; a SPDY client
 * (test/harness/spdy-test-client.ts) upgrades and speaks the kubelet's channel protocols.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { WebSocket } from 'ws';
import { CriError } from '../../../src/shared/cri/cri-errors.js';

const isCriError = (e: unknown): e is CriError => e instanceof CriError;
import { encodeSynStream } from '../../../src/simruntime/spdy/spdy-frames.js';
import { TarReader, writeTar } from '../../../src/simruntime/sim-tar.js';
import { openRemoteCommand, spdyUpgrade, type SpdyTestClient } from '../../harness/spdy-test-client.js';
import { runPod, startHarness, type Harness } from './sim-harness.js';
import { pollUntil } from '../../harness/poll.js';

const V4 = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];
const WAIT = 10_000;

async function execSession(h: Harness, containerId: string, cmd: string[], f: { stdin?: boolean; stdout?: boolean; stderr?: boolean; tty?: boolean }): Promise<{ c: SpdyTestClient; s: ReturnType<typeof openRemoteCommand>; protocol: string | string[] | undefined }> {
  const url = await h.client.exec({ containerId, cmd, tty: f.tty ?? false, stdin: f.stdin ?? false, stdout: f.stdout ?? false, stderr: f.stderr ?? false });
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/exec\/[A-Za-z0-9_-]+$/);
  const up = await spdyUpgrade(url, { protocols: V4 });
  assert.equal(up.status, 101, up.body);
  const c = up.client!;
  return { c, s: openRemoteCommand(c, f), protocol: up.headers['x-stream-protocol-version'] };
}

test('exec: stdout, stderr and a non-zero exit as the v4 status on the error stream', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sleep', '1000']);
    const { c, s, protocol } = await execSession(h, containerId, ['sh', '-c', 'echo hi; echo oops >&2; exit 3'], { stdout: true, stderr: true });
    assert.equal(protocol, 'v4.channel.k8s.io');
    await c.until(() => s['error']!.ended && c.goaway, WAIT, 'the error stream to end and GOAWAY');
    assert.equal(s['stdout']!.data.toString(), 'hi\n');
    assert.equal(s['stderr']!.data.toString(), 'oops\n');
    assert.ok(s['stdout']!.ended && s['stderr']!.ended);
    assert.deepEqual(JSON.parse(s['error']!.data.toString()), {
      metadata: {},
      status: 'Failure',
      message: 'command terminated with non-zero exit code: error executing command [sh -c echo hi; echo oops >&2; exit 3], exit code 3',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
    c.close();
  } finally {
    await h.close();
  }
});

test('exec -i cat: stdin reaches stdout; its FIN ends the command with Success', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sleep', '1000']);
    const { c, s } = await execSession(h, containerId, ['cat'], { stdin: true, stdout: true, stderr: true });
    await c.until(() => s['stdin']!.replied && s['stdout']!.replied, WAIT, 'replies');
    c.send(s['stdin']!, 'hello ');
    await c.until(() => s['stdout']!.data.toString() === 'hello ', WAIT, 'the echo of the first chunk');
    c.send(s['stdin']!, 'world\n', true);
    await c.until(() => s['error']!.ended, WAIT, 'the end');
    assert.equal(s['stdout']!.data.toString(), 'hello world\n');
    assert.deepEqual(JSON.parse(s['error']!.data.toString()), { metadata: {}, status: 'Success' });
    c.close();
  } finally {
    await h.close();
  }
});

test('exec -t: CRLF output; garbage on the resize stream resets that stream and the exec goes on', async () => {
  const h = await startHarness({ reportError: () => {} });
  try {
    const { containerId } = await runPod(h, ['sleep', '1000']);
    const { c, s } = await execSession(h, containerId, ['cat'], { stdin: true, stdout: true, tty: true });
    await c.until(() => s['resize']!.replied && s['stdin']!.replied, WAIT, 'replies');
    c.send(s['resize']!, '{"Width":120,"Height":40}{"Width":"x"}}}garbage');
    await c.until(() => s['resize']!.reset !== undefined, WAIT, 'the resize stream reset');
    c.send(s['stdin']!, 'one\ntwo\n', true);
    await c.until(() => s['error']!.ended, WAIT, 'the end');
    assert.equal(s['stdout']!.data.toString(), 'one\r\ntwo\r\n');
    assert.deepEqual(JSON.parse(s['error']!.data.toString()), { metadata: {}, status: 'Success' });
    c.close();
  } finally {
    await h.close();
  }
});

test('exec of a missing executable: InternalError status with containerd\'s message', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sleep', '1000']);
    const { c, s } = await execSession(h, containerId, ['/nonexistent'], { stdout: true });
    await c.until(() => s['error']!.ended, WAIT, 'the end');
    const st = JSON.parse(s['error']!.data.toString()) as { reason: string; code: number; message: string };
    assert.equal(st.reason, 'InternalError');
    assert.equal(st.code, 500);
    assert.match(st.message, /^Internal error occurred: error executing command in container: failed to exec in container: .*exec: "\/nonexistent": executable file not found in \$PATH: unknown$/);
    c.close();
  } finally {
    await h.close();
  }
});

test('tokens are single use; a bad URL is 404; no or unknown protocols are 400 / 403; CRI validation errors', async () => {
  const h = await startHarness();
  try {
    const { containerId, sandboxId } = await runPod(h, ['sleep', '1000']);
    const url = await h.client.exec({ containerId, cmd: ['true'], tty: false, stdin: false, stdout: true, stderr: false });
    const none = await spdyUpgrade(url, { protocols: [] });
    assert.equal(none.status, 400);
    assert.match(none.body, /X-Stream-Protocol-Version is required/);
    const again = await spdyUpgrade(url, { protocols: V4 });
    assert.equal(again.status, 404, 'the token was consumed by the first attempt');
    const url2 = await h.client.exec({ containerId, cmd: ['true'], tty: false, stdin: false, stdout: true, stderr: false });
    const bad = await spdyUpgrade(url2, { protocols: ['v9.channel.k8s.io'] });
    assert.equal(bad.status, 403);
    assert.match(bad.body, /unable to negotiate protocol/);
    assert.equal((await spdyUpgrade(url2.replace(/exec\/.*/, 'exec/nope'), { protocols: V4 })).status, 404);
    await assert.rejects(h.client.exec({ containerId, cmd: ['true'], tty: true, stdin: false, stdout: true, stderr: true }), (e: unknown) => isCriError(e) && e.code === 'ERR_CRI_INVALID_ARGUMENT' && /tty and stderr cannot both be true/.test(e.message));
    await assert.rejects(h.client.exec({ containerId, cmd: ['true'], tty: false, stdin: false, stdout: false, stderr: false }), (e: unknown) => isCriError(e) && e.code === 'ERR_CRI_INVALID_ARGUMENT');
    await assert.rejects(h.client.exec({ containerId: 'nope', cmd: ['true'], tty: false, stdin: false, stdout: true, stderr: false }), (e: unknown) => isCriError(e) && e.code === 'ERR_CRI_NOT_FOUND');
    await assert.rejects(h.client.portForward({ podSandboxId: 'nope', port: [80] }), (e: unknown) => isCriError(e) && e.code === 'ERR_CRI_NOT_FOUND');
    assert.match(await h.client.portForward({ podSandboxId: sandboxId, port: [] }), /\/portforward\//);
  } finally {
    await h.close();
  }
});

test('port-forward: bytes travel both ways to a listener `nc -l -p 8080` opened in the sandbox; ports 0 and 70000 are refused', async () => {
  const h = await startHarness();
  try {
    const { containerId, sandboxId } = await runPod(h, ['sleep', '1000']);
    const nc = await execSession(h, containerId, ['nc', '-l', '-p', '8080'], { stdin: true, stdout: true, stderr: true });
    await pollUntil(() => (h.rt.ports.lookup(sandboxId, 8080) !== undefined ? true : undefined), { what: 'nc registers port 8080', timeoutMs: WAIT, intervalMs: 10 });
    const url = await h.client.portForward({ podSandboxId: sandboxId, port: [8080] });
    const up = await spdyUpgrade(url, { protocols: ['portforward.k8s.io'] });
    assert.equal(up.status, 101, up.body);
    assert.equal(up.headers['x-stream-protocol-version'], 'portforward.k8s.io');
    const pf = up.client!;
    const zero = pf.open([['streamType', 'error'], ['port', '0'], ['requestID', '9']]);
    const big = pf.open([['streamType', 'data'], ['port', '70000'], ['requestID', '9']]);
    const err = pf.open([['streamType', 'error'], ['port', '8080'], ['requestID', '0']]);
    const data = pf.open([['streamType', 'data'], ['port', '8080'], ['requestID', '0']]);
    await pf.until(() => zero.reset !== undefined && big.reset !== undefined, WAIT, 'the bad ports reset');
    await pf.until(() => data.replied && err.replied, WAIT, 'the pair replied');
    pf.send(data, 'ping\n');
    await nc.c.until(() => nc.s['stdout']!.data.toString() === 'ping\n', WAIT, 'ping at the listener');
    nc.c.send(nc.s['stdin']!, 'pong\n');
    await pf.until(() => data.data.toString() === 'pong\n', WAIT, 'pong back through the forward');
    pf.send(data, '', true); // client closes its side: nc's connection ends, nc exits 0
    await nc.c.until(() => nc.s['error']!.ended, WAIT, 'nc to exit');
    assert.deepEqual(JSON.parse(nc.s['error']!.data.toString()), { metadata: {}, status: 'Success' });
    await pf.until(() => data.ended, WAIT, 'the data stream to end');
    assert.equal(err.data.length, 0, 'no error on a good forward');
    // Nothing listens any more: the error stream says so.
    const err2 = pf.open([['streamType', 'error'], ['port', '8080'], ['requestID', '1']]);
    pf.open([['streamType', 'data'], ['port', '8080'], ['requestID', '1']]);
    await pf.until(() => err2.ended, WAIT, 'the refusal');
    assert.match(err2.data.toString(), /^error forwarding port 8080 to pod [0-9a-f]+, uid : .*connection refused$/);
    pf.close();
    nc.c.close();
  } finally {
    await h.close();
  }
});

test('attach: the container\'s output after attaching arrives; its exit ends the session with Success', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sh', '-c', 'echo before; sleep 10; echo after; sleep 10; exit 4']);
    h.clock.step(1); // "before" is written before anyone attaches
    const url = await h.client.attach({ containerId, tty: false, stdin: false, stdout: true, stderr: true });
    const up = await spdyUpgrade(url, { protocols: V4 });
    const c = up.client!;
    const s = openRemoteCommand(c, { stdout: true, stderr: true });
    await c.until(() => s['stdout']!.replied && s['stderr']!.replied && s['error']!.replied, WAIT, 'replies');
    // Streams are all there, so the tap is on: step the clock past "after" and the exit.
    h.clock.step(9_999);
    await c.until(() => s['stdout']!.data.toString() === 'after\n', WAIT, 'output after attaching');
    h.clock.step(10_000);
    await c.until(() => s['error']!.ended, WAIT, 'the end at the container\'s exit');
    assert.deepEqual(JSON.parse(s['error']!.data.toString()), { metadata: {}, status: 'Success' });
    c.close();
  } finally {
    await h.close();
  }
});

test('a malformed frame ends the session with GOAWAY; too many streams are refused', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sleep', '1000']);
    const { c } = await execSession(h, containerId, ['cat'], { stdin: true, stdout: true });
    // A SYN_STREAM whose header block is not zlib: the session ends.
    c.raw(encodeSynStream(101, Buffer.from('not zlib at all')));
    await c.until(() => c.goaway && c.closed, WAIT, 'GOAWAY and close');
  } finally {
    await h.close();
  }
});

test('an idle session that never reads does not hold the server after close; sockets are freed', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sleep', '1000']);
    const { c } = await execSession(h, containerId, ['sleep', '100'], { stdout: true });
    await c.until(() => h.rt.streamingSessions === 1, WAIT, 'one session');
    c.close();
    await pollUntil(() => (h.rt.streamingSessions === 0 ? true : undefined), { what: 'the session is released after the client went away', timeoutMs: WAIT, intervalMs: 10 });
    void net;
  } finally {
    await h.close();
  }
});

/** Opens a WebSocket to a streaming URL with `protocols`; collects messages. */
async function wsOpen(url: string, protocols: string[]): Promise<{ ws: WebSocket; messages: Buffer[]; closed: Promise<number>; protocol: string }> {
  const ws = new WebSocket(url.replace(/^http/, 'ws'), protocols);
  const messages: Buffer[] = [];
  ws.on('message', (d) => messages.push(Buffer.from(d)));
  const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    ws.on('open', () => resolve());
    ws.on('error', reject);
  });
  return { ws, messages, closed, protocol: ws.protocol };
}

/** Resolves once `done()` holds, checked on each message the socket receives; rejects after `ms`. */
function untilMessages(a: { ws: WebSocket }, done: () => boolean, ms: number, what: () => string): Promise<void> {
  if (done()) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      a.ws.off('message', check);
      reject(new Error(`timed out after ${ms} ms waiting for ${what()}`));
    }, ms);
    function check(): void {
      if (!done()) return;
      clearTimeout(timer);
      a.ws.off('message', check);
      resolve();
    }
    a.ws.on('message', check);
  });
}

function channel(messages: Buffer[], ch: number): string {
  return Buffer.concat(messages.filter((m) => m[0] === ch).map((m) => m.subarray(1))).toString();
}

test('WebSocket v5.channel.k8s.io (kubectl ≥ 1.30): exec prints on channel 1 and reports exit 3 on channel 3; stdin closes with [255, 0]', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sleep', '1000']);
    const url = await h.client.exec({ containerId, cmd: ['sh', '-c', 'echo hi; exit 3'], tty: false, stdin: false, stdout: true, stderr: true });
    const a = await wsOpen(url, ['v5.channel.k8s.io']);
    assert.equal(a.protocol, 'v5.channel.k8s.io');
    assert.equal(await a.closed, 1000);
    assert.equal(channel(a.messages, 1), 'hi\n');
    const st = JSON.parse(channel(a.messages, 3)) as { reason: string; details: { causes: unknown[] } };
    assert.equal(st.reason, 'NonZeroExitCode');
    assert.deepEqual(st.details.causes, [{ reason: 'ExitCode', message: '3' }]);

    const url2 = await h.client.exec({ containerId, cmd: ['cat'], tty: false, stdin: true, stdout: true, stderr: false });
    const b = await wsOpen(url2, ['v5.channel.k8s.io', 'v4.channel.k8s.io']);
    b.ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('typed\n')]));
    b.ws.send(Buffer.from([255, 0]));
    assert.equal(await b.closed, 1000);
    assert.equal(channel(b.messages, 1), 'typed\n');
    assert.deepEqual(JSON.parse(channel(b.messages, 3)), { metadata: {}, status: 'Success' });

    const url3 = await h.client.exec({ containerId, cmd: ['echo', 'b64'], tty: false, stdin: false, stdout: true, stderr: false });
    const c = await wsOpen(url3, ['base64.channel.k8s.io']);
    assert.equal(c.protocol, 'base64.channel.k8s.io');
    await c.closed;
    const out = c.messages.filter((m) => m[0] === 0x31).map((m) => Buffer.from(m.subarray(1).toString(), 'base64').toString()).join('');
    assert.equal(out, 'b64\n');
  } finally {
    await h.close();
  }
});

test('WebSocket: an unsupported sub-protocol (kubectl\'s SPDY-over-WebSocket port-forward tunnel) is refused with 400, so clients fall back to SPDY', async () => {
  const h = await startHarness();
  try {
    const { sandboxId } = await runPod(h, ['sleep', '1000']);
    const url = await h.client.portForward({ podSandboxId: sandboxId, port: [8080] });
    const r = await spdyUpgrade(url + '?port=8080', { protocols: [], method: 'GET', headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Protocol': 'SPDY/3.1+portforward.k8s.io' } });
    const status = r.status;
    assert.match(r.body, /no supported sub-protocol/);
    assert.equal(status, 400);
  } finally {
    await h.close();
  }
});

test('kubectl cp\'s commands: `test -d`, `tar -xmf - -C /tmp` from stdin, then `tar cf - /tmp/f.txt` and `cat` give the file back', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sleep', '1000']);
    const run = async (cmd: string[], stdin?: Buffer): Promise<{ out: Buffer; err: string; status: { status: string; details?: { causes: Array<{ message: string }> } } }> => {
      const { c, s } = await execSession(h, containerId, cmd, { stdin: stdin !== undefined, stdout: true, stderr: true });
      if (stdin !== undefined) {
        await c.until(() => s['stdin']!.replied, WAIT, 'stdin reply');
        c.send(s['stdin']!, stdin, true);
      }
      await c.until(() => s['error']!.ended, WAIT, `${cmd.join(' ')} to end`);
      c.close();
      return { out: s['stdout']!.data, err: s['stderr']!.data.toString(), status: JSON.parse(s['error']!.data.toString()) };
    };
    assert.equal((await run(['test', '-d', '/tmp'])).status.status, 'Success');
    assert.equal((await run(['test', '-d', '/tmp/f.txt'])).status.details?.causes[0]?.message, '1');
    const payload = Buffer.from('copied into the pod\n'.repeat(1000));
    const x = await run(['tar', '-xmf', '-', '-C', '/tmp'], writeTar([{ type: 'file', name: 'f.txt', mode: 0o644, mtimeSec: 1_700_000_000, data: payload }]));
    assert.equal(x.status.status, 'Success', x.err);
    assert.deepEqual((await run(['cat', '/tmp/f.txt'])).out, payload);
    const c = await run(['tar', 'cf', '-', '/tmp/f.txt']);
    assert.equal(c.status.status, 'Success', c.err);
    const entries = new TarReader({ maxEntryBytes: 1 << 20 }).push(c.out);
    assert.deepEqual(entries.map((e) => e.name), ['tmp/f.txt']);
    assert.deepEqual(entries[0]!.type === 'file' ? entries[0]!.data : undefined, payload);
    const missing = await run(['tar', 'cf', '-', '/nope']);
    assert.match(missing.err, /tar: \/nope: No such file or directory/);
    const bad = await run(['tar', '-xmf', '-', '-C', '/tmp'], Buffer.alloc(1024, 0x41));
    assert.match(bad.err, /^tar: invalid checksum field "AAAAAAAA"\n$/);
  } finally {
    await h.close();
  }
});

test('a process that never reads stdin: past 4 MiB unread the stdin stream is reset (FLOW_CONTROL_ERROR), the exec goes on; 1,000 more streams opened on the session are each refused with a reset and nothing is kept', async () => {
  const h = await startHarness();
  try {
    const { containerId } = await runPod(h, ['sleep', '1000']);
    const { c, s } = await execSession(h, containerId, ['sleep', '1000'], { stdin: true, stdout: true });
    await c.until(() => s['stdin']!.replied, WAIT, 'stdin reply');
    const chunk = Buffer.alloc(64 * 1024, 1);
    for (let i = 0; i < 80 && s['stdin']!.reset === undefined; i++) c.send(s['stdin']!, chunk);
    await c.until(() => s['stdin']!.reset !== undefined, WAIT, 'stdin reset');
    assert.equal(s['stdin']!.reset, 7);
    assert.equal(s['error']!.ended, false, 'the exec itself goes on');
    const extra = Array.from({ length: 1000 }, (_, i) => c.open([['streamType', `junk-${i}`]]));
    await c.until(() => extra.every((x) => x.reset !== undefined), WAIT, 'every junk stream answered with a reset');
    c.close();
  } finally {
    await h.close();
  }
});

test('WebSocket port-forward (v4.channel.k8s.io): the port on both channels first, then bytes both ways to nc; port 0 closes with 1008', async () => {
  const h = await startHarness();
  try {
    const { containerId, sandboxId } = await runPod(h, ['sleep', '1000']);
    const nc = await execSession(h, containerId, ['nc', '-lv', '-p', '9090'], { stdin: true, stdout: true, stderr: true });
    await nc.c.until(() => nc.s['stderr']!.data.toString().includes('listening on [::]:9090'), WAIT, 'nc listening');
    const url = await h.client.portForward({ podSandboxId: sandboxId, port: [9090] });
    const a = await wsOpen(`${url}?port=9090`, ['v4.channel.k8s.io']);
    await untilMessages(a, () => a.messages.length >= 2, WAIT, () => 'the two port messages');
    assert.deepEqual(a.messages.slice(0, 2).map((m) => [...m]), [[0, 0x82, 0x23], [1, 0x82, 0x23]]);
    a.ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('over websocket\n')]));
    await nc.c.until(() => nc.s['stdout']!.data.toString() === 'over websocket\n', WAIT, 'bytes at nc');
    nc.c.send(nc.s['stdin']!, 'answer\n');
    await untilMessages(a, () => channel(a.messages.slice(2), 0) === 'answer\n', WAIT, () => `bytes back (got ${JSON.stringify(channel(a.messages.slice(2), 0))})`);
    a.ws.close();
    nc.c.close();
    const url0 = await h.client.portForward({ podSandboxId: sandboxId, port: [] });
    const z = await wsOpen(`${url0}?port=0`, ['v4.channel.k8s.io']);
    assert.equal(await z.closed, 1008);
  } finally {
    await h.close();
  }
});
