import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { writeAtomically, type Payload } from '../../../workers/volumes/atomic-writer.js';
import { makePayload } from '../../../workers/volumes/payload-sources.js';
import { checkPathSegment } from '../../../src/shared/paths/path-segment.js';
import { checkRelativePath, volumeDir } from '../../../workers/volumes/volume-paths.js';

const file = (s: string, mode = 0o644) => ({ data: Buffer.from(s), mode });

test('atomic writer: versions behind ..data, user links, unchanged payload not rewritten, removed keys go', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atomic-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const clock = new FakeClock(Date.UTC(2026, 10, 23, 4, 40, 21, 123));
  const v1: Payload = new Map([['a', file('1')], ['sub/b', file('2', 0o600)]]);
  assert.equal(await writeAtomically(dir, v1, clock), true);
  const ts1 = fs.readlinkSync(path.join(dir, '..data'));
  assert.match(ts1, /^\.\.2026_11_23_04_40_21\.123\d{6}$/);
  assert.equal(fs.readlinkSync(path.join(dir, 'a')), '..data/a');
  assert.equal(fs.readlinkSync(path.join(dir, 'sub')), '..data/sub');
  assert.equal(fs.readFileSync(path.join(dir, 'sub', 'b'), 'utf8'), '2');
  assert.equal(fs.statSync(path.join(dir, 'sub', 'b')).mode & 0o777, 0o600);

  assert.equal(await writeAtomically(dir, new Map(v1), clock), false, 'same payload: nothing written');
  assert.equal(fs.readlinkSync(path.join(dir, '..data')), ts1);
  assert.equal(await writeAtomically(dir, new Map([['a', file('1', 0o600)], ['sub/b', file('2', 0o600)]]), clock), true, 'a mode change is a change');

  clock.step(1_000);
  assert.equal(await writeAtomically(dir, new Map([['a', file('one')]]), clock), true);
  const ts3 = fs.readlinkSync(path.join(dir, '..data'));
  assert.deepEqual(fs.readdirSync(dir).sort(), ['..data', ts3, 'a'].sort(), 'old versions and the removed key are gone');
  assert.equal(fs.readFileSync(path.join(dir, 'a'), 'utf8'), 'one');
});

test('atomic writer and payloads refuse paths that climb or collide with its own entries', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atomic-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (const bad of ['../x', 'a/../../x', '/etc/passwd', '..data', '..2026/x', 'a/..b', '']) {
    await assert.rejects(writeAtomically(dir, new Map([[bad, file('x')]]), new FakeClock()), /invalid path/, bad);
    assert.notEqual(checkRelativePath(bad), undefined, bad);
  }
  assert.deepEqual(fs.readdirSync(dir), [], 'nothing written');
  for (const bad of ['..', '.', 'a/b', 'a\0b', '', 'x'.repeat(256)]) assert.notEqual(checkPathSegment(bad), undefined, JSON.stringify(bad.slice(0, 8)));
  assert.throws(() => volumeDir('/r', '../../etc', 'kubernetes.io~configmap', 'v'), /pod uid/);
  assert.throws(() => volumeDir('/r', 'uid', 'kubernetes.io~configmap', '../v'), /volume name/);

  const pod: V1Pod = { metadata: { name: 'p', namespace: 'n', uid: 'u' }, spec: { containers: [] } };
  const objects = { configMaps: new Map([['c', { state: 'found' as const, object: { data: { k: 'v', '../evil': 'x' }, binaryData: {} } }]]), secrets: new Map(), tokens: new Map() };
  const ctx = { nodeName: 'n', hostIP: '1.2.3.4', podIPs: [] };
  assert.deepEqual(makePayload(pod, 'configMap', { name: 'c', items: [{ key: 'k', path: '../../x' }] }, objects, ctx), { ok: false, message: 'invalid path "../../x": must not contain \'..\'' });
  assert.equal(makePayload(pod, 'configMap', { name: 'c' }, objects, ctx).ok, false, 'a key that climbs is refused, not written');
  assert.deepEqual(makePayload(pod, 'configMap', { name: 'c', items: [{ key: 'k', path: 'k', mode: 0o4777 }] }, objects, ctx), { ok: false, message: 'invalid file mode 2559: must be between 0 and 0777' });
  assert.deepEqual(makePayload(pod, 'configMap', { name: 'gone' }, objects, ctx), { ok: false, message: 'waiting for configmap "gone" from the API server' });
});
