import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shardOf } from '../../../src/main/dispatch/shard-table.js';

test('shardOf is stable and spreads UIDs over all shards', () => {
  const counts = [0, 0, 0, 0];
  for (let i = 0; i < 10_000; i++) {
    const uid = `uid-${i}`;
    const s = shardOf(uid, 4);
    assert.equal(shardOf(uid, 4), s);
    counts[s]!++;
  }
  for (const c of counts) assert.ok(c > 2000 && c < 3000, `uneven shard sizes ${counts.join(',')}`);
});
