import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fnv1a32, fnv1a32Bytes } from '../../../src/shared/hash/fnv1a.js';

test('FNV-1a 32 reference values, over strings and bytes', () => {
  assert.equal(fnv1a32(''), 0x811c9dc5);
  assert.equal(fnv1a32('a'), 0xe40c292c);
  assert.equal(fnv1a32('foobar'), 0xbf9cf968);
  assert.equal(fnv1a32Bytes(Buffer.from('foobar')), 0xbf9cf968);
  // Only the first len bytes count.
  assert.equal(fnv1a32Bytes(Buffer.from('foobarXYZ'), 6), 0xbf9cf968);
});

test('a string hashes as its UTF-8 bytes, ASCII or not (uid index and shard map agree)', () => {
  for (const s of ['uid-1', '0f9a7c3e-1b2d-4e5f-8a9b-0c1d2e3f4a5b', 'héllo', '日本', 'a\u{1F600}b', 'lone\ud800x']) {
    assert.equal(fnv1a32(s), fnv1a32Bytes(Buffer.from(s, 'utf8')), s);
  }
});
