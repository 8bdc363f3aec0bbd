import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { parseLogOptions, type LogOptions } from '../../../src/main/server/container-logs-options.js';
import { MAX_LINE_BYTES, parseCriLine, readContainerLog } from '../../../src/main/server/container-logs-reader.js';

/** A FakeClock that tells the test when the reader starts waiting (the reader's only wait). */
class SignallingClock extends FakeClock {
  #waiters: Array<() => void> = [];
  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    const p = super.sleep(ms, signal);
    for (const w of this.#waiters.splice(0)) w();
    return p;
  }
  nextSleep(): Promise<void> {
    return new Promise((r) => this.#waiters.push(r));
  }
}

const BASE = Date.parse('2026-01-01T00:00:00Z');
function cri(ms: number, text: string, stream = 'stdout', tag = 'F'): string {
  return `${new Date(ms).toISOString().replace('.000Z', '.123456789Z')} ${stream} ${tag} ${text}\n`;
}

function opts(over: Partial<LogOptions> = {}): LogOptions {
  return { follow: false, previous: false, timestamps: false, tailLines: undefined, limitBytes: undefined, sinceMs: undefined, ...over };
}

/** Every log file of this test lives under one directory, removed when the tests are done. */
const BASE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'logs-reader-'));
after(() => fs.rmSync(BASE_DIR, { recursive: true, force: true }));

function tmpLog(content: string): string {
  const dir = fs.mkdtempSync(path.join(BASE_DIR, 'log-'));
  const file = path.join(dir, '0.log');
  fs.writeFileSync(file, content);
  return file;
}

async function read(file: string, o: LogOptions, clock = new FakeClock(), running = false): Promise<string> {
  const out: Buffer[] = [];
  await readContainerLog({ path: file, options: o, clock, signal: new AbortController().signal, stillRunning: async () => running, sink: { write: async (b) => (out.push(Buffer.from(b)), true) } });
  return Buffer.concat(out).toString();
}

const FILE = cri(BASE, 'one') + cri(BASE + 1000, 'err', 'stderr') + cri(BASE + 2000, 'par', 'stdout', 'P') + cri(BASE + 2000, 'tial') + cri(BASE + 3000, 'four');

test('decodes CRI lines: partial lines joined, streams merged in file order; malformed lines skipped', async () => {
  const f = tmpLog(FILE + 'garbage line\n' + cri(BASE + 4000, 'five'));
  assert.equal(await read(f, opts()), 'one\nerr\npartial\nfour\nfive\n');
  assert.equal(parseCriLine(Buffer.from('2026-01-01T00:00:00Z stdout X text')), undefined);
  assert.equal(parseCriLine(Buffer.from('notatime stdout F text')), undefined);
});

test('tailLines counts file lines from the end; 0 gives nothing; more than the file gives all', async () => {
  const f = tmpLog(FILE);
  assert.equal(await read(f, opts({ tailLines: 2 })), 'tial\nfour\n');
  assert.equal(await read(f, opts({ tailLines: 0 })), '');
  assert.equal(await read(f, opts({ tailLines: 100 })), 'one\nerr\npartial\nfour\n');
});

test('tail over a file much larger than the read block stays correct', async () => {
  let content = '';
  for (let i = 0; i < 20_000; i++) content += cri(BASE + i, `line ${i}`);
  const f = tmpLog(content);
  assert.equal(await read(f, opts({ tailLines: 3 })), 'line 19997\nline 19998\nline 19999\n');
});

test('timestamps prefix every chunk with the runtime timestamp; sinceMs drops older lines; limitBytes cuts output', async () => {
  const f = tmpLog(FILE);
  assert.equal(await read(f, opts({ timestamps: true, tailLines: 1 })), '2026-01-01T00:00:03.123456789Z four\n');
  assert.equal(await read(f, opts({ sinceMs: BASE + 2500 })), 'four\n');
  assert.equal(await read(f, opts({ limitBytes: 6 })), 'one\ner');
});

