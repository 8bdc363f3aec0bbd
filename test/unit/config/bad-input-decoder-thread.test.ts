/**
 * Item 16: manifests are decoded off the main thread, within a time and a heap limit. A call
 * that exceeds either is answered with ERR_MANIFEST_TOO_LARGE naming the origin, the thread is
 * replaced, and the next manifest decodes normally; the main thread keeps turning meanwhile.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ThreadManifestDecoder } from '../../../src/main/config/manifest-decode-thread-client.js';
import { createFileSource } from '../../../src/main/config/source-file.js';
import { PodConfig } from '../../../src/main/config/pod-config.js';
import type { ManifestDecoder } from '../../../src/shared/manifest/manifest-decoder.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { realClock } from '../../../src/shared/clock/clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { aliasBombFreeForm, podYaml, stringAsList } from './bad-input-corpus.js';
import { within } from '../../harness/poll.js';

const HOSTILE_THREAD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'hostile-decode-thread.js');
/** A thread that loads but never serves (a start that never finishes). */
const SILENT_THREAD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'silent-decode-thread.js');
const ctx = { source: 'file' as const, origin: '/m/web.yaml', nodeName: 'n1', allowLists: false };

test('16: the product decoder thread decodes valid and hostile manifests; results cross back intact', async () => {
  const d = new ThreadManifestDecoder({ clock: realClock, logger: silentLogger });
  const eld = monitorEventLoopDelay({ resolution: 1 });
  eld.enable();
  try {
    const ok = await d.decode(podYaml('web', { container: '    env: [{name: A, value: x}]' }), ctx);
    assert.ok(ok.ok);
    assert.equal(ok.pods[0]?.metadata?.name, 'web-n1');
    assert.equal(ok.pods[0]?.spec?.containers[0]?.env?.[0]?.value, 'x');
    const [bomb, str] = await Promise.all([d.decode(aliasBombFreeForm(), ctx), d.decode(stringAsList(), ctx)]);
    assert.equal(bomb.ok ? 'ok' : bomb.error.code, 'ERR_MANIFEST_TOO_LARGE');
    assert.equal(str.ok ? 'ok' : str.error.code, 'ERR_MANIFEST_INVALID');
    assert.ok(!str.ok && str.error.message.startsWith('/m/web.yaml: spec.containers[0].args'), 'the error is rebuilt with its message');
    assert.ok(!str.ok && str.error.fieldErrors[0]?.field === 'spec.containers[0].args');
  } finally {
    eld.disable();
    await d.close();
  }
  // Diagnostic only (timing is not asserted in unit tests): main-thread delay while decoding.
  console.log(`# main-thread event-loop delay while decoding: max ${(eld.max / 1e6).toFixed(1)} ms, p99 ${(eld.percentile(99) / 1e6).toFixed(1)} ms`);
});

test('16: a decode that exceeds the time limit is cut off on the injected clock; the thread is replaced', async () => {
  const clock = new FakeClock();
  const d = new ThreadManifestDecoder({ clock, logger: silentLogger, timeoutMs: 5_000, threadFile: HOSTILE_THREAD });
  try {
    // A started thread (its ready() answered, real time): from here only fake time bounds the call.
    assert.ok((await d.decode(podYaml('warm'), ctx)).ok);
    let settled = false;
    const hung = d.decode('HANG', ctx).finally(() => (settled = true));
    // Steps fake time until the call is answered (the thread spins; only the timeout can end it).
    assert.ok(await clock.runUntil(() => settled, { stepMs: 1_000, maxMs: 60_000 }), 'the timeout answered the call');
    const r = await hung;
    assert.equal(r.ok ? 'ok' : r.error.code, 'ERR_MANIFEST_TOO_LARGE');
    assert.match(r.ok ? '' : r.error.message, /^\/m\/web\.yaml: decoding took longer than 5000 ms/);
    assert.equal(d.replacedThreads, 1);
    const next = await d.decode(podYaml('web'), ctx);
    assert.ok(next.ok, 'a fresh thread decodes the next manifest');
  } finally {
    await d.close();
  }
});

