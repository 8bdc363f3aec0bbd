/**
 * The stderr log sink survives write errors: a failed write drops the line and counts it, and
 * the first successful write afterwards says how many lines were lost and why.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createFdSink, createLogger } from '../../../src/shared/logging/logger.js';

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
  full = true;
  log.info('two');
  log.error('three');
  assert.equal(sink.dropped(), 2);
  full = false;
  log.info('four');
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
  assert.equal(out.join(''), 'hello world\n');
});

test('writing to /dev/full never throws', () => {
  const fd = fs.openSync('/dev/full', 'w');
  try {
    const sink = createFdSink({ fd });
    const log = createLogger({ sink });
    for (let i = 0; i < 10; i++) log.error('lost', { i });
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
  assert.equal(observed, 2);
  sink.observeDrops(() => {
    throw new Error('metrics broken');
  });
  log.info('three');
  assert.equal(sink.dropped(), 3, 'still counted');
  sink.observeDrops(undefined);
  full = false;
  log.info('four');
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
  assert.equal(sink.dropped(), 0);
  const text = Buffer.concat(written).toString();
  assert.equal(text.split('\n').length, 2, 'one whole line');
  assert.match(text, /"msg":"pipe line"/);
});

test('a pipe that never drains costs a dropped line after a bounded wait, not a hung thread', () => {
  const sink = createFdSink({ fd: 99, write: () => { throw Object.assign(new Error('EAGAIN'), { code: 'EAGAIN' }); } });
  createLogger({ sink, now: () => 0 }).info('stuck');
  assert.equal(sink.dropped(), 1);
});
