import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StatusEncoder, decodeEntry } from '../../../src/shared/pod-cache/pod-status-codec.js';
import { emptyPodStatus } from '../../../src/shared/pod-cache/runtime-pod-status.js';
import { CacheError } from '../../../src/shared/pod-cache/pod-cache-errors.js';
import { typicalPodStatus } from './pod-status-fixtures.js';

test('a typical pod status round-trips exactly, with and without an error', () => {
  const enc = new StatusEncoder();
  for (const v of [0, 1, 2, 300]) {
    const st = typicalPodStatus(42, v);
    const bytes = enc.encode(st, null);
    assert.deepEqual(decodeEntry(Buffer.from(bytes), bytes.length), { status: st, error: null });
  }
  const err = { code: 'ERR_CRI_UNAVAILABLE', message: 'connection refused' };
  const bytes = enc.encode(emptyPodStatus('u'), err);
  assert.deepEqual(decodeEntry(Buffer.from(bytes), bytes.length), { status: emptyPodStatus('u'), error: err });
});

test('non-ASCII strings, negative exit codes and large counters survive', () => {
  const st = typicalPodStatus(1, 3);
  const c = st.containers[0];
  assert.ok(c);
  c.message = 'tschüß — 終了 🚀';
  c.exitCode = -1;
  c.restartCount = 0xffffffff;
  st.name = 'ñame';
  const enc = new StatusEncoder();
  const bytes = enc.encode(st, null);
  assert.deepEqual(decodeEntry(Buffer.from(bytes), bytes.length).status, st);
});

test('the encoder grows past its initial buffer', () => {
  const st = typicalPodStatus(2, 0);
  const c = st.containers[0];
  assert.ok(c);
  c.message = 'x'.repeat(20_000);
  const bytes = new StatusEncoder().encode(st, null);
  assert.ok(bytes.length > 20_000);
  assert.deepEqual(decodeEntry(Buffer.from(bytes), bytes.length).status, st);
});

test('truncated or trailing payloads are ERR_CACHE_CORRUPT, never a partial status', () => {
  const bytes = Buffer.from(new StatusEncoder().encode(typicalPodStatus(3, 1), null));
  for (const len of [0, 1, 10, bytes.length - 1]) {
    assert.throws(() => decodeEntry(bytes, len), (e: unknown) => e instanceof CacheError && e.code === 'ERR_CACHE_CORRUPT');
  }
  const longer = Buffer.concat([bytes, Buffer.from([0])]);
  assert.throws(() => decodeEntry(longer, longer.length), (e: unknown) => e instanceof CacheError && e.code === 'ERR_CACHE_CORRUPT');
});
