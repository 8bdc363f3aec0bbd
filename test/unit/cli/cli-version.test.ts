/**
 * `shardlet --version` (and `-V`, `version`) prints package.json's version and exits 0, through
 * the real entry (dist/src/cli/main.js) as a user runs it; the usage text names it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const mainJs = path.resolve(here, '../../../src/cli/main.js');
const pkg = JSON.parse(fs.readFileSync(path.resolve(here, '../../../../package.json'), 'utf8')) as { version: string };

describe('shardlet --version', () => {
  for (const flag of ['--version', '-V', 'version']) {
    it(`${flag} prints "shardlet ${pkg.version}" and exits 0`, () => {
      const r = spawnSync(process.execPath, [mainJs, flag], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, `shardlet ${pkg.version}\n`);
      assert.equal(r.stderr, '');
    });
  }

  it('the usage text lists it', () => {
    const r = spawnSync(process.execPath, [mainJs, '--help'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0);
    assert.match(r.stdout, /shardlet --version/);
  });
});
