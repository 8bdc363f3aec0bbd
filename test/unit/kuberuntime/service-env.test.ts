/**
 * Service links in the pod worker (service-env.ts, container-env.ts): the variables the main
 * thread attached come after the container's own, a container variable of the same name wins,
 * `$(VAR)` may name one; 'pending' fails the start with the kubelet's CreateContainerConfigError
 * message; no snapshot (standalone) means no service variables.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PodApiObjects } from '../../../src/shared/protocol/api-object-snapshot.js';
import { makeEnvironmentVariables } from '../../../workers/kuberuntime/container-env.js';
import { SERVICES_NOT_SYNCED_MESSAGE, serviceEnvOf } from '../../../workers/kuberuntime/service-env.js';
import { container, makeHarness, makePod, summary } from './kuberuntime-harness.js';

const ctx = { nodeName: 'node-1', hostIP: '192.168.1.10', podIPs: ['10.88.0.7'] };

function objects(serviceEnv: PodApiObjects['serviceEnv']): PodApiObjects {
  return { configMaps: new Map([['cm', { state: 'found', object: { data: { FROM_CM: 'cm', KUBERNETES_SERVICE_PORT: 'from-envFrom' }, binaryData: {} } }]]), secrets: new Map(), tokens: new Map(), ...(serviceEnv ? { serviceEnv } : {}) };
}

const found = (vars: Record<string, string>): PodApiObjects['serviceEnv'] => ({ state: 'found', object: { vars: Object.entries(vars).map(([key, value]) => ({ key, value })) } });

test('service variables come after the container\'s own; the container wins a name; $(VAR) may name one', () => {
  const pod = makePod({ containers: [container('app', {
    envFrom: [{ configMapRef: { name: 'cm' } }],
    env: [{ name: 'URL', value: 'http://$(WEB_SERVICE_HOST):$(WEB_SERVICE_PORT)/' }, { name: 'WEB_SERVICE_PORT', value: 'mine' }],
  })] });
  const r = makeEnvironmentVariables(pod, pod.spec!.containers[0]!, { ...ctx, objects: objects(found({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443', WEB_SERVICE_HOST: '10.96.1.1', WEB_SERVICE_PORT: '80' })) });
  assert.ok(r.ok);
  assert.deepEqual(r.envs.map((e) => `${e.key}=${e.value}`), [
    'FROM_CM=cm',
    'KUBERNETES_SERVICE_PORT=from-envFrom',
    // WEB_SERVICE_PORT is not defined yet when URL is expanded: the service's value is used.
    'URL=http://10.96.1.1:80/',
    'WEB_SERVICE_PORT=mine',
    'KUBERNETES_SERVICE_HOST=10.96.0.1',
    'WEB_SERVICE_HOST=10.96.1.1',
  ]);
});

test('serviceEnvOf: none without a snapshot; pending is the kubelet\'s error', () => {
  assert.deepEqual(serviceEnvOf(undefined), { ok: true, vars: new Map() });
  assert.deepEqual(serviceEnvOf(objects(undefined)), { ok: true, vars: new Map() });
  assert.deepEqual(serviceEnvOf(objects({ state: 'pending' })), { ok: false, message: 'services have not yet been read at least once, cannot construct envvars' });
  const pod = makePod({ containers: [container('app')] });
  assert.deepEqual(makeEnvironmentVariables(pod, pod.spec!.containers[0]!, { ...ctx, objects: objects({ state: 'pending' }) }), { ok: false, message: SERVICES_NOT_SYNCED_MESSAGE });
  assert.deepEqual(makeEnvironmentVariables(pod, pod.spec!.containers[0]!, ctx), { ok: true, envs: [] }, 'standalone: no service variables');
});

test('syncPod: pending services → CreateContainerConfigError; once they are known the container starts with them', async (t) => {
  let snapshot: PodApiObjects = objects({ state: 'pending' });
  const h = makeHarness({ apiObjects: () => snapshot });
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app', { env: [{ name: 'OWN', value: '1' }] })] });
  const first = await h.sync(pod);
  assert.equal(summary(first.apiStatus), 'Pending app=waiting:CreateContainerConfigError');
  assert.equal(first.apiStatus.containerStatuses?.[0]?.state?.waiting?.message, SERVICES_NOT_SYNCED_MESSAGE);
  assert.equal(h.rt.containerCount, 0);
  snapshot = objects(found({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }));
  await h.sync(pod);
  assert.deepEqual(h.rt.lastConfigOf('app').envs, [{ key: 'OWN', value: '1' }, { key: 'KUBERNETES_SERVICE_HOST', value: '10.96.0.1' }]);
});
