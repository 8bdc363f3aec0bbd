/**
 * Issue 27 item 2: /containerLogs opens only regular files, without blocking a libuv thread.
 * A FIFO at the log path used to block one of libuv's four file threads per request in open(2)
 * (after four, gzip for /metrics queued behind them and hung); a link to /dev/zero streamed
 * forever. Now each is a prompt 400 naming the file type, and /metrics keeps answering.
 * Real TLS sockets against the product's secure server and routes.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { openRegularLogFile } from '../../../src/main/server/container-logs-open.js';
import { LogFileError, readContainerLog } from '../../../src/main/server/container-logs-reader.js';
import { within } from '../../harness/poll.js';
import { request, secureFixture, startSecure } from './secure-server-fixture.js';

const f = secureFixture();
const fifo = path.join(f.dir, 'fifo.log');
execFileSync('mkfifo', [fifo]);
const zeroLink = path.join(f.dir, 'zero.log');
fs.symlinkSync('/dev/zero', zeroLink);

after(() => {
  // Should a reader still be blocked opening the FIFO (the unfixed code), give it a writer so
  // its libuv thread returns and this process can exit.
  for (let i = 0; i < 16; i++) {
    try {
      fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
    } catch {
      break; // ENXIO: no reader left
    }
  }
  f.remove();
});

test('2: a FIFO at the log path is refused at once (more requests than libuv has threads); /metrics with gzip keeps answering', async () => {
  const s = await startSecure(f, { logPath: () => fifo });
  try {
    const replies = await within(Promise.all(Array.from({ length: 8 }, () => request(f, s.port, '/containerLogs/ns/p/c', { timeoutMs: 12_000 }))), 'eight FIFO log requests answered', 15_000);
    for (const r of replies) {
      assert.equal(r.status, 400);
      assert.match(r.body.toString(), /not a regular file \(fifo\)/);
      assert.match(r.body.toString(), /fifo\.log/);
    }
    const m = await within(request(f, s.port, '/metrics', { headers: { 'accept-encoding': 'gzip' }, timeoutMs: 12_000 }), '/metrics after the FIFO requests', 15_000);
    assert.equal(m.status, 200);
    assert.equal(m.headers['content-encoding'], 'gzip');
    assert.match(zlib.gunzipSync(m.body).toString(), /^# HELP up/);
  } finally {
    s.server.destroy();
  }
});

test('2: a symlink to /dev/zero is refused with a clear error instead of streaming forever (also with follow)', async () => {
  const s = await startSecure(f, { logPath: () => zeroLink, running: () => true });
  try {
    for (const q of ['', '?follow=true']) {
      const r = await within(request(f, s.port, `/containerLogs/ns/p/c${q}`, { timeoutMs: 12_000 }), `the /dev/zero log request${q}`, 15_000);
      assert.equal(r.status, 400, q);
      assert.match(r.body.toString(), /not a regular file \(character device\)/);
    }
  } finally {
    s.server.destroy();
  }
});

test('2: a regular log file still streams', async () => {
  const log = path.join(f.dir, 'ok.log');
  fs.writeFileSync(log, '2026-01-01T00:00:00Z stdout F hello\n');
  const s = await startSecure(f, { logPath: () => log });
  try {
    const r = await request(f, s.port, '/containerLogs/ns/p/c');
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), 'hello\n');
  } finally {
    s.server.destroy();
  }
});

test('2: every read is bounded: without follow, nothing past the size the file had when it was opened', async () => {
  const log = path.join(f.dir, 'grows.log');
  fs.writeFileSync(log, '2026-01-01T00:00:00Z stdout F one\n');
  const opened = await openRegularLogFile(log);
  assert.ok(opened.ok);
  fs.appendFileSync(log, '2026-01-01T00:00:01Z stdout F two\n');
  const out: Buffer[] = [];
  await readContainerLog({ path: log, opened, options: { follow: false, previous: false, timestamps: false, tailLines: undefined, limitBytes: undefined, sinceMs: undefined }, clock: new FakeClock(), sink: { write: async (c) => (out.push(Buffer.from(c)), true) }, signal: new AbortController().signal, stillRunning: async () => false });
  assert.equal(Buffer.concat(out).toString(), 'one\n');
});

test('2: the reader itself refuses a FIFO or a device path (LogFileError with a code), without opening it blocking', async () => {
  for (const [p, type] of [[fifo, 'fifo'], [zeroLink, 'character device']] as const) {
    await assert.rejects(
      within(readContainerLog({ path: p, options: { follow: false, previous: false, timestamps: false, tailLines: undefined, limitBytes: undefined, sinceMs: undefined }, clock: new FakeClock(), sink: { write: async () => true }, signal: new AbortController().signal, stillRunning: async () => false }), p, 4_000),
      (e: unknown) => e instanceof LogFileError && e.code === 'ERR_LOG_NOT_REGULAR' && e.message.includes(`not a regular file (${type})`),
    );
  }
});
