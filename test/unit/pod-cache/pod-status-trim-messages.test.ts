import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import { container, podUid, typicalPodStatus } from './pod-status-fixtures.js';

test('termination messages too long for an entry are cut (largest cap that fits), never making the entry an error', () => {
  // One slot per entry at most (maxEntryBytes = bytesPerSlot): the 4th trim step must make it fit.
  const { reader, writer } = createPodCache({ capacity: 2, bytesPerSlot: 4096, maxEntryBytes: 4096 });
  const uid = podUid(1);
  const st = typicalPodStatus(1, 0);
  const sb = st.sandboxes[0]!;
  // Three exited containers each with a 4 KiB message (what a container may write), one short.
  st.containers = [
    { ...container(1, 0, 1, sb.id), state: 'CONTAINER_EXITED', message: 'a'.repeat(4096) },
    { ...container(1, 1, 1, sb.id), state: 'CONTAINER_EXITED', message: 'é'.repeat(2048) },
    { ...container(1, 2, 1, sb.id), state: 'CONTAINER_EXITED', message: 'short' },
  ];
  assert.equal(writer.set(uid, st, null, 10), 'trimmed');
  const e = reader.get(uid);
  assert.equal(e?.error, null);
  const msgs = e!.status.containers.map((c) => c.message);
  assert.equal(msgs[2], 'short', 'a message under the cap is kept whole');
  assert.ok(msgs[0]!.length > 256 && /^a+$/.test(msgs[0]!), `cut, not dropped: ${msgs[0]!.length} bytes`);
  assert.ok(Buffer.byteLength(msgs[1]!) <= Buffer.byteLength(msgs[0]!) && Buffer.byteLength(msgs[0]!) - Buffer.byteLength(msgs[1]!) <= 1, 'cut on a character boundary at the same cap');
  assert.ok(/^(é)+$/.test(msgs[1]!));
  assert.deepEqual(e!.status.containers.map((c) => [c.name, c.state]), st.containers.map((c) => [c.name, c.state]));
});

test('with overflow slots (the default entry bound), 4 KiB termination messages are stored whole', () => {
  const { reader, writer } = createPodCache({ capacity: 2, maxCapacity: 64, bytesPerSlot: 4096 });
  const uid = podUid(1);
  const st = typicalPodStatus(1, 0);
  const sb = st.sandboxes[0]!;
  st.containers = [0, 1, 2].map((i) => ({ ...container(1, i, 1, sb.id), state: 'CONTAINER_EXITED' as const, message: String(i).repeat(4096) }));
  assert.equal(writer.set(uid, st, null, 10), 'stored');
  const e = reader.get(uid);
  assert.equal(e?.error, null);
  assert.deepEqual(e!.status.containers.map((c) => c.message), st.containers.map((c) => c.message));
});
