import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSleepMs, resolveArgv, type Timeline } from '../../../src/simruntime/sim-shell.js';

function timeline(argv: string[]): Timeline {
  const r = resolveArgv(argv);
  assert.equal(r.kind, 'timeline', `${argv.join(' ')} should be interpreted`);
  return (r as { kind: 'timeline'; timeline: Timeline }).timeline;
}

test('sh -c runs ; && || and exit like busybox ash', () => {
  const t = timeline(['sh', '-c', 'echo hi; exit 3']);
  assert.deepEqual(t.outputs, [{ atMs: 0, stream: 'stdout', text: 'hi\n' }]);
  assert.deepEqual(t.exit, { atMs: 0, code: 3 });
  assert.deepEqual(timeline(['sh', '-c', 'false && echo a || echo b']).outputs.map((o) => o.text), ['b\n']);
  assert.deepEqual(timeline(['sh', '-c', 'true || echo a; echo c']).outputs.map((o) => o.text), ['c\n']);
  assert.deepEqual(timeline(['sh', '-c', 'false']).exit, { atMs: 0, code: 1 });
  assert.deepEqual(timeline(['sh', '-c', 'false; exit']).exit, { atMs: 0, code: 1 });
  assert.deepEqual(timeline(['/bin/sh', '-c', 'exit 300']).exit, { atMs: 0, code: 44 });
});

test('sleep advances time; outputs carry their offsets; >&2 goes to stderr', () => {
  const t = timeline(['sh', '-c', 'echo start; sleep 1.5; echo "two words" >&2; sleep 2; exit 0']);
  assert.deepEqual(t.outputs, [
    { atMs: 0, stream: 'stdout', text: 'start\n' },
    { atMs: 1500, stream: 'stderr', text: 'two words\n' },
  ]);
  assert.deepEqual(t.exit, { atMs: 3500, code: 0 });
  assert.deepEqual(timeline(['sleep', '5']).exit, { atMs: 5000, code: 0 });
  assert.equal(timeline(['sleep', 'infinity']).exit, null);
  assert.equal(timeline(['sh', '-c', 'echo a; sleep inf; echo never']).exit, null);
  assert.equal(timeline(['sh', '-c', 'echo a; sleep inf; echo never']).outputs.length, 1);
  assert.equal(parseSleepMs('2m'), 120_000);
  assert.equal(parseSleepMs('x'), null);
});

test('unknown commands inside sh are "not found" (127); bad sleep is 1', () => {
  const t = timeline(['sh', '-c', 'cat /etc/hostname']);
  assert.deepEqual(t.outputs, [{ atMs: 0, stream: 'stderr', text: 'sh: cat: not found\n' }]);
  assert.equal(t.exit?.code, 127);
  assert.equal(timeline(['sleep', 'abc']).exit?.code, 1);
  assert.equal(timeline(['sh', '-c', 'echo "unterminated']).exit?.code, 2);
  assert.equal(timeline(['sh', '-c', 'echo a | wc']).exit?.code, 2);
});

test('bare sh exits 0 at once (empty stdin); busybox dispatches applets; trap "" TERM is recorded', () => {
  assert.deepEqual(timeline(['sh']).exit, { atMs: 0, code: 0 });
  assert.deepEqual(timeline(['busybox', 'echo', 'x']).outputs.map((o) => o.text), ['x\n']);
  const t = timeline(['sh', '-c', 'sleep 1; trap "" TERM; sleep 100']);
  assert.equal(t.ignoreTermFromMs, 1000);
  assert.equal(timeline(['sh', '-c', 'sleep 100']).ignoreTermFromMs, null);
});

test('argv[0] resolution: applets exist, builtins and missing paths do not, other programs are opaque', () => {
  assert.deepEqual(timeline(['echo', 'hi']).outputs.map((o) => o.text), ['hi\n']);
  assert.deepEqual(timeline(['/bin/true']).exit, { atMs: 0, code: 0 });
  assert.deepEqual(resolveArgv(['exit', '1']), { kind: 'not-found', executable: 'exit' });
  assert.deepEqual(resolveArgv(['/nonexistent']), { kind: 'not-found', executable: '/nonexistent' });
  assert.deepEqual(resolveArgv(['/opt/sleep', '1']), { kind: 'not-found', executable: '/opt/sleep' });
  assert.deepEqual(resolveArgv(['nginx', '-g', 'daemon off;']), { kind: 'opaque' });
  assert.equal(resolveArgv(['/bin/sleep', '1']).kind, 'timeline');
});

test('$NAME and ${NAME} expand from env unquoted and in double quotes, not in single quotes', () => {
  const r = resolveArgv(['sh', '-c', 'echo -n "$GREETING" ${WHO}; echo \'$GREETING\' $UNSET.'], { GREETING: 'hi there', WHO: 'you' });
  assert.equal(r.kind, 'timeline');
  const t = (r as { kind: 'timeline'; timeline: Timeline }).timeline;
  assert.deepEqual(t.outputs.map((o) => o.text), ['hi there you', '$GREETING .\n']);
});
