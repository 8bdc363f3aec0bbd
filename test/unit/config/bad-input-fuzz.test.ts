/**
 * Property-based fuzz test (fast-check, fixed seed, time budget) over the manifest decoder and
 * validator as the sources use them (podsFromManifest inside a ManifestFileSet, and PodLists as
 * the URL source takes them). Inputs: a valid pod with hostile values put at the fields that
 * became paths, timers, allocations or runtime arguments; random extra fields; alias bombs;
 * byte-level corruption of valid YAML; plain random text.
 *
 * Properties, for every input:
 * - nothing throws, and no result is the guard's "internal error" (every failure was foreseen);
 * - an error message is bounded (values and error lists are shortened);
 * - the decoded pods are bounded by the input (no expansion) and every admitted pod is safe: its
 *   log directory is a direct child of the logs dir, command/args/env are strings with valid
 *   names, durations are int32/int64, annotations within the API's total;
 * - a valid file beside the fuzzed one keeps exactly the pods it has alone, and a PodList with a
 *   valid item beside a fuzzed one is applied whole or not at all.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import yaml from 'js-yaml';
import type { V1Pod } from '@kubernetes/client-node';
import { INTERNAL_DECODE_ERROR, podsFromManifest, type ManifestResult } from '../../../src/shared/manifest/manifest-pods.js';
import { ManifestFileSet } from '../../../src/main/config/manifest-file-set.js';
import { manifestDigest } from '../../../src/shared/manifest/manifest-digest.js';
import { TOTAL_ANNOTATION_SIZE_LIMIT } from '../../../src/shared/manifest/pod-validation.js';
import { podLogsDirectory } from '../../../workers/kuberuntime/sandbox-config.js';
import { resolveWithinRoot } from '../../../workers/kuberuntime/pod-log-dirs.js';
import { aliasBomb, aliasBombFreeForm, podYaml } from './bad-input-corpus.js';

const SEED = 20261123;
const TIME_BUDGET_MS = 15_000;
const file = { source: 'file' as const, origin: '/etc/kubernetes/manifests/fuzz.yaml', nodeName: 'node-1', allowLists: false };
const url = { source: 'http' as const, origin: 'http://cfg/pods', nodeName: 'node-1', allowLists: true };
const MAX_MESSAGE = 64 * 1024;

const validPod = (): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'fuzz', labels: { app: 'fuzz' } },
  spec: {
    containers: [{
      name: 'app', image: 'busybox', command: ['sleep'], args: ['100'], env: [{ name: 'A', value: 'x' }],
      readinessProbe: { exec: { command: ['true'] }, periodSeconds: 5 }, resources: { limits: { cpu: '100m', memory: '64Mi' } },
    }],
  },
});

/** Fields where a hostile value once became a path, a timer, an allocation or a runtime argument. */
const PATHS: readonly (readonly (string | number)[])[] = [
  ['metadata', 'uid'], ['metadata', 'name'], ['metadata', 'namespace'], ['metadata', 'annotations'], ['metadata', 'labels'],
  ['metadata'], ['spec'], ['spec', 'containers'], ['spec', 'containers', 0], ['spec', 'containers', 0, 'name'],
  ['spec', 'containers', 0, 'command'], ['spec', 'containers', 0, 'args'], ['spec', 'containers', 0, 'args', 0],
  ['spec', 'containers', 0, 'env'], ['spec', 'containers', 0, 'env', 0, 'name'], ['spec', 'containers', 0, 'env', 0, 'value'],
  ['spec', 'containers', 0, 'image'], ['spec', 'containers', 0, 'resources', 'limits', 'cpu'], ['spec', 'containers', 0, 'resources', 'limits'],
  ['spec', 'containers', 0, 'readinessProbe', 'timeoutSeconds'], ['spec', 'containers', 0, 'readinessProbe', 'periodSeconds'],
  ['spec', 'containers', 0, 'readinessProbe', 'exec', 'command'], ['spec', 'terminationGracePeriodSeconds'], ['spec', 'activeDeadlineSeconds'],
  ['spec', 'volumes'], ['spec', 'initContainers'], ['kind'], ['apiVersion'], ['spec', 'containers', 0, 'ports'],
];

