import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podsFromManifest, type ManifestResult } from '../../../src/shared/manifest/manifest-pods.js';
import { splitYamlDocuments } from '../../../src/shared/manifest/manifest-decode.js';

const ctx = { source: 'file' as const, origin: 'manifests/web.yaml', nodeName: 'Node-1', allowLists: false };

const WEB = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: app
    image: nginx:1.25
    ports: [{containerPort: 80}]
    livenessProbe:
      httpGet: {port: 80}
  - name: side
    image: busybox
`;

function errorOf(r: ManifestResult): { code: string; message: string } {
  assert.equal(r.ok, false, 'expected an error');
  if (r.ok) throw new Error('unreachable');
  return { code: r.error.code, message: r.error.message };
}

test('a valid manifest gets API defaults and the static-pod conventions', () => {
  const r = podsFromManifest(WEB, ctx);
  assert.ok(r.ok);
  const [pod] = r.pods;
  assert.ok(pod);
  assert.equal(pod.metadata?.name, 'web-node-1');
  assert.equal(pod.metadata?.namespace, 'default');
  assert.match(pod.metadata?.uid ?? '', /^[0-9a-f]{32}$/);
  assert.equal(pod.metadata?.annotations?.['kubernetes.io/config.hash'], pod.metadata?.uid);
  assert.equal(pod.metadata?.annotations?.['kubernetes.io/config.source'], 'file');
  assert.equal(pod.spec?.nodeName, 'Node-1');
  assert.equal(pod.status?.phase, 'Pending');
  const spec = pod.spec!;
  assert.equal(spec.restartPolicy, 'Always');
  assert.equal(spec.dnsPolicy, 'ClusterFirst');
  assert.equal(spec.terminationGracePeriodSeconds, 30);
  assert.equal(spec.schedulerName, 'default-scheduler');
  assert.deepEqual(spec.tolerations, [{ operator: 'Exists', effect: 'NoExecute' }]);
  const [app, side] = spec.containers;
  assert.equal(app?.imagePullPolicy, 'IfNotPresent');
  assert.equal(side?.imagePullPolicy, 'Always'); // no tag
  assert.equal(app?.terminationMessagePath, '/dev/termination-log');
  assert.equal(app?.terminationMessagePolicy, 'File');
  assert.equal(app?.ports?.[0]?.protocol, 'TCP');
  assert.deepEqual(
    { ...app?.livenessProbe, httpGet: { ...app?.livenessProbe?.httpGet } },
    { httpGet: { port: 80, path: '/', scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
  );
  // plain objects, safe to send to a worker thread
  assert.equal(Object.getPrototypeOf(pod), Object.prototype);
  assert.deepEqual(structuredClone(pod), pod);
});

test('the uid is deterministic and changes with content, path and node; an explicit uid is kept', () => {
  const uid = (text: string, c = ctx): string => {
    const r = podsFromManifest(text, c);
    assert.ok(r.ok);
    return r.pods[0]?.metadata?.uid ?? '';
  };
  assert.equal(uid(WEB), uid(WEB));
  assert.equal(uid(WEB), uid(WEB.replace('labels: {app: web}', 'labels:\n    app: web'))); // same object, other formatting
  assert.notEqual(uid(WEB), uid(WEB.replace('nginx:1.25', 'nginx:1.26')));
  assert.notEqual(uid(WEB), uid(WEB, { ...ctx, origin: 'manifests/other.yaml' }));
  assert.notEqual(uid(WEB), uid(WEB, { ...ctx, nodeName: 'node-2' }));
  assert.equal(uid(WEB.replace('  name: web\n', '  name: web\n  uid: my-uid\n')), 'my-uid');
});

test('several documents per file, empty documents skipped; JSON works too', () => {
  const two = `---\n${WEB}---\n# just a comment\n---\n${WEB.replace('name: web', 'name: api')}---\n`;
  const r = podsFromManifest(two, ctx);
  assert.ok(r.ok);
  assert.deepEqual(r.pods.map((p) => p.metadata?.name), ['web-node-1', 'api-node-1']);
  const json = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'j' }, spec: { containers: [{ name: 'c', image: 'x:1' }] } });
  const j = podsFromManifest(json, ctx);
  assert.ok(j.ok);
  assert.equal(j.pods[0]?.metadata?.name, 'j-node-1');
  assert.deepEqual(splitYamlDocuments('a: 1\n---\n\n---\nb: 2\n').map((d) => d.firstLine), [0, 3]);
});

