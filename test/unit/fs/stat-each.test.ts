import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { statEach } from '../../../src/shared/fs/stat-each.js';

test('statEach: one outcome per path, in the order given, whatever order the stats finish in', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stat-each-'));
  try {
    // Sizes tell the files apart; every fifth path is missing, one is a directory.
    const paths: string[] = [];
    for (let i = 0; i < 200; i++) {
      const p = path.join(dir, `f${i}`);
      if (i % 5 !== 0) fs.writeFileSync(p, 'x'.repeat(i));
      paths.push(p);
    }
    paths.push(dir);
    for (const concurrency of [1, 3, 16, 500]) {
      const out = await statEach(paths, concurrency);
      assert.equal(out.length, paths.length);
      for (let i = 0; i < 200; i++) {
        const o = out[i]!;
        if (i % 5 === 0) {
          assert.ok(o instanceof Error, `path ${i} is missing`);
          assert.equal(o.code, 'ENOENT');
        } else {
          assert.ok(!(o instanceof Error), `path ${i}: ${String(o)}`);
          assert.equal(o.size, i, `path ${i} at concurrency ${concurrency}`);
        }
      }
      const last = out[200]!;
      assert.ok(!(last instanceof Error) && last.isDirectory());
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('statEach: no paths resolves to none; a concurrency that is not a positive integer is refused', async () => {
  assert.deepEqual(await statEach([], 4), []);
  for (const c of [0, -1, 1.5, Number.NaN]) assert.throws(() => statEach(['/'], c), RangeError);
});