const hostileScalar = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('../../../x', '/etc', '..', '.', 'a/b', '1=bad', 'x\u0000y', '', ' ', 'default', 'lots', '-1Gi', '1e400', '!!binary'),
  fc.nat(300_000).map((n) => 'x'.repeat(n)),
  fc.integer(), fc.double(), fc.boolean(), fc.constant(null),
  fc.constantFrom(9223372036854775808, 400000000000, -1, 2 ** 31, 2 ** 53 + 1, 1.5, Number.MAX_VALUE),
  fc.uint8Array({ maxLength: 64 }),
);
/** Strings that often pass the type check, so validation itself is exercised. */
const plausibleString = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.stringMatching(/^[a-z0-9][-a-z0-9./_]{0,20}$/),
  fc.constantFrom('../../../x', '../../default_other_u2', '/etc', '..', 'a/b', '1=bad', 'ok-uid-1', 'web', 'A', '100m', '1Zi'),
);
const hostileValue = fc.oneof(
  { weight: 6, arbitrary: plausibleString },
  { weight: 3, arbitrary: hostileScalar },
  { weight: 1, arbitrary: fc.array(hostileScalar, { maxLength: 8 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 12 }), hostileScalar, { maxKeys: 8 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 1, arbitrary: fc.array(fc.array(fc.string({ maxLength: 4 }), { maxLength: 4 }), { maxLength: 4 }) },
);

function setPath(obj: Record<string, unknown>, p: readonly (string | number)[], v: unknown): void {
  let cur: unknown = obj;
  for (const k of p.slice(0, -1)) {
    if (typeof cur !== 'object' || cur === null) return;
    cur = Reflect.get(cur, k);
  }
  if (typeof cur === 'object' && cur !== null) Reflect.set(cur, p[p.length - 1] ?? '', v);
}

/** A manifest text: a mutated valid pod in JSON or YAML, a bomb, corrupted YAML or noise. */
const manifestText = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.array(fc.tuple(fc.constantFrom(...PATHS), hostileValue), { minLength: 0, maxLength: 2 }), fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), fc.boolean())
    .map(([muts, extra, asJson]) => {
      const pod = validPod();
      for (const [p, v] of muts) setPath(pod, p, v);
      Object.assign(pod, extra);
      if (asJson) return JSON.stringify(pod, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v)) ?? '';
      try {
        return yaml.dump(pod, { noRefs: false, lineWidth: -1 });
      } catch {
        return JSON.stringify(pod) ?? '';
      }
    }) },
  { weight: 1, arbitrary: fc.constantFrom(aliasBomb(), aliasBombFreeForm()) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), fc.string({ maxLength: 6 }), fc.nat(40)).map(([at, ins, del]) => {
      const base = podYaml('web', { container: '    env: [{name: A, value: x}]\n    args: &a ["1", "2"]\n    command: *a' });
      const i = at % base.length;
      return base.slice(0, i) + ins + base.slice(i + del);
    }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.tuple(hostileValue, fc.boolean()).map(([v, multi]) => `${multi ? `${podYaml('ok')}---\n` : ''}${JSON.stringify(v) ?? 'null'}\n`) },
);

const UID_RE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const ENV_RE = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const isInt32 = (v: unknown): boolean => v === undefined || (Number.isInteger(v) && (v as number) >= -(2 ** 31) && (v as number) < 2 ** 31);

