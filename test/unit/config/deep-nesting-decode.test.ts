/**
 * Issue 27 item 4: a free-form field nested 10,000 levels (e.g. managedFields[].fieldsV1) used to
 * decode on the decoder thread into a reply the main thread could not deserialize; with no
 * 'messageerror' handler the call waited out the 10 s limit (and the files queued behind it with
 * it). Now nesting is bounded at decode (a clear error naming the file, the field and the depth),
 * and a reply that cannot be deserialized fails its call at once.
 *
 * The decoders run on a FakeClock that is never stepped: the 10 s time limit can never fire,
 * so only a prompt, specific answer passes (each wait is bounded by `within`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ThreadManifestDecoder } from '../../../src/main/config/manifest-decode-thread-client.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { MAX_DECODE_DEPTH } from '../../../src/shared/manifest/pod-schema-decode.js';
import { podYaml } from './bad-input-corpus.js';
import { within } from '../../harness/poll.js';

const HOSTILE_THREAD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'hostile-decode-thread.js');
const ctx = { source: 'file' as const, origin: '/m/deep.json', nodeName: 'n1', allowLists: false };
/** Bound for a call that must boot a decoder thread (module loading; slow on a loaded 2-core machine). */
const BOOT_MS = 20_000;

function nested(levels: number): string {
  return '{"f:a":'.repeat(levels) + '{}' + '}'.repeat(levels);
}

/** A pod whose managedFields[0].fieldsV1 is nested `levels` deep (JSON, the fast path). */
function deepManagedFields(levels: number): string {
  return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"deep","managedFields":[{"manager":"m","operation":"Apply","fieldsV1":${nested(levels)}}]},"spec":{"containers":[{"name":"app","image":"busybox"}]}}`;
}

test('4: a 10,000-level nested fieldsV1 is refused at decode on the product thread, naming the file, the field and the depth', async () => {
  const d = new ThreadManifestDecoder({ clock: new FakeClock(), logger: silentLogger });
  try {
    const r = await within(d.decode(deepManagedFields(10_000), ctx), 'the deep manifest is answered', BOOT_MS);
    assert.equal(r.ok, false);
    assert.ok(!r.ok);
    assert.equal(r.error.code, 'ERR_MANIFEST_INVALID');
    assert.match(r.error.message, /^\/m\/deep\.json: metadata\.managedFields\[0\]\.fieldsV1: /);
    assert.match(r.error.message, new RegExp(`nested deeper than ${MAX_DECODE_DEPTH} levels`));
    assert.equal(d.replacedThreads, 0, 'refused by the decode, not by a thread breach');
    // The same text as YAML (flow style) is refused too; and the thread still decodes the next file.
    const y = await within(d.decode(podYaml('deep', { meta: `  managedFields: [{manager: m, fieldsV1: ${nested(10_000)}}]` }), { ...ctx, origin: '/m/deep.yaml' }), 'the YAML one', 8_000);
    assert.equal(y.ok, false);
    assert.match(y.ok ? '' : y.error.message, /^\/m\/deep\.yaml: /);
    const ok = await within(d.decode(podYaml('web'), ctx), 'the next manifest', 8_000);
    assert.ok(ok.ok);
  } finally {
    await within(d.close(), 'the decoder closed', 5_000);
  }
});

test('4: nesting up to the bound still decodes (the bound counts levels from the document root)', async () => {
  const d = new ThreadManifestDecoder({ clock: new FakeClock(), logger: silentLogger });
  try {
    const r = await within(d.decode(deepManagedFields(MAX_DECODE_DEPTH - 10), ctx), 'a moderately nested manifest', BOOT_MS);
    assert.ok(r.ok, r.ok ? '' : r.error.message);
    const over = await within(d.decode(deepManagedFields(MAX_DECODE_DEPTH), ctx), 'just over the bound', 8_000);
    assert.equal(over.ok ? 'ok' : over.error.code, 'ERR_MANIFEST_INVALID');
  } finally {
    await within(d.close(), 'the decoder closed', 5_000);
  }
});

test('4: a reply the main thread cannot deserialize fails that call at once (messageerror), not after the time limit', async () => {
  const d = new ThreadManifestDecoder({ clock: new FakeClock(), logger: silentLogger, threadFile: HOSTILE_THREAD });
  try {
    // A first call boots the thread (seconds on a loaded machine), so the bound below is the answer's alone.
    assert.ok((await within(d.decode(podYaml('warm'), ctx), 'the thread booted', BOOT_MS)).ok);
    const badCall = d.decode('DEEP', ctx);
    const nextCall = d.decode(podYaml('web'), { ...ctx, origin: '/m/web.yaml' });
    const bad = await within(badCall, 'the undeserializable reply failing its call', 5_000);
    assert.equal(bad.ok ? 'ok' : bad.error.code, 'ERR_MANIFEST_TOO_LARGE');
    assert.match(bad.ok ? '' : bad.error.message, /^\/m\/deep\.json: .*could not be deserialized/);
    const next = await within(nextCall, 'the call queued behind it, on a fresh thread', BOOT_MS);
    assert.ok(next.ok, 'the call queued behind it is answered by a fresh thread');
  } finally {
    await within(d.close(), 'the decoder closed', 5_000);
  }
});

test('4: a reply that arrives but is not a decode result fails that call at once, not after the time limit', async () => {
  const d = new ThreadManifestDecoder({ clock: new FakeClock(), logger: silentLogger, threadFile: HOSTILE_THREAD });
  try {
    assert.ok((await within(d.decode(podYaml('warm'), ctx), 'the thread booted', BOOT_MS)).ok);
    const junk = await within(d.decode('JUNK', ctx), 'the unusable reply failing its call', 5_000);
    assert.equal(junk.ok ? 'ok' : junk.error.code, 'ERR_MANIFEST_TOO_LARGE');
    assert.match(junk.ok ? '' : junk.error.message, /^\/m\/deep\.json: the decoder thread's reply could not be used/);
    assert.ok((await within(d.decode(podYaml('web'), ctx), 'the next call, on a fresh thread', BOOT_MS)).ok);
  } finally {
    await within(d.close(), 'the decoder closed', 5_000);
  }
});