test('16: a file whose read and decode exceed the time limit fails naming the file; the thread is replaced', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-decode-file-'));
  const clock = new FakeClock();
  const d = new ThreadManifestDecoder({ clock, logger: silentLogger, timeoutMs: 5_000, threadFile: HOSTILE_THREAD });
  const req = (name: string) => ({ file: path.join(dir, name), ctx: { ...ctx, origin: path.join(dir, name) }, maxBytes: 1 << 20, lastDigest: undefined });
  try {
    await fs.writeFile(path.join(dir, 'hang.yaml'), 'HANG');
    await fs.writeFile(path.join(dir, 'web.yaml'), podYaml('web'));
    assert.ok((await d.decode(podYaml('warm'), ctx)).ok, 'a started thread');
    let settled = false;
    const hung = d.decodeFile(req('hang.yaml')).finally(() => (settled = true));
    const queued = d.decodeFile(req('web.yaml'));
    assert.ok(await clock.runUntil(() => settled, { stepMs: 1_000, maxMs: 60_000 }), 'the timeout answered the call');
    const r = await hung;
    assert.equal(r.kind === 'rejected' ? r.error.code : r.kind, 'ERR_MANIFEST_TOO_LARGE');
    assert.equal(r.kind === 'rejected' ? r.error.origin : '', path.join(dir, 'hang.yaml'));
    assert.equal(d.replacedThreads, 1);
    const next = await queued;
    assert.ok(next.kind === 'decoded' && next.result.ok, 'the file queued behind it is read by a fresh thread');
  } finally {
    await d.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('16: the file source does not send a file the decoder gave up on again until the file changes', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-decode-pin-'));
  // Wall clock a minute ahead of the files' timestamps: written files look settled (RACY_MS).
  const clock = new FakeClock(Date.now() + 60_000);
  const thread = new ThreadManifestDecoder({ clock, logger: silentLogger, timeoutMs: 5_000, threadFile: HOSTILE_THREAD });
  const sent: string[] = [];
  let hangSent!: () => void;
  const hangInFlight = new Promise<void>((resolve) => (hangSent = resolve));
  let hangAnswered = false;
  const decoder: ManifestDecoder = {
    decode: (text, c) => thread.decode(text, c),
    decodeFile: (req) => {
      sent.push(path.basename(req.file));
      const answer = thread.decodeFile(req);
      if (path.basename(req.file) === 'hang.yaml') {
        hangSent(); // its time limit is armed now
        void answer.finally(() => (hangAnswered = true));
      }
      return answer;
    },
    close: () => thread.close(),
  };
  const cfg = new PodConfig({ clock, logger: silentLogger });
  const errors: string[] = [];
  const src = createFileSource({ path: dir, nodeName: 'n1', sink: cfg.channel('file'), clock, logger: silentLogger, watch: false, decoder, debounceMs: 0, onError: (e) => errors.push(`${path.basename(e.origin)}:${e.code}`) });
  try {
    // Fake time is stepped only while the hang is the decoder's one call: stepped while a fresh
    // thread boots in real time, it would cut a valid file off too.
    await fs.writeFile(path.join(dir, 'hang.yaml'), 'HANG');
    assert.ok((await thread.decode(podYaml('warm'), ctx)).ok, 'a started thread (not a file: `sent` counts files)');
    src.start();
    const first = src.syncNow();
    // The source stats the directory and the file (real I/O) before it calls the decoder: step
    // fake time only once the call and its time limit exist.
    await within(hangInFlight, 'the hang sent to the decoder');
    assert.ok(await clock.runUntil(() => hangAnswered, { stepMs: 1_000, maxMs: 60_000 }), 'the time limit answered the hang');
    await within(first, 'the first full read');
    assert.deepEqual(errors, ['hang.yaml:ERR_MANIFEST_TOO_LARGE']);
    assert.equal(thread.replacedThreads, 1);
    await fs.writeFile(path.join(dir, 'web.yaml'), podYaml('web'));
    sent.length = 0;
    await within(src.syncNow(), 'a resync');
    src.noteChanged('hang.yaml');
    clock.step(1); // the debounce window (0 ms): a read of the named file alone
    await within(src.syncNow(), 'the read fs.watch asked for, then a resync');
    assert.deepEqual(sent, ['web.yaml'], 'only the new file was sent; the unchanged hang was not sent again');
    assert.equal(thread.replacedThreads, 1);
    assert.deepEqual(errors, ['hang.yaml:ERR_MANIFEST_TOO_LARGE'], 'reported once');
    await fs.writeFile(path.join(dir, 'hang.yaml'), podYaml('fixed'));
    await within(src.syncNow(), 'the resync after the fix');
    assert.deepEqual(sent, ['web.yaml', 'hang.yaml'], 'the changed file is read again');
    const names: string[] = [];
    for (let u = cfg.tryNext(); u !== undefined; u = cfg.tryNext()) names.push(...u.pods.map((p) => `${u.op}:${p.metadata?.name}`));
    assert.ok(names.includes('ADD:fixed-n1') && names.includes('ADD:web-n1'), `both pods were added: ${names.join(',')}`);
  } finally {
    // A failed assertion may leave a hang in flight: fake time cuts it off, so close() returns.
    await clock.runUntil(() => false, { stepMs: 1_000, maxMs: 20_000 });
    await src.close();
    await decoder.close();
    cfg.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('16: a decode that exceeds the heap limit kills only its thread; the next call gets a new one', async () => {
  const d = new ThreadManifestDecoder({ clock: realClock, logger: silentLogger, timeoutMs: 120_000, maxHeapMb: 32, threadFile: HOSTILE_THREAD });
  try {
    const r = await d.decode('OOM', ctx);
    assert.equal(r.ok ? 'ok' : r.error.code, 'ERR_MANIFEST_TOO_LARGE');
    assert.match(r.ok ? '' : r.error.message, /decoding failed: .*(ERR_WORKER_OUT_OF_MEMORY|exited)/);
    assert.equal(d.replacedThreads, 1);
    assert.ok((await d.decode(podYaml('web'), ctx)).ok);
  } finally {
    await d.close();
  }
});

test('16: a thread that never starts serving fails the oldest call after the start-up and call limits, not before', async () => {
  const clock = new FakeClock();
  const d = new ThreadManifestDecoder({ clock, logger: silentLogger, timeoutMs: 5_000, startupTimeoutMs: 20_000, threadFile: SILENT_THREAD });
  try {
    let settled = false;
    const call = d.decode(podYaml('web'), ctx).finally(() => (settled = true));
    assert.equal(await clock.runUntil(() => settled, { stepMs: 1_000, maxMs: 24_000 }), false, 'a slow start is not charged to the call');
    assert.ok(await clock.runUntil(() => settled, { stepMs: 1_000, maxMs: 10_000 }), 'the start-up limit answered the call');
    const r = await call;
    assert.match(r.ok ? '' : r.error.message, /^\/m\/web\.yaml: the decoder thread did not start and answer within 25000 ms/);
    assert.equal(d.replacedThreads, 1);
  } finally {
    await d.close();
  }
});