function assertSafePod(p: V1Pod): void {
  const uid = p.metadata?.uid ?? "";
  assert.ok(uid.length <= 63 && UID_RE.test(uid), `uid ${JSON.stringify(uid.slice(0, 80))}`);
  resolveWithinRoot('/var/log/pods', podLogsDirectory('/var/log/pods', p), { directChild: true });
  const ann = Object.entries(p.metadata?.annotations ?? {}).reduce((n, [k, v]) => n + k.length + v.length, 0);
  assert.ok(ann <= TOTAL_ANNOTATION_SIZE_LIMIT + 1024, `annotations of ${ann} bytes`);
  assert.ok(Number.isInteger(p.spec?.terminationGracePeriodSeconds ?? 0));
  for (const c of [...(p.spec?.containers ?? []), ...(p.spec?.initContainers ?? [])]) {
    assert.match(c.name, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    assert.equal(typeof c.image, 'string');
    for (const s of [...(c.command ?? []), ...(c.args ?? [])]) assert.equal(typeof s, 'string');
    for (const e of c.env ?? []) {
      assert.match(e.name, ENV_RE);
      assert.ok(e.value === undefined || typeof e.value === 'string');
    }
    for (const pr of [c.livenessProbe, c.readinessProbe, c.startupProbe]) {
      for (const k of ['timeoutSeconds', 'periodSeconds', 'initialDelaySeconds', 'failureThreshold', 'successThreshold'] as const) assert.ok(isInt32(pr?.[k]), k);
    }
  }
}

function checkResult(text: string, r: ManifestResult): void {
  if (!r.ok) {
    assert.ok(!r.error.message.includes(INTERNAL_DECODE_ERROR), r.error.message.slice(0, 2000));
    assert.ok(r.error.message.length <= MAX_MESSAGE, `message of ${r.error.message.length} characters`);
    return;
  }
  const size = JSON.stringify(r.pods).length;
  assert.ok(size <= 4 * text.length + 64 * 1024, `${size} characters of pods from ${text.length} of text`);
  for (const p of r.pods) assertSafePod(p);
}

test('fuzz: decoder + validator never throw, stay bounded, admit only safe pods; valid neighbours are untouched', () => {
  const goodText = podYaml('good');
  const goodAlone = podsFromManifest(goodText, { ...file, origin: '/etc/kubernetes/manifests/good.yaml' });
  assert.ok(goodAlone.ok);
  let runs = 0;
  let rejected = 0;
  fc.assert(
    fc.property(manifestText, (text) => {
      runs++;
      const r = podsFromManifest(text, file);
      checkResult(text, r);
      if (!r.ok) rejected++;

      // The file source: a valid file beside the fuzzed one keeps exactly its pods.
      const set = new ManifestFileSet({ dir: '/etc/kubernetes/manifests', nodeName: 'node-1', emptyGraceMs: 0 });
      set.setResult('good.yaml', manifestDigest(goodText), goodAlone, 0);
      set.setResult('fuzz.yaml', manifestDigest(text), r, 0);
      const built = set.build();
      const good = built.pods.filter((p) => p.metadata?.name === 'good-node-1');
      assert.deepEqual(good, goodAlone.pods);
      for (const e of built.newErrors) assert.ok(e.message.length <= MAX_MESSAGE);

      // The URL source: a list with a valid item and the fuzzed one is all or nothing.
      let item: unknown;
      try {
        item = JSON.parse(text);
      } catch {
        item = text;
      }
      const list = JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: [yaml.load(goodText), item] });
      const lr = podsFromManifest(list, url);
      checkResult(list, lr);
      if (lr.ok) assert.equal(lr.pods.length, 2);
    }),
    { seed: SEED, numRuns: 3000, interruptAfterTimeLimit: TIME_BUDGET_MS },
  );
  console.log(`# fuzz: ${runs} inputs, ${rejected} rejected`);
  assert.ok(runs >= 200, `only ${runs} inputs within the time budget`);
  assert.ok(rejected > runs / 10 && rejected < runs, 'the inputs mix accepted and rejected manifests');
});