test('a run without newline longer than the line bound is cut, not buffered whole', async () => {
  const f = tmpLog(cri(BASE, 'a'.repeat(MAX_LINE_BYTES * 3)) + cri(BASE, 'after'));
  const out = await read(f, opts());
  assert.ok(out.endsWith('after\n'));
  assert.ok(out.length < MAX_LINE_BYTES * 3, 'the overlong line was cut');
});

test('follow: new lines arrive, rotation is followed (old file finished, new one from its start), the stream ends after the container stops', async () => {
  const f = tmpLog(cri(BASE, 'a'));
  const clock = new SignallingClock();
  let running = true;
  const got: string[] = [];
  const ac = new AbortController();
  let sleeping = clock.nextSleep();
  const done = readContainerLog({
    path: f, options: opts({ follow: true }), clock, signal: ac.signal, stillRunning: async () => running, pollMs: 100, runningCheckMs: 1000,
    sink: { write: async (b) => (got.push(b.toString()), true) },
  });
  await sleeping;
  assert.deepEqual(got, ['a\n']);
  fs.appendFileSync(f, cri(BASE, 'b'));
  sleeping = clock.nextSleep();
  clock.step(100);
  await sleeping;
  assert.deepEqual(got, ['a\n', 'b\n']);
  // Rotation: one more line lands in the old file after the rename, then the new file starts.
  fs.renameSync(f, `${f}.20260101-000000`);
  fs.appendFileSync(`${f}.20260101-000000`, cri(BASE, 'c'));
  fs.writeFileSync(f, cri(BASE, 'd'));
  sleeping = clock.nextSleep();
  clock.step(100);
  await sleeping;
  assert.deepEqual(got, ['a\n', 'b\n', 'c\n', 'd\n']);
  running = false;
  fs.appendFileSync(f, cri(BASE, 'e'));
  clock.step(1000);
  await done;
  assert.deepEqual(got, ['a\n', 'b\n', 'c\n', 'd\n', 'e\n'], 'the last line before the exit is delivered');
});

test('follow ends when the client goes away', async () => {
  const f = tmpLog(cri(BASE, 'a'));
  const clock = new SignallingClock();
  const ac = new AbortController();
  const sleeping = clock.nextSleep();
  const done = readContainerLog({ path: f, options: opts({ follow: true }), clock, signal: ac.signal, stillRunning: async () => true, sink: { write: async () => true } });
  await sleeping;
  ac.abort();
  await done;
});

test('query decoding as the kubelet: bad values 400, invalid ones 422, sinceSeconds relative to now', () => {
  const q = (s: string) => parseLogOptions(new URLSearchParams(s), BASE);
  assert.deepEqual(q('follow=true&tailLines=5&timestamps=1&previous=false&limitBytes=10'), { ok: true, options: { follow: true, previous: false, timestamps: true, tailLines: 5, limitBytes: 10, sinceMs: undefined } });
  assert.equal((q('sinceSeconds=10') as { options: LogOptions }).options.sinceMs, BASE - 10_000);
  assert.equal((q('sinceTime=2026-01-01T00:00:05Z') as { options: LogOptions }).options.sinceMs, BASE + 5000);
  assert.equal((q('tail=all') as { options: LogOptions }).options.tailLines, undefined);
  assert.equal((q('tail=3') as { options: LogOptions }).options.tailLines, 3);
  for (const bad of ['follow=maybe', 'tailLines=x', 'tailLines=99999999999999999999', 'sinceTime=yesterday', 'limitBytes=1e3']) assert.deepEqual(q(bad), { ok: false, status: 400, message: '{"message": "Unable to decode query."}' }, bad);
  for (const inv of ['tailLines=-1', 'limitBytes=0', 'sinceSeconds=0', 'sinceSeconds=5&sinceTime=2026-01-01T00:00:05Z']) assert.equal((q(inv) as { status: number }).status, 422, inv);
});
