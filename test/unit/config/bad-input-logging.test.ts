/**
 * Item 20: log amplification. Values from input are shortened where errors are built (field
 * errors, see bad-input-decode) and, as a backstop, in every log record; `/pods` on a
 * non-loopback address is warned about at start (Agent.start uses isLoopbackAddress).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, MAX_LOG_FIELD_CHARS } from '../../../src/shared/logging/logger.js';
import { boundedJson, truncateText, MAX_SHOWN_CHARS } from '../../../src/shared/logging/bounded-text.js';
import { isLoopbackAddress } from '../../../src/main/agent/host-addresses.js';
import { ConfigError } from '../../../src/shared/manifest/config-errors.js';
import { fieldErr } from '../../../src/shared/manifest/field-error.js';

test('20: a log record with a 10 MiB field or message is bounded', () => {
  const lines: string[] = [];
  const log = createLogger({ sink: (l) => lines.push(l) }).with({ origin: 'o'.repeat(10 * 1024 * 1024) });
  log.error('m'.repeat(10 * 1024 * 1024), { error: 'e'.repeat(10 * 1024 * 1024), n: 5 });
  assert.equal(lines.length, 1);
  assert.ok((lines[0] ?? '').length < 4 * MAX_LOG_FIELD_CHARS, `line of ${(lines[0] ?? '').length} characters`);
  const rec = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
  assert.match(String(rec['error']), /^e+\.\.\.\(\d+ more characters\)$/);
  assert.equal(rec['n'], 5);
});

test('20: shortening never splits a surrogate pair, and bounded rendering stops on huge or aliased structures', () => {
  const s = `${'a'.repeat(MAX_SHOWN_CHARS - 1)}😀tail`;
  assert.ok(!truncateText(s).includes('\ud83d...'), 'no lone high surrogate');
  const shared: unknown[] = [];
  let cur: unknown[] = shared;
  for (let i = 0; i < 30; i++) {
    const next: unknown[] = [];
    cur.push(next, next); // 2^30 paths when expanded
    cur = next;
  }
  assert.ok(boundedJson(shared).length <= MAX_SHOWN_CHARS + 3);
  assert.ok(boundedJson(new Array(2_000_000).fill('x')).length <= MAX_SHOWN_CHARS + 3);
  const e = ConfigError.invalid('/m/a.yaml', [fieldErr.invalid('metadata.name', 'n'.repeat(1e6), 'too long')]);
  assert.ok(e.message.length < 1024);
  assert.ok(e.toTransfer().fieldErrors.every((f) => String(f.value).length < 1024), 'values crossing a thread are shortened too');
});

test('20: loopback addresses are recognised (anything else gets the /pods warning)', () => {
  for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', 'localhost']) assert.equal(isLoopbackAddress(a), true, a);
  for (const a of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.10', '::ffff:10.0.0.1']) assert.equal(isLoopbackAddress(a), false, a);
});
