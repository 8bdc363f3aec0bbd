/**
 * The main thread's heap at startup (issue 15): @kubernetes/client-node's package root and its
 * KubeConfig module each pull in most of the client (~25 MiB of heap per isolate that loads
 * them; the generated models alone are ~8 MiB). Agent code may import their types anywhere,
 * the models where it decodes pods, and KubeConfig only lazily (cluster mode,
 * https-transport.ts) — never the root or config.js as a static value import.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const HEAVY = /^import\s+(?!type\b)[^;]*?from\s+'@kubernetes\/client-node(?:\/dist\/(?:index|config)\.js)?';/gm;

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

test('no agent module statically imports the whole of @kubernetes/client-node or its KubeConfig', () => {
  const files = [...sources(path.join(REPO, 'src')), ...sources(path.join(REPO, 'workers'))];
  assert.ok(files.length > 50, `found ${files.length} source files under ${REPO}`);
  const offenders = files.flatMap((f) => [...fs.readFileSync(f, 'utf8').matchAll(HEAVY)].map((m) => `${path.relative(REPO, f)}: ${m[0]}`));
  assert.deepEqual(offenders, []);
});