test('bad YAML names the file and the line', () => {
  const e = errorOf(podsFromManifest(`${WEB}---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n   bad: : indent\n`, ctx));
  assert.equal(e.code, 'ERR_MANIFEST_PARSE');
  assert.match(e.message, /^manifests\/web\.yaml: yaml: line 20: /);
});

test('wrong kind or apiVersion is rejected', () => {
  const d = errorOf(podsFromManifest(WEB.replace('kind: Pod', 'kind: Deployment'), ctx));
  assert.equal(d.code, 'ERR_MANIFEST_INVALID');
  assert.equal(d.message, 'manifests/web.yaml: kind: Unsupported value: "Deployment": supported values: "Pod"');
  const v = errorOf(podsFromManifest(WEB.replace('apiVersion: v1', 'apiVersion: apps/v1'), ctx));
  assert.equal(v.message, 'manifests/web.yaml: apiVersion: Unsupported value: "apps/v1": supported values: "v1"');
  assert.equal(errorOf(podsFromManifest('- 1\n- 2\n', ctx)).code, 'ERR_MANIFEST_PARSE');
  // the file source does not take lists
  assert.equal(errorOf(podsFromManifest('apiVersion: v1\nkind: PodList\nitems: []\n', ctx)).code, 'ERR_MANIFEST_INVALID');
});

test('validation errors name the file and the field path, in the API server wording', () => {
  const cases: Array<[string, string]> = [
    [WEB.replace('  - name: side\n', '  - imagePullPolicy: Always\n'), 'manifests/web.yaml: spec.containers[1].name: Required value'],
    [WEB.replace('name: web', 'name: Web_1'), 'manifests/web.yaml: metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain must consist of'],
    [WEB.replace('metadata:\n  name: web\n', 'metadata:\n'), 'manifests/web.yaml: metadata.name: Required value'],
    [WEB.replace(/  containers:[\s\S]*/, '  containers: []\n'), 'manifests/web.yaml: spec.containers: Required value'],
    [WEB.replace('    image: busybox\n', ''), 'manifests/web.yaml: spec.containers[1].image: Required value'],
    [WEB.replace('name: side', 'name: app'), 'manifests/web.yaml: spec.containers[1].name: Duplicate value: "app"'],
    [WEB.replace('spec:\n', 'spec:\n  initContainers: [{name: side, image: x}]\n'), 'manifests/web.yaml: spec.containers[1].name: Duplicate value: "side"'],
    [WEB.replace('spec:\n', 'spec:\n  initContainers: [{name: mesh, image: x, restartPolicy: OnFailure}]\n'), 'manifests/web.yaml: spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'],
    [WEB.replace('    image: busybox\n', '    image: busybox\n    restartPolicy: Always\n'), 'manifests/web.yaml: spec.containers[1].restartPolicy: Forbidden: may not be set for non-init containers'],
    [WEB.replace('spec:\n', 'spec:\n  initContainers: [{name: mesh, image: x, lifecycle: {preStop: {exec: {command: ["true"]}}}}]\n'), 'manifests/web.yaml: spec.initContainers[0].lifecycle: Forbidden: may not be set for init containers without restartPolicy=Always'],
    [WEB.replace('spec:\n', 'spec:\n  initContainers: [{name: mesh, image: x, readinessProbe: {exec: {command: ["true"]}}}]\n'), 'manifests/web.yaml: spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always'],
    [WEB.replace('spec:\n', 'spec:\n  restartPolicy: Sometimes\n'), 'manifests/web.yaml: spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"'],
    [WEB.replace('spec:\n', 'spec:\n  terminationGracePeriodSeconds: -1\n'), 'manifests/web.yaml: spec.terminationGracePeriodSeconds: Invalid value: -1: must be greater than or equal to 0'],
    [WEB.replace('    image: busybox\n', '    image: busybox\n    resources: {requests: {cpu: lots}}\n'), 'manifests/web.yaml: spec.containers[1].resources.requests[cpu]: Invalid value: "lots": quantities must match the regular expression'],
    [WEB.replace('    image: busybox\n', '    image: busybox\n    resources: {requests: {memory: -1Gi}}\n'), 'manifests/web.yaml: spec.containers[1].resources.requests[memory]: Invalid value: "-1Gi": must be greater than or equal to 0'],
    [WEB.replace('      httpGet: {port: 80}\n', '      periodSeconds: 5\n'), 'manifests/web.yaml: spec.containers[0].livenessProbe: Required value: must specify a handler type'],
    [WEB.replace('      httpGet: {port: 80}\n', '      httpGet: {port: 80}\n      exec: {command: ["true"]}\n'), 'manifests/web.yaml: spec.containers[0].livenessProbe.httpGet: Forbidden: may not specify more than 1 handler type'],
  ];
  for (const [text, prefix] of cases) {
    const e = errorOf(podsFromManifest(text, ctx));
    assert.equal(e.code, 'ERR_MANIFEST_INVALID', prefix);
    assert.ok(e.message.startsWith(prefix), `got:\n  ${e.message}\nwant prefix:\n  ${prefix}`);
  }
});

