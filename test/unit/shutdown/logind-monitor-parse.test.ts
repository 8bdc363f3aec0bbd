/**
 * The busctl monitor parser (logind-monitor-parse.ts): the PrepareForShutdown lines busctl 252
 * printed on a private dbus-daemon parse to true/false; anything else is no event; fuzzed
 * (fast-check) with arbitrary text, arbitrary JSON, mutated signals and arbitrary chunkings
 * of the stream: it never throws, only a well-formed signal is an event, and the splitter
 * yields the same lines whatever the chunk boundaries and never a line past the cap.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LineSplitter, MONITOR_LINE_MAX, parsePrepareForShutdown } from '../../../src/main/shutdown/logind-monitor-parse.js';

// Verbatim from `busctl --address=unix:path=... monitor --json=short` (systemd 252) with dbus-send.
const TRUE_LINE = '{"type":"signal","endian":"l","flags":1,"version":1,"cookie":2,"timestamp-realtime":1795820061729119,"sender":":1.1","path":"/org/freedesktop/login1","interface":"org.freedesktop.login1.Manager","member":"PrepareForShutdown","payload":{"type":"b","data":[true]}}';
const FALSE_LINE = TRUE_LINE.replace('[true]', '[false]');

test('busctl\'s PrepareForShutdown lines parse; other messages and malformed lines are no event', () => {
  assert.equal(parsePrepareForShutdown(TRUE_LINE), true);
  assert.equal(parsePrepareForShutdown(FALSE_LINE), false);
  for (const bad of [
    '', 'Monitoring bus message stream.', 'null', '[]', '"x"', '{}',
    TRUE_LINE.replace('PrepareForShutdown', 'PrepareForSleep'),
    TRUE_LINE.replace('"signal"', '"method_call"'),
    TRUE_LINE.replace('login1.Manager', 'login1.Session'),
    TRUE_LINE.replace('"path":"/org/freedesktop/login1"', '"path":"/x"'),
    TRUE_LINE.replace('[true]', '["true"]'), TRUE_LINE.replace('[true]', '[true,false]'), TRUE_LINE.replace('[true]', '[]'),
    TRUE_LINE.replace('"type":"b"', '"type":"s"'), TRUE_LINE.replace('{"type":"b","data":[true]}', 'null'),
    TRUE_LINE.slice(0, -1),
  ]) assert.equal(parsePrepareForShutdown(bad), undefined, bad.slice(0, 80));
  assert.equal(parsePrepareForShutdown(TRUE_LINE.replace('"sender"', `"pad":"${'x'.repeat(MONITOR_LINE_MAX)}","sender"`)), undefined, 'overlong');
});

test('fuzz: arbitrary text and JSON never throw, and are an event only when they are the signal', () => {
  fc.assert(fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.json()), (s) => {
    const r = parsePrepareForShutdown(s);
    if (r !== undefined) {
      const m = JSON.parse(s) as { member: string; payload: { data: unknown[] } };
      assert.equal(m.member, 'PrepareForShutdown');
      assert.equal(m.payload.data[0], r);
    }
  }), { numRuns: 2000 });
  // Mutations of a real signal: any field changed to an arbitrary JSON value.
  const base = JSON.parse(TRUE_LINE) as Record<string, unknown>;
  fc.assert(fc.property(fc.constantFrom('type', 'path', 'interface', 'member', 'payload'), fc.jsonValue(), (key, value) => {
    const r = parsePrepareForShutdown(JSON.stringify({ ...base, [key]: value }));
    const same = JSON.stringify(value) === JSON.stringify(base[key]);
    assert.equal(r, same ? true : r);
    if (!same && key !== 'payload') assert.equal(r, undefined);
  }), { numRuns: 1000 });
});

test('fuzz: the splitter gives the same lines for any chunking, dropping only lines past the cap', () => {
  const line = fc.oneof(fc.string({ maxLength: 50 }).map((s) => s.replace(/\n/g, '')), fc.constant(TRUE_LINE), fc.constant('y'.repeat(MONITOR_LINE_MAX + 3)));
  fc.assert(fc.property(fc.array(line, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 20 }), (lines, cuts) => {
    const text = lines.map((l) => `${l}\n`).join('');
    const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
    const sp = new LineSplitter();
    const got: string[] = [];
    let at = 0;
    for (const p of [...points, text.length]) {
      got.push(...sp.push(text.slice(at, p)));
      at = p;
    }
    assert.deepEqual(got, lines.filter((l) => l.length <= MONITOR_LINE_MAX));
  }), { numRuns: 100 });
});
