/**
 * The worker side of a shard's port (workers/shard-endpoint.ts): results of one event-loop turn
 * travel as one 'results' message, in order; a lone result travels alone; 'close' sends what is
 * pending before the port closes. The end of the turn is an injected scheduler the test runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageChannel } from 'node:worker_threads';
import type { ShardOutbound, WorkerToMain, PodUpdateMessage } from '../../../src/shared/protocol/pod-worker-protocol.js';
import { createShardEndpoint } from '../../../workers/shard-endpoint.js';

function result(uid: string): WorkerToMain {
  return { kind: 'podResult', threadId: 7, uid, state: 'syncing', work: 'sync', durationMs: 0 };
}

test('results of one turn go out as one ordered message; a lone result alone; close flushes', async () => {
  const turns: Array<() => void> = [];
  let emit!: (m: WorkerToMain) => void;
  let closed = 0;
  const endpoint = createShardEndpoint(7, (e) => {
    emit = e;
    return { handle: () => null, close: () => void closed++ };
  }, (fn) => turns.push(fn));
  const { port1, port2 } = new MessageChannel();
  const received: ShardOutbound[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  port1.on('message', (m: ShardOutbound) => {
    received.push(m);
    for (const w of waiters.splice(0)) if (received.length >= w.n) w.resolve(); else waiters.push(w);
  });
  const until = (n: number): Promise<void> => received.length >= n ? Promise.resolve() : new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out waiting for ${n} messages (got ${received.length})`)), 5_000);
    waiters.push({ n, resolve: () => { clearTimeout(t); resolve(); } });
  });
  const served = endpoint.serve({ kind: 'attach', shard: 0, port: port2 });
  await until(1);
  assert.deepEqual(received[0], { kind: 'ready', threadId: 7 });

  emit(result('a'));
  emit(result('b'));
  emit(result('c'));
  assert.equal(turns.length, 1, 'one flush scheduled per turn');
  turns.shift()!();
  await until(2);
  assert.deepEqual(received[1], { kind: 'results', batch: [result('a'), result('b'), result('c')] });

  emit(result('d'));
  turns.shift()!();
  await until(3);
  assert.deepEqual(received[2], result('d'), 'a lone result is posted as itself');

  // Updates are acknowledged at once; results still wait for the end of the turn.
  const u: PodUpdateMessage = { kind: 'update', uid: 'e', updateType: 'sync', pod: { metadata: { uid: 'e' } } };
  emit(result('e'));
  port1.postMessage({ kind: 'updates', batch: [u] });
  await until(4);
  assert.deepEqual(received[3], { kind: 'ack' });
  port1.postMessage({ kind: 'close' });
  await served;
  assert.equal(closed, 1);
  await until(5);
  assert.deepEqual(received[4], result('e'), 'close posts what was pending before the port closes');
  turns.shift()?.();
  port1.close();
});
