/**
 * Issue 27 item 3: a CRI server that floods PING (or SETTINGS) frames and never reads used to
 * take the agent to gigabytes of RSS: every frame got its ACK written with no backpressure and
 * no bound, and after an error the socket was kept (and read). Now control-frame replies queued
 * behind a full socket are bounded (nghttp2's max outbound ACK, the model for node:http2's
 * flood protection): past the bound the connection sends GOAWAY ENHANCE_YOUR_CALM and is
 * destroyed; reading pauses while replies cannot be written.
 *
 * The hostile peer is a local raw socket server in this process: it sends SETTINGS, then PING
 * frames as fast as its own socket accepts them, and never reads. The flood cases run on the
 * 'h2' transport and on 'node-http2' (nghttp2's own bound), which must end the same way.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { CriClient } from '../../../src/shared/cri/cri-client.js';
import { CriError } from '../../../src/shared/cri/cri-errors.js';
import { FrameType, Setting, settingsFrame, windowUpdateFrame } from '../../../src/shared/cri/h2/h2-frames.js';
import { WRITE_STALL_TIMEOUT_MS } from '../../../src/shared/cri/h2/h2-connection.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { pollUntil, within } from '../../harness/poll.js';
import { rawFrame, tempSocket } from './h2-test-peers.js';

interface FloodPeer {
  /** Resolves when the client's connection is gone (the peer's writes fail or it sees the close). */
  gone: Promise<void>;
  /** Frames written so far. */
  sent(): number;
  close(): Promise<void>;
}

async function floodPeer(socket: string, frame: Buffer): Promise<FloodPeer> {
  const batch = Buffer.concat(Array.from({ length: Math.floor(65_536 / frame.length) }, () => frame));
  let sent = 0;
  let resolveGone: () => void = () => {};
  const gone = new Promise<void>((r) => (resolveGone = r));
  const conns = new Set<net.Socket>();
  const server = net.createServer((conn) => {
    conns.add(conn);
    conn.pause(); // never reads a byte the client writes
    conn.on('error', () => undefined);
    conn.once('close', () => resolveGone());
    conn.write(rawFrame(FrameType.SETTINGS, 0, 0));
    // Writes batches as fast as this socket takes them (the peer's own memory stays small).
    const pump = (): void => {
      while (!conn.destroyed) {
        sent += batch.length / frame.length;
        if (!conn.write(batch)) {
          conn.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
  await new Promise<void>((r) => server.listen(socket, r));
  return {
    gone,
    sent: () => sent,
    close: () => new Promise<void>((r) => {
      for (const c of conns) c.destroy();
      server.close(() => r());
    }),
  };
}

for (const [kind, frame] of [
  ['PING', rawFrame(FrameType.PING, 0, 0, Buffer.alloc(8, 7))],
  ['SETTINGS', rawFrame(FrameType.SETTINGS, 0, 0)],
] as const) for (const transport of ['h2', 'node-http2'] as const) {
  test(`3: ${transport}: a ${kind} flood from a peer that never reads: the connection is destroyed and the client's memory stays bounded`, async () => {
    const t = tempSocket('h2-flood-');
    const peer = await floodPeer(t.socket, frame);
    const client = new CriClient({ endpoint: `unix://${t.socket}`, transport, timeoutMs: 60_000 });
    const before = process.memoryUsage();
    let peak = 0;
    const sample = setInterval(() => {
      const m = process.memoryUsage();
      peak = Math.max(peak, m.arrayBuffers - before.arrayBuffers, m.rss - before.rss);
    }, 20);
    try {
      const call = client.version().then(() => undefined, (e: unknown) => e);
      await within(peer.gone, 'the client destroying the flooded connection', 15_000);
      const err = await within(call, 'the call failing', 3_000);
      assert.ok(err instanceof CriError, `the call failed typed: ${String(err)}`);
      assert.equal(err.code, 'ERR_CRI_UNAVAILABLE');
      // h2 names the reason; node:http2 reports nghttp2's session error.
      if (transport === 'h2') assert.match(err.message, /ENHANCE_YOUR_CALM/);
      assert.ok(peak < 256 * 1024 * 1024, `memory grew by ${(peak / 1048576).toFixed(0)} MiB while ${peer.sent()} ${kind} frames were sent`);
    } finally {
      clearInterval(sample);
      client.close();
      await peer.close();
      t.cleanup();
    }
  });
}

test('3: a peer that opens its windows wide and then stops reading: writes stall, and the connection is destroyed after the stall timeout (injected clock)', async () => {
  const t = tempSocket('h2-stall-');
  let closed = false;
  let stopReading: () => void = () => {};
  const stalled = new Promise<void>((r) => (stopReading = r));
  const conns = new Set<net.Socket>();
  const server = net.createServer((conn) => {
    conns.add(conn);
    let read = 0;
    conn.on('data', (d: Buffer) => {
      read += d.length;
      // Once the big requests are flowing, read nothing more.
      if (read >= 1 << 20) {
        conn.pause();
        stopReading();
      }
    });
    conn.on('error', () => undefined);
    conn.once('close', () => (closed = true));
    conn.write(Buffer.concat([settingsFrame([[Setting.INITIAL_WINDOW_SIZE, 2 ** 31 - 1]]), windowUpdateFrame(0, 2 ** 31 - 1 - 65_535)]));
  });
  await new Promise<void>((r) => server.listen(t.socket, r));
  const clock = new FakeClock();
  const client = new CriClient({ endpoint: `unix://${t.socket}`, transport: 'h2', timeoutMs: 10 * WRITE_STALL_TIMEOUT_MS, clock });
  try {
    // Requests far larger than the socket buffers: most of them stay queued on this side.
    const calls = Array.from({ length: 4 }, () => client.removeContainer('x'.repeat(4 << 20)).then(() => undefined, (e: unknown) => e));
    await within(stalled, 'the peer reading the first megabyte, then stopping', 15_000);
    assert.equal(closed, false);
    clock.step(WRITE_STALL_TIMEOUT_MS);
    for (const err of await within(Promise.all(calls), 'the calls failing once the stall timeout fired', 5_000)) {
      assert.ok(err instanceof CriError, String(err));
      assert.equal(err.code, 'ERR_CRI_UNAVAILABLE');
      assert.match(err.message, /read nothing for 20000 ms/);
    }
    // The client destroyed its socket: reading again, the peer drains what was sent and sees the end.
    for (const c of conns) c.resume();
    await pollUntil(() => (closed ? true : undefined), { what: 'the peer seeing the connection closed', timeoutMs: 5_000 });
  } finally {
    client.close();
    for (const c of conns) c.destroy();
    await new Promise<void>((r) => server.close(() => r()));
    t.cleanup();
  }
});
