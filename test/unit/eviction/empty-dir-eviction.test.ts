import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod, V1Volume } from '@kubernetes/client-node';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { createLogger, type LogFields } from '../../../src/shared/logging/logger.js';
import { EmptyDirEvictionMonitor, type EmptyDirEvictionDeps, type EvictionStatus, type EvictionTickReport } from '../../../workers/eviction/empty-dir-eviction.js';
import { emptyDirEvictionMessage, isCriticalPod, limitedEmptyDirs } from '../../../workers/eviction/empty-dir-limits.js';

const MiB = 1024 * 1024;
const PERIOD = 10_000;

function pod(uid: string, volumes: V1Volume[], annotations: Record<string, string> = {}): V1Pod {
  return { metadata: { name: `p-${uid}`, namespace: 'ns', uid, annotations }, spec: { volumes, containers: [{ name: 'c', image: 'i' }] } };
}

const limited = (name: string, sizeLimit: string): V1Volume => ({ name, emptyDir: { sizeLimit } });

interface Harness {
  root: string;
  clock: FakeClock;
  monitor: EmptyDirEvictionMonitor;
  kills: Array<{ uid: string; status: EvictionStatus }>;
  events: Array<{ uid: string; type: string; reason: string; message: string }>;
  logs: Array<{ msg: string; fields: LogFields }>;
  evictionSignals: string[];
  /** Steps the fake clock to the next tick and waits (bounded) for that tick to finish. */
  tick(): Promise<EvictionTickReport>;
  volumeDir(uid: string, name: string): string;
}

function harness(t: { after(fn: () => void): void }, o: Partial<EmptyDirEvictionDeps> & { withEvents?: boolean } = {}): Harness {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'evict-root-'));
  const clock = new FakeClock();
  const kills: Harness['kills'] = [];
  const events: Harness['events'] = [];
  const logs: Harness['logs'] = [];
  const evictionSignals: string[] = [];
  const reports: EvictionTickReport[] = [];
  let wake: (() => void) | undefined;
  const logger = createLogger({ verbosity: 4, sink: (line) => { const rec = JSON.parse(line) as LogFields; logs.push({ msg: String(rec['msg'] ?? ''), fields: rec }); } });
  const monitor = new EmptyDirEvictionMonitor({
    rootDir: root,
    clock,
    logger,
    kill: (p, status) => kills.push({ uid: p.metadata!.uid!, status }),
    metrics: { eviction: (signal) => evictionSignals.push(signal) },
    ...(o.withEvents === false ? {} : { events: (p, type, reason, message) => events.push({ uid: p.metadata!.uid!, type, reason, message }) }),
    onTick: (r) => {
      reports.push(r);
      wake?.();
    },
    ...(o.entriesPerTick !== undefined ? { entriesPerTick: o.entriesPerTick } : {}),
  });
  t.after(() => {
    monitor.close();
    fs.rmSync(root, { recursive: true, force: true });
  });
  const volumeDir = (uid: string, name: string): string => {
    const d = path.join(root, 'pods', uid, 'volumes', 'kubernetes.io~empty-dir', name);
    fs.mkdirSync(d, { recursive: true });
    return d;
  };
  const tick = async (): Promise<EvictionTickReport> => {
    const before = reports.length;
    const at = clock.nextTimerAt();
    assert.notEqual(at, undefined, 'a tick is armed');
    assert.ok(at! - clock.monotonic() <= PERIOD, 'a tick within one monitoring period');
    const done = new Promise<void>((resolve, reject) => {
      const bound = setTimeout(() => reject(new Error('the tick did not finish within 10 s')), 10_000);
      wake = () => {
        if (reports.length > before) {
          clearTimeout(bound);
          resolve();
        }
      };
    });
    clock.stepTo(at!);
    await done;
    return reports[reports.length - 1]!;
  };
  return { root, clock, monitor, kills, events, logs, evictionSignals, tick, volumeDir };
}

