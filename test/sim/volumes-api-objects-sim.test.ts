/**
 * configMap, secret, downwardAPI and projected volumes and env from API objects, on the
 * simulated runtime with the real volume manager (objects handed in as the main thread sends
 * them: a PodApiObjects snapshot per pod).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { PodApiObjects } from '../../src/shared/protocol/api-object-snapshot.js';
import { tokenKey } from '../../src/shared/protocol/api-object-snapshot.js';
import { startVolumeSim, volumePod } from './volume-sim-harness.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

function objects(cm: Record<string, string> | null, secret: Record<string, string> | null, token = 'tok-1'): PodApiObjects {
  return {
    configMaps: new Map([
      ['app-config', cm ? { state: 'found', object: { data: cm, binaryData: {} } } : { state: 'missing' }],
      ['kube-root-ca.crt', { state: 'found', object: { data: { 'ca.crt': '-----BEGIN CERTIFICATE-----\nCA\n' }, binaryData: {} } }],
    ]),
    secrets: new Map([['app-secret', secret ? { state: 'found', object: { data: Object.fromEntries(Object.entries(secret).map(([k, v]) => [k, b64(v)])) } } : { state: 'missing' }]]),
    tokens: new Map([[tokenKey('', 3607), { state: 'found', object: { token, expirationTimestamp: '2030-01-01T00:00:00Z' } }]]),
  };
}

const kubeApiAccess = {
  name: 'kube-api-access-x',
  projected: {
    defaultMode: 0o644,
    sources: [
      { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  },
};

function appPod(optionalKey = false) {
  return volumePod('api', {
    volumes: [
      kubeApiAccess,
      { name: 'cfg', configMap: { name: 'app-config', defaultMode: 0o644, items: [{ key: 'app.conf', path: 'conf/app.conf', mode: 0o600 }, { key: 'extra', path: 'extra', ...(optionalKey ? {} : {}) }], ...(optionalKey ? { optional: true } : {}) } },
      { name: 'sec', secret: { secretName: 'app-secret', defaultMode: 0o400 } },
      { name: 'labels', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }, { path: 'mem', resourceFieldRef: { containerName: 'app', resource: 'limits.memory', divisor: '1Mi' } }] } },
    ],
    containers: [{
      name: 'app', image: 'busybox:1.36', command: ['sleep', '100000'], resources: { limits: { memory: '64Mi' } },
      env: [{ name: 'MODE', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'mode' } } }, { name: 'PASS', valueFrom: { secretKeyRef: { name: 'app-secret', key: 'password' } } }],
      envFrom: [{ configMapRef: { name: 'app-config' }, prefix: 'CM_' }],
      volumeMounts: [
        { name: 'kube-api-access-x', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
        { name: 'cfg', mountPath: '/etc/app' }, { name: 'sec', mountPath: '/etc/secret' }, { name: 'labels', mountPath: '/etc/podinfo' },
      ],
    }],
  });
}

test('sim API volumes: projected token/CA/namespace, configMap items and modes, secret on tmpfs, downwardAPI, env; an update swaps ..data atomically', async (t) => {
  const h = await startVolumeSim();
  t.after(() => h.close());
  const p = appPod();
  p.metadata!.labels = { app: 'api', tier: 'web' };
  h.objects.set('uid-api', objects({ 'app.conf': 'v=1\n', extra: 'x', mode: 'fast' }, { password: 's3cret' }));
  assert.equal((await h.sync(p)).error, undefined);

  const cat = async (f: string): Promise<string> => {
    const r = await h.exec(p, 'app', ['cat', f]);
    assert.equal(r.exitCode, 0, `cat ${f}: ${r.stderr}`);
    return r.stdout;
  };
  assert.equal(await cat('/var/run/secrets/kubernetes.io/serviceaccount/token'), 'tok-1');
  assert.equal(await cat('/var/run/secrets/kubernetes.io/serviceaccount/ca.crt'), '-----BEGIN CERTIFICATE-----\nCA\n');
  assert.equal(await cat('/var/run/secrets/kubernetes.io/serviceaccount/namespace'), 'default');
  assert.equal(await cat('/etc/app/conf/app.conf'), 'v=1\n');
  assert.equal(await cat('/etc/secret/password'), 's3cret');
  assert.equal(await cat('/etc/podinfo/labels'), 'app="api"\ntier="web"');
  assert.equal(await cat('/etc/podinfo/mem'), '64');
  const env = await h.exec(p, 'app', ['sh', '-c', 'echo "$MODE $PASS $CM_mode"']);
  assert.equal(env.stdout, 'fast s3cret fast\n');

  const vols = path.join(h.root, 'pods', 'uid-api', 'volumes');
  const cfgDir = path.join(vols, 'kubernetes.io~configmap', 'cfg');
  assert.equal(fs.statSync(path.join(cfgDir, 'conf', 'app.conf')).mode & 0o777, 0o600, 'item mode');
  assert.equal(fs.statSync(path.join(cfgDir, 'extra')).mode & 0o777, 0o644, 'defaultMode');
  assert.equal(fs.statSync(path.join(vols, 'kubernetes.io~secret', 'sec', 'password')).mode & 0o777, 0o400);
  assert.equal(fs.readlinkSync(path.join(cfgDir, 'conf')), '..data/conf', 'user-visible entries are links through ..data');
  assert.deepEqual([...h.mounter.mounted].map((m) => path.relative(vols, m)).sort(), ['kubernetes.io~projected/kube-api-access-x', 'kubernetes.io~secret/sec'], 'secret and projected volumes are on tmpfs; configMap is not');

  // An update of the configMap (and a refreshed token) reaches the running container through a ..data swap.
  const before = fs.readlinkSync(path.join(cfgDir, '..data'));
  h.objects.set('uid-api', objects({ 'app.conf': 'v=2\n', extra: 'x', mode: 'fast' }, { password: 's3cret' }, 'tok-2'));
  h.clock.step(1_000);
  assert.equal((await h.sync(p)).error, undefined);
  assert.equal(await cat('/etc/app/conf/app.conf'), 'v=2\n');
  assert.equal(await cat('/var/run/secrets/kubernetes.io/serviceaccount/token'), 'tok-2');
  const after = fs.readlinkSync(path.join(cfgDir, '..data'));
  assert.notEqual(after, before);
  assert.deepEqual(fs.readdirSync(cfgDir).filter((e) => e.startsWith('..2')), [after], 'the old version is removed');
  // Nothing changed: nothing rewritten.
  assert.equal((await h.sync(p)).error, undefined);
  assert.equal(fs.readlinkSync(path.join(cfgDir, '..data')), after);

  assert.deepEqual(await h.cleanup(p), {});
  assert.equal(fs.existsSync(path.join(h.root, 'pods', 'uid-api')), false);
  assert.equal(h.mounter.mounted.size, 0, 'tmpfs mounts unmounted at teardown');
});

test('sim API volumes: a missing required key is FailedMount; optional is fine; a missing env ref is CreateContainerConfigError with the kubelet message', async (t) => {
  const h = await startVolumeSim();
  t.after(() => h.close());
  const p = appPod();
  h.objects.set('uid-api', objects({ 'app.conf': 'v=1\n', mode: 'fast' }, { password: 'p' }));
  const out = await h.sync(p);
  assert.equal(out.error?.code, 'ERR_FAILED_MOUNT');
  assert.equal(out.error?.message, 'unmounted volumes=[cfg]: MountVolume.SetUp failed for volume "cfg" : configmap references non-existent config key: extra');

  const opt = appPod(true);
  const ok = await h.sync(opt);
  assert.equal(ok.error, undefined, 'an optional configMap volume skips the missing key');
  assert.equal((await h.exec(opt, 'app', ['cat', '/etc/app/extra'])).exitCode, 1);

  // env: the secret is gone → the kubelet's waiting reason and message.
  const noSecretEnv = volumePod('env', { containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '1000'], env: [{ name: 'PASS', valueFrom: { secretKeyRef: { name: 'app-secret', key: 'password' } } }, { name: 'K', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'nope' } } }] }] });
  h.objects.set('uid-env', objects({ mode: 'x' }, null));
  const env1 = await h.sync(noSecretEnv);
  assert.equal(env1.error?.code, 'ERR_CREATE_CONTAINER_CONFIG');
  assert.equal(env1.apiStatus.containerStatuses?.[0]?.state?.waiting?.reason, 'CreateContainerConfigError');
  assert.equal(env1.apiStatus.containerStatuses?.[0]?.state?.waiting?.message, 'secret "app-secret" not found');
  h.objects.set('uid-env', objects({ mode: 'x' }, { password: 'p' }));
  const env2 = await h.sync(noSecretEnv);
  assert.equal(env2.apiStatus.containerStatuses?.[0]?.state?.waiting?.message, "couldn't find key nope in ConfigMap default/app-config");
  const optional = volumePod('envopt', { containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '1000'], env: [{ name: 'K', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'nope', optional: true } } }] }] });
  h.objects.set('uid-envopt', objects({ mode: 'x' }, null));
  assert.equal((await h.sync(optional)).error, undefined);
});

test('sim API volumes: a missing configMap records FailedMount with the kubelet message through the syncer, not once per sync', async (t) => {
  const events: { type: string; reason: string; message: string; uid: string | undefined }[] = [];
  const h = await startVolumeSim({ events: (pod, type, reason, message) => events.push({ type, reason, message, uid: pod.metadata?.uid }) });
  t.after(() => h.close());
  const p = appPod();
  // First the configMap is still on its way (its watch has not listed yet): the pod waits, silently.
  const pending = objects(null, { password: 'p' });
  pending.configMaps.set('app-config', { state: 'pending' });
  h.objects.set('uid-api', pending);
  assert.equal((await h.sync(p)).error?.code, 'ERR_FAILED_MOUNT');
  assert.equal(events.length, 0, 'no FailedMount while the object is not delivered yet');
  // Then it is known not to exist.
  h.objects.set('uid-api', objects(null, { password: 'p' }));
  h.clock.step(2_000);
  const msg = 'MountVolume.SetUp failed for volume "cfg" : configmap "app-config" not found';
  assert.equal((await h.sync(p)).error?.code, 'ERR_FAILED_MOUNT');
  assert.deepEqual(events, [{ type: 'Warning', reason: 'FailedMount', message: msg, uid: 'uid-api' }]);
  // Syncs come every 2 s (volumeRetryMs) and on object changes; events follow the kubelet's backoff.
  for (let i = 0; i < 30; i++) {
    h.clock.step(2_000);
    assert.equal((await h.sync(p)).error?.code, 'ERR_FAILED_MOUNT');
  }
  assert.deepEqual(events.map((e) => e.message), Array(7).fill(msg), '31 syncs over 60 s: 7 events (at 0, 2, 4, 6, 10, 18, 34 s: the 500 ms doubling backoff), not 31');
  // The configMap appears: the pod starts and no more FailedMount is recorded.
  h.objects.set('uid-api', objects({ 'app.conf': 'v=1\n', extra: 'x', mode: 'fast' }, { password: 'p' }));
  h.clock.step(2_000);
  assert.equal((await h.sync(p)).error, undefined);
  assert.equal(events.filter((e) => e.reason === 'FailedMount').length, 7);
  assert.ok(events.some((e) => e.reason === 'Started'), 'the pod started once its configMap exists');
  assert.deepEqual(await h.cleanup(p), {});
});
