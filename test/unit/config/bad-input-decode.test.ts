/**
 * Bad input at the decoder and validator (issue 10, items 15–18 and 20): what a manifest file or
 * URL body can contain, through podsFromManifest (the function both sources' decoder thread
 * runs). Each case failed on the code before this suite: the climbing uid was admitted, the bomb
 * expanded, the string split into characters, the number reached `command`, and so on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podsFromManifest, type ManifestResult } from '../../../src/shared/manifest/manifest-pods.js';
import { MAX_LISTED_FIELD_ERRORS } from '../../../src/shared/manifest/field-error.js';
import { aliasBomb, aliasBombFreeForm, aliasedStrings, CLIMBING_UID, podYaml, stringAsList } from './bad-input-corpus.js';

const file = { source: 'file' as const, origin: '/etc/kubernetes/manifests/web.yaml', nodeName: 'node-1', allowLists: false };
const url = { source: 'http' as const, origin: 'http://config.example/pods', nodeName: 'node-1', allowLists: true };

function err(r: ManifestResult): { code: string; message: string } {
  assert.equal(r.ok, false, `expected an error, got ${r.ok ? r.pods.length : 0} pods`);
  if (r.ok) throw new Error('unreachable');
  return { code: r.error.code, message: r.error.message };
}

test('15: a uid that climbs out of the log directory is rejected, naming the file (or URL) and the field', () => {
  const e = err(podsFromManifest(podYaml('web', { meta: `  uid: ${CLIMBING_UID}` }), file));
  assert.equal(e.code, 'ERR_MANIFEST_INVALID');
  assert.ok(e.message.startsWith(`/etc/kubernetes/manifests/web.yaml: metadata.uid: Invalid value: "${CLIMBING_UID}"`), e.message);
  const list = JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: [{ metadata: { name: 'a', uid: '/etc' }, spec: { containers: [{ name: 'c', image: 'x' }] } }] });
  const u = err(podsFromManifest(list, url));
  assert.ok(u.message.startsWith('http://config.example/pods: items[0].metadata.uid: Invalid value: "/etc"'), u.message);
  for (const uid of ['..', '.', 'a/b', 'x\u0000y', 'ok_', '-x']) {
    assert.equal(err(podsFromManifest(podYaml('web', { meta: `  uid: ${JSON.stringify(uid)}` }), file)).code, 'ERR_MANIFEST_INVALID', uid);
  }
  // names, namespaces and container names that would climb are rejected as before (DNS-1123)
  assert.match(err(podsFromManifest(podYaml('web', { meta: '  namespace: "../x"' }), file)).message, /metadata\.namespace: Invalid value: "\.\.\/x"/);
  assert.match(err(podsFromManifest(podYaml('web').replace('- name: app', '- name: "../../app"'), file)).message, /spec\.containers\[0\]\.name: Invalid value/);
  // a plain uid (a UUID) is kept as given
  const ok = podsFromManifest(podYaml('web', { meta: '  uid: 6f1c1c2e-9b1a-4d8e-a0c4-0b6f3b1f8f10' }), file);
  assert.ok(ok.ok);
  assert.equal(ok.pods[0]?.metadata?.uid, '6f1c1c2e-9b1a-4d8e-a0c4-0b6f3b1f8f10');
});

test('20: a uid over 63 characters is rejected at admission, naming the file', () => {
  const e = err(podsFromManifest(podYaml('web', { meta: `  uid: ${'a'.repeat(65)}` }), file));
  assert.ok(e.message.startsWith('/etc/kubernetes/manifests/web.yaml: metadata.uid: Invalid value: "aaaa'), e.message);
  assert.match(e.message, /must be no more than 63 characters/);
});

test('16: a YAML alias bomb is stopped by the decode budget before anything is built', () => {
  for (const text of [aliasBombFreeForm(), aliasedStrings()]) {
    const before = process.memoryUsage().heapUsed;
    const e = err(podsFromManifest(text, file));
    assert.equal(e.code, 'ERR_MANIFEST_TOO_LARGE', e.message);
    assert.match(e.message, /expands to too many values/);
    // Not a speed target: a bound that only an expansion (hundreds of MB) would cross.
    assert.ok(process.memoryUsage().heapUsed - before < 64 * 2 ** 20, 'the bomb was not expanded');
  }
  // Aliases into fields of the wrong type are type errors (never walked further).
  const b = err(podsFromManifest(aliasBomb(), file));
  assert.equal(b.code, 'ERR_MANIFEST_INVALID');
  assert.match(b.message, /^\S+: spec\.containers\[0\]\.args\[0\]: Invalid value: "<a list>": must be a string, not a list/);
  // A few aliases in an ordinary manifest are fine.
  const fine = podsFromManifest(`apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: &l {app: a}, annotations: *l}\nspec:\n  containers: [{name: c, image: x, env: &e [{name: A, value: "1"}]}, {name: d, image: x, env: *e}]\n`, file);
  assert.ok(fine.ok, fine.ok ? '' : fine.error.message);
});

test('17: a string where a list or map is expected is an error with its field path, never split into characters', () => {
  const e = err(podsFromManifest(stringAsList(), file));
  assert.equal(e.code, 'ERR_MANIFEST_INVALID');
  assert.match(e.message, /^\S+: spec\.containers\[0\]\.args: Invalid value: "x{10,}\.\.\.\(\d+ more characters\)": must be a list, not a string$/);
  assert.ok(e.message.length < 1024, `message is ${e.message.length} characters`);
  const m = err(podsFromManifest(podYaml('web', { meta: '  annotations: "not a map"' }), file));
  assert.match(m.message, /metadata\.annotations: Invalid value: "not a map": must be a map, not a string/);
  const items = err(podsFromManifest(JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: 'x'.repeat(1000) }), url));
  assert.match(items.message, /items: Invalid value: "x+.*": must be a list/);
});

test('17: numbers, nested lists, maps and !!binary never reach command, args or env', () => {
  const cases: Array<[string, RegExp]> = [
    ['    command: [1, 2]', /spec\.containers\[0\]\.command\[0\]: Invalid value: 1: must be a string, not a number/],
    ['    args: [[sh], -c]', /spec\.containers\[0\]\.args\[0\]: Invalid value: "<a list>": must be a string, not a list/],
    ['    args: [{a: b}]', /spec\.containers\[0\]\.args\[0\]: Invalid value: "<a map>": must be a string, not a map/],
    ['    command: [!!binary aGVsbG8=]', /spec\.containers\[0\]\.command\[0\]: Invalid value: "<binary data>": must be a string, not binary data/],
    ['    env: [{name: A, value: 5}]', /spec\.containers\[0\]\.env\[0\]\.value: Invalid value: 5: must be a string, not a number/],
    ['    env: [{name: A, value: !!binary aGVsbG8=}]', /spec\.containers\[0\]\.env\[0\]\.value: Invalid value: "<binary data>"/],
    ['    env: [{name: A, value: x}, {name: 1=bad, value: y}]', /spec\.containers\[0\]\.env\[1\]\.name: Invalid value: "1=bad": a valid environment variable name/],
    ['    env: [{value: y}]', /spec\.containers\[0\]\.env\[0\]\.name: Required value/],
    ['    resources: {limits: {memory: 1Zi}}', /spec\.containers\[0\]\.resources\.limits\[memory\]: Invalid value: "1Zi": quantities must match/],
    ['    resources: {requests: {cpu: [1]}}', /spec\.containers\[0\]\.resources\.requests\[cpu\]: Invalid value: "<a list>"/],
  ];
  for (const [container, want] of cases) {
    const e = err(podsFromManifest(podYaml('web', { container }), file));
    assert.match(e.message, want);
  }
  const image = err(podsFromManifest(podYaml('web').replace('image: busybox', 'image: [busybox]'), file));
  assert.match(image.message, /spec\.containers\[0\]\.image: Invalid value: "<a list>": must be a string, not a list/);
});

test('17: a 9 MiB annotation (over the API server total of 256 KiB) is rejected, and the message stays small', () => {
  const big = 'v'.repeat(9 * 1024 * 1024);
  const e = err(podsFromManifest(podYaml('web', { meta: `  annotations: {a: "${big}"}` }), file));
  assert.match(e.message, /metadata\.annotations: Invalid value: "<\d+ bytes>": may not have more than 262144 bytes/);
  assert.ok(e.message.length < 2048, `message is ${e.message.length} characters`);
  const keys = err(podsFromManifest(podYaml('web', { meta: '  labels: {"bad key!": x}' }), file));
  assert.match(keys.message, /metadata\.labels: Invalid value: "bad key!"/);
});

test('18: durations outside int32/int64 are rejected at admission with the field path', () => {
  const probe = err(podsFromManifest(podYaml('web', { container: '    livenessProbe: {exec: {command: ["true"]}, timeoutSeconds: 9223372036854775808}' }), file));
  assert.match(probe.message, /spec\.containers\[0\]\.livenessProbe\.timeoutSeconds: Invalid value: 9223372036854776000: must be a 32-bit integer/);
  const grace = err(podsFromManifest(podYaml('web', { spec: '  terminationGracePeriodSeconds: 9223372036854775808' }), file));
  assert.match(grace.message, /spec\.terminationGracePeriodSeconds: Invalid value: 9223372036854776000: must be a 64-bit integer/);
  const frac = err(podsFromManifest(podYaml('web', { container: '    readinessProbe: {exec: {command: ["true"]}, periodSeconds: 1.5}' }), file));
  assert.match(frac.message, /readinessProbe\.periodSeconds: Invalid value: 1\.5: must be an integer/);
  // A large but valid int64 grace period is admitted (the API server does): timers clamp it.
  const ok = podsFromManifest(podYaml('web', { spec: '  terminationGracePeriodSeconds: 400000000000' }), file);
  assert.ok(ok.ok, ok.ok ? '' : ok.error.message);
});

test('20: a 9 MiB name makes a short error, and a manifest with thousands of errors lists a bounded number', () => {
  const e = err(podsFromManifest(podYaml('n'.repeat(9 * 1024 * 1024)), file));
  assert.match(e.message, /^\S+: metadata\.name: Invalid value: "n+\.\.\.\(\d+ more characters\)": must be no more than/);
  assert.ok(e.message.length < 4096, `message is ${e.message.length} characters`);
  const many = podYaml('web', { container: `    command: [${Array.from({ length: 5000 }, (_, i) => i).join(',')}]` });
  const m = err(podsFromManifest(many, file));
  assert.match(m.message, new RegExp(`and ${5000 - MAX_LISTED_FIELD_ERRORS} more errors$`));
  assert.ok(m.message.length < 16 * 1024, `message is ${m.message.length} characters`);
});

test('17: an empty manifest decodes to no pods (the file source notes it; see bad-input-sources)', () => {
  for (const text of ['', '\n\n', '# only a comment\n', '---\n---\n']) {
    const r = podsFromManifest(text, file);
    assert.ok(r.ok);
    assert.equal(r.pods.length, 0);
  }
});
