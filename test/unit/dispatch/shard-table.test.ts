import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ShardTable, shardOf } from '../../../src/dispatch/shard-table.js';

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

test('workers bind to the lowest free shard, and a replacement takes the dead one', () => {
  const t = new ShardTable(3);
  assert.equal(t.bind(10), 0);
  assert.equal(t.bind(11), 1);
  assert.equal(t.bind(12), 2);
  assert.equal(t.bind(13), undefined, 'no free shard');
  assert.equal(t.unbind(11), 1);
  assert.equal(t.pick(1, [{ id: 10 }, { id: 12 }]), null, 'tasks for an unbound shard wait');
  assert.equal(t.bind(14), 1);
  assert.deepEqual(t.pick(1, [{ id: 10 }, { id: 14 }]), { id: 14 });
  assert.equal(t.pick(0, [{ id: 14 }]), null, 'bound worker not ready yet → wait');
  assert.throws(() => new ShardTable(0), /positive integer/);
});