test('all errors of a pod are reported; a bad document in a multi-document file is named', () => {
  const e = errorOf(podsFromManifest(WEB.replace('name: side', 'name: ""').replace('    image: busybox\n', ''), ctx));
  assert.equal(e.message, 'manifests/web.yaml: spec.containers[1].name: Required value; spec.containers[1].image: Required value');
  const m = errorOf(podsFromManifest(`${WEB}---\n${WEB.replace('name: web', 'name: two').replace('    image: busybox\n', '')}`, ctx));
  assert.equal(m.message, 'manifests/web.yaml: document 2: spec.containers[1].image: Required value');
});

test('the same pod name twice in one file is a duplicate', () => {
  const e = errorOf(podsFromManifest(`${WEB}---\n${WEB}`, ctx));
  assert.equal(e.code, 'ERR_MANIFEST_DUPLICATE');
  assert.match(e.message, /^manifests\/web\.yaml: document 2: metadata\.name: Duplicate value: "web-node-1"/);
});

test('the HTTP form accepts PodList and List', () => {
  const list = { apiVersion: 'v1', kind: 'PodList', items: [{ metadata: { name: 'a' }, spec: { containers: [{ name: 'c', image: 'x:1' }] } }] };
  const http = { ...ctx, source: 'http' as const, origin: 'http://h/pods', allowLists: true };
  const r = podsFromManifest(JSON.stringify(list), http);
  assert.ok(r.ok);
  assert.equal(r.pods[0]?.metadata?.annotations?.['kubernetes.io/config.source'], 'http');
  assert.equal(r.pods[0]?.spec?.tolerations, undefined); // only file pods get the NoExecute toleration
  const r2 = podsFromManifest(JSON.stringify({ ...list, kind: 'List', items: [{ ...list.items[0], kind: 'Pod', apiVersion: 'v1' }] }), http);
  assert.ok(r2.ok);
  assert.equal(r2.pods.length, 1);
  const bad = errorOf(podsFromManifest(JSON.stringify({ ...list, items: [{ metadata: { name: 'a' }, spec: { containers: [{ name: 'c' }] } }] }), http));
  assert.equal(bad.message, 'http://h/pods: items[0].spec.containers[0].image: Required value');
});

test('the JSON fast path yields exactly what the YAML path yields', () => {
  const obj = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'j', labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x:1', unknownField: 1, resources: { limits: { cpu: '1' } } }] } };
  const viaJson = podsFromManifest(JSON.stringify(obj), ctx);
  const viaYaml = podsFromManifest(`# yaml\n${JSON.stringify(obj, null, 2)}`, ctx); // a comment line forces the YAML parser
  assert.ok(viaJson.ok && viaYaml.ok);
  assert.deepEqual(viaJson.pods, viaYaml.pods);
  assert.equal(Reflect.get(viaJson.pods[0]?.spec?.containers[0] ?? {}, 'unknownField'), undefined, 'unknown fields are dropped');
  assert.deepEqual(viaJson.pods[0]?.spec?.containers[0]?.resources?.requests, { cpu: '1' }, 'requests default to limits');
});

test('a sidecar (init container with restartPolicy Always) is accepted with its probes and lifecycle, the field kept', () => {
  const sidecar = '  initContainers:\n  - name: mesh\n    image: busybox\n    restartPolicy: Always\n    readinessProbe: {exec: {command: ["true"]}}\n    startupProbe: {exec: {command: ["true"]}}\n    lifecycle: {preStop: {exec: {command: ["true"]}}}\n';
  const r = podsFromManifest(WEB.replace('spec:\n', `spec:\n${sidecar}`), ctx);
  assert.ok(r.ok, r.ok ? '' : r.error.message);
  const init = r.pods[0]!.spec!.initContainers![0]!;
  assert.equal(init.restartPolicy, 'Always');
  assert.ok(init.readinessProbe && init.startupProbe && init.lifecycle?.preStop);
});
