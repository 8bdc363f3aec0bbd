/**
 * No tracked file matches a .gitignore pattern (issue 10 item 21 found `test/run-all.ts`, the
 * test driver, listed there: a fresh checkout would still have it, but a new file of the same
 * name, or a rename, would silently drop out of commits).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

test('git ignores no tracked file', () => {
  const r = spawnSync('git', ['-C', repoRoot, 'ls-files', '--cached', '--ignored', '--exclude-standard'], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, `git ls-files failed: ${r.error?.message ?? r.stderr}`);
  assert.deepEqual(r.stdout.split('\n').filter(Boolean), []);
});
