/**
 * The stderr log sink survives write errors: a failed write drops the line and counts it, and
 * the first successful write afterwards says how many lines were lost and why. Lines are
 * batched (whole lines, at most LOG_BATCH_BYTES per write) until the end of the current run of
 * code: the tests flush where that run would end.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createFdSink, createLogger, LOG_BATCH_BYTES } from '../../../src/shared/logging/logger.js';

function enospc(): Error {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
}

test('a full disk drops and counts lines, then the log recovers with a notice', () => {
  const written: string[] = [];
  let full = false;
  const sink = createFdSink({
    fd: 99,
    write: (_fd, data, offset, length) => {
      if (full) throw enospc();
      written.push(data.subarray(offset, offset + length).toString());
      return length;
    },
  });
  const log = createLogger({ sink, now: () => 0 });
  log.info('one');
  sink.flush();
  full = true;
  log.info('two');
  log.error('three');
  sink.flush();
  assert.equal(sink.dropped(), 2, 'each line of the failed batch is counted');
  full = false;
  log.info('four');
  sink.flush();
  assert.equal(written.length, 3);
  assert.match(written[0]!, /"msg":"one"/);
  const notice = JSON.parse(written[1]!) as { msg: string; dropped: number; error: string };
  assert.equal(notice.dropped, 2);
  assert.equal(notice.error, 'ENOSPC');
  assert.match(written[2]!, /"msg":"four"/);
  assert.equal(sink.dropped(), 2, 'the notice itself is not a drop');
});

test('a short write is completed, not truncated', () => {
  const out: string[] = [];
  const sink = createFdSink({ fd: 99, write: (_fd, data, offset, length) => { const n = Math.min(3, length); out.push(data.subarray(offset, offset + n).toString()); return n; } });
  sink('hello world');
  sink.flush();
  assert.equal(out.join(''), 'hello world\n');
});

test('writing to /dev/full never throws', () => {
  const fd = fs.openSync('/dev/full', 'w');
  try {
    const sink = createFdSink({ fd });
    const log = createLogger({ sink });
    for (let i = 0; i < 10; i++) log.error('lost', { i });
    sink.flush();
    assert.equal(sink.dropped(), 10);
  } finally {
    fs.closeSync(fd);
  }
});

test('the drop observer sees every dropped line (the metric), and a throwing observer cannot break logging', () => {
  let full = true;
  const sink = createFdSink({
    fd: 99,
    write: (_fd, _data, _offset, length) => {
      if (full) throw enospc();
      return length;
    },
  });
  let observed = 0;
  sink.observeDrops(() => observed++);
  const log = createLogger({ sink, now: () => 0 });
  log.info('one');
  log.info('two');
  sink.flush();
  assert.equal(observed, 2);
  sink.observeDrops(() => {
    throw new Error('metrics broken');
  });
  log.info('three');
  sink.flush();
  assert.equal(sink.dropped(), 3, 'still counted');
  sink.observeDrops(undefined);
  full = false;
  log.info('four');
  sink.flush();
  assert.equal(observed, 2);
});

test('a full pipe (EAGAIN) is back-pressure: the line waits for the reader and is written whole, not dropped', () => {
  const written: Buffer[] = [];
  let eagainLeft = 3;
  const sink = createFdSink({
    fd: 99,
    write: (_fd, data, offset, length) => {
      // Half the line goes through, then the pipe is full three times, then it drains.
      if (offset === 0) {
        const half = Math.floor(length / 2);
        written.push(Buffer.from(data.subarray(0, half)));
        return half;
      }
      if (eagainLeft-- > 0) throw Object.assign(new Error('EAGAIN: resource temporarily unavailable, write'), { code: 'EAGAIN' });
      written.push(Buffer.from(data.subarray(offset, offset + length)));
      return length;
    },
  });
  createLogger({ sink, now: () => 0 }).info('pipe line');
  sink.flush();
  assert.equal(sink.dropped(), 0);
  const text = Buffer.concat(written).toString();
  assert.equal(text.split('\n').length, 2, 'one whole line');
  assert.match(text, /"msg":"pipe line"/);
});

test('a pipe that never drains costs a dropped line after a bounded wait, not a hung thread', () => {
  const sink = createFdSink({ fd: 99, write: () => { throw Object.assign(new Error('EAGAIN'), { code: 'EAGAIN' }); } });
  createLogger({ sink, now: () => 0 }).info('stuck');
  sink.flush();
  assert.equal(sink.dropped(), 1);
});

test('lines logged in one run of code go out together at its end, in writes of whole lines up to LOG_BATCH_BYTES', () => {
  const writes: string[] = [];
  let scheduled: (() => void)[] = [];
  const sink = createFdSink({
    fd: 99,
    write: (_fd, data, offset, length) => {
      writes.push(data.subarray(offset, offset + length).toString());
      return length;
    },
    defer: (fn) => scheduled.push(fn),
  });
  const log = createLogger({ sink, now: () => 0 });
  for (let i = 0; i < 3; i++) log.info('small', { i });
  assert.equal(writes.length, 0, 'nothing written before the run ends');
  assert.equal(scheduled.length, 1, 'one flush scheduled for the run');
  for (const fn of scheduled.splice(0)) fn();
  assert.equal(writes.length, 1, 'three lines, one write');
  assert.equal(writes[0]!.split('\n').length, 4);

  const pad = 'x'.repeat(180);
  for (let i = 0; i < 100; i++) log.info('pod admitted', { i, pad });
  for (const fn of scheduled.splice(0)) fn();
  let lines = 0;
  for (const w of writes.slice(1)) {
    assert.ok(Buffer.byteLength(w) <= LOG_BATCH_BYTES, `a write of ${Buffer.byteLength(w)} bytes`);
    assert.ok(w.endsWith('\n'), 'whole lines only');
    for (const l of w.split('\n').slice(0, -1)) JSON.parse(l);
    lines += w.split('\n').length - 1;
  }
  assert.equal(lines, 100);
  assert.ok(writes.length - 1 < 100 / 10, `100 lines in ${writes.length - 1} writes`);

  const long = 'y'.repeat(LOG_BATCH_BYTES * 2);
  const n = writes.length;
  log.info('first');
  log.info('long', { long });
  assert.equal(writes.length, n + 2, 'the batch before it, then the long line alone, at once');
  assert.match(writes[n]!, /"msg":"first"/);
  assert.match(writes[n + 1]!, /"msg":"long"/);
  for (const fn of scheduled.splice(0)) fn();
  assert.equal(writes.length, n + 2, 'nothing left to flush');
});

test('a thread that exits in the middle of a run still writes what it logged (the stderr sink flushes at exit)', () => {
  const logger = fileURLToPath(new URL('../../../src/shared/logging/logger.js', import.meta.url));
  const script = `import { createLogger } from ${JSON.stringify(logger)}; const log = createLogger(); log.info('before exit', { n: 1 }); process.exit(3);`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 3, r.stderr);
  assert.match(r.stderr, /"msg":"before exit"/);
});
