/**
 * Bad input through the sources as the agent wires them: the file and URL sources decoding on
 * the ThreadManifestDecoder (issue 10, items 15–17 and 19). Hostile files sit beside a valid one;
 * the valid pod is delivered untouched, every hostile one is reported naming its file (or URL)
 * and field, and nothing stalls.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createFileSource } from '../../../src/main/config/source-file.js';
import { createHttpSource } from '../../../src/main/config/source-http.js';
import { PodConfig } from '../../../src/main/config/pod-config.js';
import type { PodUpdate } from '../../../src/shared/manifest/pod-update.js';
import type { ConfigError } from '../../../src/shared/manifest/config-errors.js';
import { ThreadManifestDecoder } from '../../../src/main/config/manifest-decode-thread-client.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { createLogger, silentLogger } from '../../../src/shared/logging/logger.js';
import { aliasBomb, aliasBombFreeForm, CLIMBING_UID, podYaml, stringAsList } from './bad-input-corpus.js';

const summary = (u: PodUpdate | undefined): string => `${u?.op}:${u?.pods.map((p) => p.metadata?.name).join(',')}`;

async function tmpDir(): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), 'shardlet-badinput-'));
}

test('15/16/17: hostile files beside a valid one: the valid pod is added, each hostile file is reported by file and field', async () => {
  const dir = await tmpDir();
  const clock = new FakeClock();
  const decoder = new ThreadManifestDecoder({ clock, logger: silentLogger });
  const cfg = new PodConfig({ clock, logger: silentLogger });
  const errors: ConfigError[] = [];
  const src = createFileSource({ path: dir, nodeName: 'n1', sink: cfg.channel('file'), clock, logger: silentLogger, onError: (e) => errors.push(e), watch: false, decoder });
  try {
    await fs.writeFile(path.join(dir, 'web.yaml'), podYaml('web'));
    await fs.writeFile(path.join(dir, 'climb.yaml'), podYaml('climb', { meta: `  uid: ${CLIMBING_UID}` }));
    await fs.writeFile(path.join(dir, 'bomb.yaml'), aliasBomb());
    await fs.writeFile(path.join(dir, 'anybomb.yaml'), aliasBombFreeForm());
    await fs.writeFile(path.join(dir, 'strlist.yaml'), stringAsList());
    await fs.writeFile(path.join(dir, 'env.yaml'), podYaml('env', { container: '    env: [{name: 1=bad, value: x}]' }));
    await src.syncNow();
    const add = await cfg.next();
    assert.equal(summary(add), 'ADD:web-n1');
    assert.equal(cfg.queued, 0, 'nothing but the valid pod');
    const byFile = new Map(errors.map((e) => [path.basename(e.origin), e]));
    assert.deepEqual([...byFile.keys()].sort(), ['anybomb.yaml', 'bomb.yaml', 'climb.yaml', 'env.yaml', 'strlist.yaml']);
    assert.ok(byFile.get('climb.yaml')?.message.startsWith(`${path.join(dir, 'climb.yaml')}: metadata.uid: Invalid value: "${CLIMBING_UID}"`));
    assert.equal(byFile.get('anybomb.yaml')?.code, 'ERR_MANIFEST_TOO_LARGE');
    assert.equal(byFile.get('bomb.yaml')?.code, 'ERR_MANIFEST_INVALID');
    assert.match(byFile.get('strlist.yaml')?.message ?? '', /spec\.containers\[0\]\.args: Invalid value: .*must be a list, not a string$/);
    assert.match(byFile.get('env.yaml')?.message ?? '', /spec\.containers\[0\]\.env\[0\]\.name: Invalid value: "1=bad"/);
    for (const e of errors) assert.ok(e.message.length < 4096, `${e.origin}: message of ${e.message.length} characters`);
  } finally {
    await src.close();
    await decoder.close();
    cfg.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('15: a climbing uid from --manifest-url is rejected naming the URL and field; a valid body is then used', async () => {
  let body = JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: [{ metadata: { name: 'ok' }, spec: { containers: [{ name: 'c', image: 'x' }] } }, { metadata: { name: 'evil', uid: CLIMBING_UID }, spec: { containers: [{ name: 'c', image: 'x' }] } }] });
  const srv = http.createServer((_req, res) => res.end(body));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/pods`;
  const clock = new FakeClock();
  const decoder = new ThreadManifestDecoder({ clock, logger: silentLogger });
  const cfg = new PodConfig({ clock, logger: silentLogger });
  const errors: ConfigError[] = [];
  const src = createHttpSource({ url, nodeName: 'n1', sink: cfg.channel('http'), clock, logger: silentLogger, onError: (e) => errors.push(e), decoder });
  try {
    await src.pollNow();
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.code, 'ERR_MANIFEST_INVALID');
    assert.ok(errors[0]?.message.startsWith(`${url}: items[1].metadata.uid: Invalid value: "${CLIMBING_UID}"`), errors[0]?.message);
    assert.equal(cfg.queued, 0, 'a list with a bad pod delivers nothing');
    body = aliasBombFreeForm();
    await src.pollNow();
    assert.equal(errors[1]?.code, 'ERR_MANIFEST_TOO_LARGE');
    body = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ok' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    await src.pollNow();
    assert.equal(summary(await cfg.next()), 'ADD:ok-n1');
  } finally {
    await src.close();
    await decoder.close();
    cfg.close();
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  }
});

test('19: a non-atomic rewrite (truncate, then write) does not kill the pod; an empty file that stays empty does, after the grace', async () => {
  const dir = await tmpDir();
  const clock = new FakeClock();
  const lines: string[] = [];
  const logger = createLogger({ sink: (l) => lines.push(l) });
  const cfg = new PodConfig({ clock, logger: silentLogger });
  const src = createFileSource({ path: dir, nodeName: 'n1', sink: cfg.channel('file'), clock, logger, watch: false, emptyGraceMs: 5_000 });
  const file = path.join(dir, 'web.yaml');
  try {
    await fs.writeFile(file, podYaml('web'));
    await src.syncNow();
    const add = await cfg.next();
    assert.equal(summary(add), 'ADD:web-n1');
    const uid = add?.pods[0]?.metadata?.uid;

    await fs.writeFile(file, ''); // truncated: the writer has not written yet
    await src.syncNow();
    assert.equal(cfg.queued, 0, 'an empty read removes nothing');
    assert.ok(lines.some((l) => l.includes('Manifest file is empty; keeping its pods') && l.includes(file)));
    assert.deepEqual(cfg.mergedState().map((p) => p.metadata?.uid), [uid]);

    await fs.writeFile(file, podYaml('web')); // the same content written back within the grace
    await src.syncNow();
    assert.equal(cfg.queued, 0, 'same pod, same uid: nothing to do');
    clock.step(10_000); // the stale recheck finds the file full again
    await src.syncNow();
    assert.equal(cfg.queued, 0);
    assert.deepEqual(cfg.mergedState().map((p) => p.metadata?.uid), [uid]);

    await fs.writeFile(file, '\n');
    await src.syncNow();
    assert.equal(cfg.queued, 0);
    clock.step(4_999);
    await src.syncNow();
    assert.equal(cfg.queued, 0, 'still within the grace');
    clock.step(1); // the recheck timer: still empty → the pods go
    await src.syncNow();
    assert.equal(summary(await cfg.next()), 'REMOVE:web-n1');
    assert.ok(lines.some((l) => l.includes('Manifest file contains no pods') && l.includes(file)));
  } finally {
    await src.close();
    cfg.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('17: an empty file that never had pods is noted once in the log, not silently ignored', async () => {
  const dir = await tmpDir();
  const clock = new FakeClock();
  const lines: string[] = [];
  const cfg = new PodConfig({ clock, logger: silentLogger });
  const src = createFileSource({ path: dir, nodeName: 'n1', sink: cfg.channel('file'), clock, logger: createLogger({ sink: (l) => lines.push(l) }), watch: false });
  try {
    await fs.writeFile(path.join(dir, 'empty.yaml'), '# nothing yet\n');
    await src.syncNow();
    await src.syncNow();
    const notes = lines.filter((l) => l.includes('Manifest file contains no pods'));
    assert.equal(notes.length, 1, lines.join('\n'));
    assert.ok(notes[0]?.includes(path.join(dir, 'empty.yaml')));
  } finally {
    await src.close();
    cfg.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});
