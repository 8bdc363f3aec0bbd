/**
 * Hostile manifests of the bad-input suite (issue 10, items 15–20), one builder per defect class,
 * shared by the unit tests, the fuzz test and the agent-level test.
 */

/** A valid pod manifest; `extra` lines go under the container, `meta` under metadata, `spec` under spec. */
export function podYaml(name: string, o: { meta?: string; spec?: string; container?: string } = {}): string {
  return [
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    `  name: ${name}`,
    ...(o.meta ? [o.meta] : []),
    'spec:',
    ...(o.spec ? [o.spec] : []),
    '  containers:',
    '  - name: app',
    '    image: busybox',
    ...(o.container ? [o.container] : []),
    '',
  ].join('\n');
}

/**
 * A "billion laughs" YAML document: nine levels of nine aliases each (9^9 ≈ 387 million strings)
 * under an unknown field and in `args`. About 540 bytes; js-yaml parses it in microseconds because
 * aliases stay references, and anything that walks or copies it expands it.
 */
export function aliasBomb(name = 'bomb'): string {
  const lines = ['  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < 9; i++) {
    const cur = String.fromCharCode(97 + i);
    const prev = String.fromCharCode(96 + i);
    lines.push(`  ${cur}: &${cur} [${Array.from({ length: 9 }, () => `*${prev}`).join(',')}]`);
  }
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  annotations: {x: y}\nlol:\n${lines.join('\n')}\nspec:\n  containers:\n  - name: app\n    image: busybox\n    env: [{name: A, value: x}]\n    args: *i\n`;
}

/** A bomb in the one free-form field of a Pod (managedFields[].fieldsV1): only the budget stops it. */
export function aliasBombFreeForm(name = 'anybomb'): string {
  const lines = ['  a: &a {k0: lol, k1: lol, k2: lol, k3: lol, k4: lol, k5: lol, k6: lol, k7: lol, k8: lol}'];
  for (let i = 1; i < 9; i++) {
    const cur = String.fromCharCode(97 + i);
    const prev = String.fromCharCode(96 + i);
    lines.push(`  ${cur}: &${cur} [${Array.from({ length: 9 }, () => `*${prev}`).join(',')}]`);
  }
  return `apiVersion: v1\nkind: Pod\nlol:\n${lines.join('\n')}\nmetadata:\n  name: ${name}\n  managedFields: [{manager: m, fieldsV1: *i}]\nspec:\n  containers:\n  - name: app\n    image: busybox\n`;
}

/** One 100 KiB string aliased 2,000 times into args (200 MB of strings from a 110 KiB text). */
export function aliasedStrings(name = 'strbomb'): string {
  const refs = Array.from({ length: 2000 }, () => '*s').join(',');
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nbig: &s "${'y'.repeat(100 * 1024)}"\nspec:\n  containers:\n  - name: app\n    image: busybox\n    args: [${refs}]\n`;
}

/** A 2 MB string where a list is expected (the old decoder split it into 2 million args). */
export function stringAsList(name = 'strlist', bytes = 2_000_000): string {
  return podYaml(name, { container: `    args: "${'x'.repeat(bytes)}"` });
}

export const CLIMBING_UID = '../../../outside-the-logs-dir';

