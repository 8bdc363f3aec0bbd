/**
 * The layering rule of STYLE.md ("Which way imports go"), checked on the compiled tree: nothing
 * under dist/src/shared or dist/src/main imports a module under dist/workers/ (what runs on a
 * worker thread), except the pool entry wiring that builds the inline-mode host; and the shared
 * layer never imports the main thread's modules. Naming a worker script as a path string (the
 * Piscina/Worker entry file) is not an import and is allowed.
 *
 * Works on the emitted JavaScript (what Node actually loads): every static `import … from`,
 * `export … from`, side-effect `import '…'` and dynamic `import('…')` with a literal specifier.
 * Type-only imports are erased by tsc, so the same rule is also checked on the TypeScript
 * sources (the repository root is dist/'s parent).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const distRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const repoRoot = path.resolve(distRoot, '..');

/**
 * The files allowed to import from workers/: --workers 0 builds the pod-worker host inline, and
 * hollow mode's nodes run the GenericPleg inline (pleg-inline.ts).
 */
const ALLOWED = new Set(['src/main/agent/agent-dispatch', 'src/main/pleg/pleg-inline']);

const SPECIFIER = /(?:\bimport\s*(?:type\s+)?(?:[\w*${}\s,]+?\s*from\s*)?|\bexport\s+(?:type\s+)?(?:\*|\{[^}]*\})\s*from\s*|\bimport\s*\(\s*)['"]([^'"]+)['"]/g;

function walk(dir: string, ext: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p, ext));
    else if (e.name.endsWith(ext) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Relative specifiers of one file, resolved to a repo-relative module id without extension. */
export function importsOf(file: string, root: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = m[1]!;
    if (!spec.startsWith('.')) continue;
    out.push(path.relative(root, path.resolve(path.dirname(file), spec)).replace(/\.(js|ts)$/, '').split(path.sep).join('/'));
  }
  return out;
}

interface Violation { from: string; to: string }

function violations(root: string, ext: string): Violation[] {
  const bad: Violation[] = [];
  for (const layer of ['src/shared', 'src/main']) {
    for (const file of walk(path.join(root, layer), ext)) {
      const from = path.relative(root, file).replace(/\.(js|ts)$/, '').split(path.sep).join('/');
      for (const to of importsOf(file, root)) {
        const intoWorkers = to.startsWith('workers/');
        const sharedIntoMain = layer === 'src/shared' && to.startsWith('src/main/');
        if ((intoWorkers && !ALLOWED.has(from)) || sharedIntoMain) bad.push({ from, to });
      }
    }
  }
  return bad;
}

test('compiled src/shared and src/main import nothing from workers/ (except the inline host wiring), shared nothing from main', () => {
  const bad = violations(distRoot, '.js');
  assert.deepEqual(bad, [], `layering violations:\n${bad.map((v) => `  ${v.from} → ${v.to}`).join('\n')}`);
});

test('the sources obey the same rule, type-only imports included (tsc erases those from the output)', () => {
  assert.ok(existsSync(path.join(repoRoot, 'src/shared')), `sources expected at ${repoRoot}/src`);
  const bad = violations(repoRoot, '.ts');
  assert.deepEqual(bad, [], `layering violations:\n${bad.map((v) => `  ${v.from} → ${v.to}`).join('\n')}`);
});

test('the scanner sees the allowed wiring import (so an empty result is not a blind scanner)', () => {
  for (const [root, ext] of [[distRoot, '.js'], [repoRoot, '.ts']] as const) {
    const wiring = importsOf(path.join(root, `src/main/agent/agent-dispatch${ext}`), root);
    assert.ok(wiring.includes('workers/pod-worker-factory'), `${ext}: ${wiring.join(', ')}`);
  }
  // and a type-only import in the sources
  const ts = importsOf(path.join(repoRoot, 'src/main/dispatch/inline-dispatcher.ts'), repoRoot);
  assert.ok(ts.includes('src/shared/protocol/pod-worker-protocol'), ts.join(', '));
});