test('emptyDir limits: disk emptyDirs with a positive sizeLimit only; the kubelet message; critical pods', () => {
  const p = pod('u', [
    limited('a', '1Mi'),
    { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } },
    { name: 'nolimit', emptyDir: {} },
    limited('zero', '0'),
    limited('bad', 'lots'),
    { name: 'cm', configMap: { name: 'x' } },
    limited('b', '1500k'),
  ]);
  assert.deepEqual(limitedEmptyDirs(p), [
    { name: 'a', limitBytes: MiB, limitText: '1Mi' },
    { name: 'b', limitBytes: 1_500_000, limitText: '1500k' },
  ]);
  assert.equal(emptyDirEvictionMessage('cache', '1Mi'), 'Usage of EmptyDir volume "cache" exceeds the limit "1Mi". ');
  assert.equal(isCriticalPod(pod('s', [], { 'kubernetes.io/config.source': 'file' })), true);
  assert.equal(isCriticalPod(pod('m', [], { 'kubernetes.io/config.source': 'api', 'kubernetes.io/config.mirror': 'x' })), true);
  assert.equal(isCriticalPod({ ...pod('c', []), spec: { containers: [], priority: 2_000_001_000 } }), true);
  assert.equal(isCriticalPod(pod('n', [], { 'kubernetes.io/config.source': 'api' })), false);
});

test('eviction: a file written past the limit evicts the pod at the next period with the kubelet message; once', async (t) => {
  const h = harness(t);
  const dir = h.volumeDir('u1', 'cache');
  h.monitor.track(pod('u1', [limited('cache', '1Mi')]));
  fs.writeFileSync(path.join(dir, 'blob'), Buffer.alloc(2 * MiB, 7));
  h.clock.step(PERIOD - 1);
  assert.deepEqual(h.kills, [], 'nothing before the monitoring period');
  const r = await h.tick();
  assert.deepEqual(r.evicted, ['u1']);
  const message = 'Usage of EmptyDir volume "cache" exceeds the limit "1Mi". ';
  assert.deepEqual(h.kills, [{ uid: 'u1', status: { reason: 'Evicted', message } }]);
  assert.deepEqual(h.events, [{ uid: 'u1', type: 'Warning', reason: 'Evicted', message }]);
  assert.deepEqual(h.evictionSignals, ['emptydirfs.limit'], 'kubelet_evictions{eviction_signal="emptydirfs.limit"}');
  assert.equal(h.monitor.trackedPods, 0, 'an evicted pod is no longer measured');
  assert.equal(h.clock.pendingTimers, 0, 'no pod left: no timer');
  h.monitor.track(pod('u1', [limited('cache', '1Mi')]));
  assert.equal(h.monitor.trackedPods, 0, 'an evicted pod is never tracked again (a late sync result)');
  assert.equal(h.kills.length, 1);
});

test('eviction: under the limit nothing happens, and the volume is measured afresh every period', async (t) => {
  const h = harness(t);
  const dir = h.volumeDir('u2', 'cache');
  h.monitor.track(pod('u2', [limited('cache', '1Mi')]));
  fs.writeFileSync(path.join(dir, 'blob'), Buffer.alloc(512 * 1024, 7));
  for (let i = 0; i < 3; i++) {
    const r = await h.tick();
    assert.deepEqual(r.evicted, []);
    assert.equal(r.walksFinished, 1, 'one whole measurement per period');
    assert.equal(h.clock.nextTimerAt()! - h.clock.monotonic(), PERIOD, 'the next tick one monitoring period later');
  }
  assert.deepEqual(h.kills, []);
  fs.writeFileSync(path.join(dir, 'more'), Buffer.alloc(MiB, 8));
  assert.deepEqual((await h.tick()).evicted, ['u2'], 'growth past the limit is seen at the next period');
});

test('eviction: a symlink to a big file outside the volume is not counted', async (t) => {
  const h = harness(t);
  const dir = h.volumeDir('u3', 'cache');
  const outside = path.join(h.root, 'outside-big');
  fs.writeFileSync(outside, Buffer.alloc(4 * MiB, 1));
  fs.symlinkSync(outside, path.join(dir, 'link'));
  fs.symlinkSync(h.root, path.join(dir, 'link-to-root'));
  h.monitor.track(pod('u3', [limited('cache', '1Mi')]));
  const r = await h.tick();
  assert.deepEqual(r.evicted, []);
  assert.equal(r.walksFinished, 1);
  assert.deepEqual(h.kills, []);
});

test('eviction: the entry budget bounds each tick; a big tree is measured over several ticks, then evicted', async (t) => {
  const h = harness(t, { entriesPerTick: 4 });
  const dir = h.volumeDir('u4', 'cache');
  for (let i = 0; i < 12; i++) fs.writeFileSync(path.join(dir, `f${i}`), Buffer.alloc(200 * 1024, i));
  h.monitor.track(pod('u4', [limited('cache', '2Mi')]));
  const seen: EvictionTickReport[] = [];
  while (h.kills.length === 0) {
    const r = await h.tick();
    seen.push(r);
    assert.ok(r.entries <= 4, `at most 4 entries per tick: ${r.entries}`);
    assert.ok(seen.length < 10, 'evicted within 10 ticks');
  }
  assert.ok(seen.length >= 3, `the ~2.4 MB were counted over several ticks (${seen.length})`);
  assert.equal(h.kills[0]!.status.message, 'Usage of EmptyDir volume "cache" exceeds the limit "2Mi". ');
});

test('eviction: pods share the budget round-robin; the pod over its limit is found even behind others', async (t) => {
  const h = harness(t, { entriesPerTick: 3 });
  for (const uid of ['a', 'b', 'c']) {
    const dir = h.volumeDir(uid, 'v');
    for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(dir, `f${i}`), Buffer.alloc(uid === 'c' ? 600 * 1024 : 1024, i));
    h.monitor.track(pod(uid, [limited('v', '1Mi')]));
  }
  for (let i = 0; i < 12 && h.kills.length === 0; i++) await h.tick();
  assert.deepEqual(h.kills.map((k) => k.uid), ['c']);
  assert.equal(h.monitor.trackedPods, 2);
});

test('eviction: critical (static) pods are not evicted: logged once and no longer measured; standalone events go to the log', async (t) => {
  const h = harness(t, { withEvents: false });
  const s = h.volumeDir('st', 'cache');
  fs.writeFileSync(path.join(s, 'blob'), Buffer.alloc(2 * MiB, 1));
  h.monitor.track(pod('st', [limited('cache', '1Mi')], { 'kubernetes.io/config.source': 'file' }));
  const a = h.volumeDir('ap', 'cache');
  fs.writeFileSync(path.join(a, 'blob'), Buffer.alloc(2 * MiB, 1));
  h.monitor.track(pod('ap', [limited('cache', '1Mi')], { 'kubernetes.io/config.source': 'api' }));
  const r = await h.tick();
  assert.deepEqual(r.evicted, ['ap']);
  assert.deepEqual(h.kills.map((k) => k.uid), ['ap']);
  assert.equal(h.logs.filter((l) => l.msg === 'Eviction manager: cannot evict a critical pod').length, 1);
  assert.deepEqual(h.evictionSignals, ['emptydirfs.limit'], 'a critical pod is not counted');
  const ev = h.logs.find((l) => l.msg === 'event');
  assert.equal(ev?.fields['reason'], 'Evicted');
  assert.equal(ev?.fields['type'], 'Warning');
  assert.equal(ev?.fields['message'], 'Usage of EmptyDir volume "cache" exceeds the limit "1Mi". ');
  assert.equal(h.monitor.trackedPods, 0);
});

test('eviction: untracked, memory-medium and limitless pods are never measured; no timer without pods', async (t) => {
  const h = harness(t);
  h.monitor.track(pod('m', [{ name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } }, { name: 'free', emptyDir: {} }]));
  assert.equal(h.monitor.trackedPods, 0);
  assert.equal(h.clock.pendingTimers, 0);
  const dir = h.volumeDir('u5', 'cache');
  fs.writeFileSync(path.join(dir, 'blob'), Buffer.alloc(2 * MiB, 1));
  h.monitor.track(pod('u5', [limited('cache', '1Mi')]));
  assert.equal(h.clock.pendingTimers, 1);
  h.monitor.untrack('u5');
  h.clock.step(PERIOD * 3);
  assert.deepEqual(h.kills, []);
  assert.equal(h.clock.pendingTimers, 0, 'the armed tick found no pod and armed no other');
});

test('eviction: a pod with several volumes resumes at the volume it stopped in, so a later big volume is reached', async (t) => {
  const h = harness(t, { entriesPerTick: 5 });
  const a = h.volumeDir('u6', 'a');
  for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(a, `f${i}`), 'x');
  const b = h.volumeDir('u6', 'b');
  for (let i = 0; i < 8; i++) fs.writeFileSync(path.join(b, `f${i}`), Buffer.alloc(200 * 1024, i));
  h.monitor.track(pod('u6', [limited('a', '1Mi'), limited('b', '1Mi')]));
  let ticks = 0;
  while (h.kills.length === 0) {
    await h.tick();
    assert.ok(++ticks < 6, 'volume b reached and evicted within 6 ticks of 5 entries');
  }
  assert.equal(h.kills[0]!.status.message, 'Usage of EmptyDir volume "b" exceeds the limit "1Mi". ');
});
