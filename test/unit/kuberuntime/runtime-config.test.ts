/** Sandbox and container configs, labels/annotations, hash, env expansion, quantities. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { generatePodSandboxConfig, podHostname } from '../../../workers/kuberuntime/sandbox-config.js';
import { generateContainerConfig, linuxContainerResources } from '../../../workers/kuberuntime/container-config.js';
import { fnv1a32 } from '../../../src/shared/hash/fnv1a.js';
import { hashContainer, stableJson } from '../../../workers/kuberuntime/container-hash.js';
import { expand } from '../../../workers/kuberuntime/container-env.js';
import { cpuMillisOrZero as cpuMillis, parseApproximate, unitValueOrZero as quantityValue } from '../../../src/shared/resources/quantity.js';
import { listOnlyDetails, toContainerStatus } from '../../../workers/runtime-status/cri-status-convert.js';
import type { Container } from '../../../src/shared/cri/cri-types.js';
import { container, makePod } from './kuberuntime-harness.js';

const env = { nodeName: 'node-1', hostIP: '192.168.1.10', podIPs: ['10.88.0.7'] };
const seccomp = { profileRoot: '/var/lib/shardlet/seccomp', defaultRuntimeProfile: false };

test('sandbox config: metadata, log directory, labels, annotations, ports, namespaces', () => {
  const pod = makePod({ containers: [container('app', { ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 53, protocol: 'UDP' }] })] });
  pod.metadata!.annotations!['note'] = 'x';
  const cfg = generatePodSandboxConfig(pod, 3, { podLogsDir: '/var/log/pods' });
  assert.deepEqual(cfg.metadata, { name: 'web', namespace: 'default', uid: 'uid-web', attempt: 3 });
  assert.equal(cfg.logDirectory, '/var/log/pods/default_web_uid-web');
  assert.equal(cfg.hostname, 'web');
  assert.deepEqual(cfg.labels, { app: 'web', 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'default', 'io.kubernetes.pod.uid': 'uid-web' });
  assert.equal(cfg.annotations?.['note'], 'x');
  assert.deepEqual(cfg.portMappings, [{ protocol: 'TCP', containerPort: 80, hostPort: 8080 }, { protocol: 'UDP', containerPort: 53 }]);
  assert.deepEqual(cfg.linux?.securityContext?.namespaceOptions, { network: 'POD', pid: 'CONTAINER', ipc: 'POD' });

  const host = makePod({ hostNetwork: true, hostPID: true, containers: [container('app')] });
  const hc = generatePodSandboxConfig(host, 0, { podLogsDir: '/logs' });
  assert.deepEqual(hc.linux?.securityContext?.namespaceOptions, { network: 'NODE', pid: 'NODE', ipc: 'POD' });
  assert.equal(hc.hostname, undefined, 'host-network pods use the node hostname');
  assert.equal(hc.portMappings, undefined);
  const long = makePod({ containers: [container('a')] }, { name: `${'a'.repeat(62)}-b` });
  assert.equal(podHostname(long), 'a'.repeat(62));
});

test('container config: metadata, image ref, command/args with $(VAR), env, labels, annotations, log path', () => {
  const pod: V1Pod = makePod({
    terminationGracePeriodSeconds: 45,
    containers: [container('app', {
      command: ['/bin/sh', '-c'], args: ['echo $(GREETING) $$(NOT) $(MISSING)'], workingDir: '/work',
      env: [{ name: 'NAME', value: 'world' }, { name: 'GREETING', value: 'hello $(NAME)' }, { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }, { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
      ports: [{ containerPort: 80 }],
      lifecycle: { preStop: { exec: { command: ['drain'] } } },
    })],
  });
  const c = pod.spec!.containers[0]!;
  const r = generateContainerConfig({ pod, container: c, restartCount: 2, imageRef: 'sha256:abc', env, imageUser: { uid: 0 }, seccomp });
  assert.ok(r.ok);
  const cfg = r.config;
  assert.deepEqual(cfg.metadata, { name: 'app', attempt: 2 });
  assert.deepEqual(cfg.image, { image: 'sha256:abc', userSpecifiedImage: 'busybox:1' });
  assert.deepEqual(cfg.command, ['/bin/sh', '-c']);
  assert.deepEqual(cfg.args, ['echo hello world $(NOT) $(MISSING)']);
  assert.equal(cfg.workingDir, '/work');
  assert.deepEqual(cfg.envs, [{ key: 'NAME', value: 'world' }, { key: 'GREETING', value: 'hello world' }, { key: 'POD', value: 'web' }, { key: 'IP', value: '10.88.0.7' }]);
  assert.equal(cfg.logPath, 'app/2.log');
  assert.deepEqual(cfg.labels, { 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'default', 'io.kubernetes.pod.uid': 'uid-web', 'io.kubernetes.container.name': 'app' });
  const a = cfg.annotations!;
  assert.equal(a['io.kubernetes.container.hash'], hashContainer(c));
  assert.equal(a['io.kubernetes.container.restartCount'], '2');
  // The live read of the annotation: the runtime status the PLEG and getPodStatus build from a listed container.
  const listed = (annotations: Record<string, string>): Container => ({ id: 'c1', podSandboxId: 's1', metadata: { name: 'app', attempt: 2 }, labels: cfg.labels ?? {}, annotations, state: 'CONTAINER_RUNNING', createdAt: '1' } as unknown as Container);
  assert.equal(toContainerStatus(listed(a), 's1', listOnlyDetails(listed(a))).restartCount, 2, 'the created annotation reads back as the restart count');
  for (const bad of ['-1', 'x', '', '2x', '1e400', '99999999999999999999']) {
    const c = listed({ ...a, 'io.kubernetes.container.restartCount': bad });
    assert.equal(toContainerStatus(c, 's1', listOnlyDetails(c)).restartCount, 0, `annotation ${JSON.stringify(bad)}`);
  }
  const none = listed({});
  assert.equal(toContainerStatus(none, 's1', listOnlyDetails(none)).restartCount, 0, 'no annotation');
  assert.equal(a['io.kubernetes.container.terminationMessagePath'], '/dev/termination-log');
  assert.equal(a['io.kubernetes.pod.terminationGracePeriod'], '45');
  assert.equal(a['io.kubernetes.container.preStopHandler'], '{"exec":{"command":["drain"]}}');
  assert.equal(a['io.kubernetes.container.ports'], '[{"containerPort":80}]');

  const secret = makePod({ containers: [container('app', { env: [{ name: 'PW', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] })] });
  const bad = generateContainerConfig({ pod: secret, container: secret.spec!.containers[0]!, restartCount: 0, imageRef: 'x', env, imageUser: { uid: 0 }, seccomp });
  // No API objects were sent for the pod (standalone, or not yet resolved): it waits for them.
  assert.deepEqual(bad, { ok: false, message: 'waiting for secret "s" from the API server' });
});

test('resources: cpu shares from the request, quota from the limit, memory limit in bytes', () => {
  assert.deepEqual(linuxContainerResources(container('a')), { cpuShares: 2, memoryLimitInBytes: 0 });
  assert.deepEqual(linuxContainerResources(container('a', { resources: { requests: { cpu: '250m' }, limits: { cpu: '500m', memory: '128Mi' } } })), {
    cpuShares: 256, memoryLimitInBytes: 134217728, cpuPeriod: 100000, cpuQuota: 50000,
  });
  assert.equal(linuxContainerResources(container('a', { resources: { limits: { cpu: '2' } } })).cpuShares, 2048, 'request defaults to the limit');
  assert.equal(linuxContainerResources(container('a', { resources: { limits: { cpu: '1m' } } })).cpuQuota, 1000, 'quota floor');
});

test('quantities', () => {
  assert.equal(cpuMillis('100m'), 100);
  assert.equal(cpuMillis('0.5'), 500);
  assert.equal(cpuMillis('2'), 2000);
  assert.equal(cpuMillis(undefined), 0);
  assert.equal(quantityValue('1Gi'), 1073741824);
  assert.equal(quantityValue('1G'), 1e9);
  assert.equal(quantityValue('1e3'), 1000);
  assert.equal(quantityValue('1.5Ki'), 1536);
  assert.equal(parseApproximate('12x'), undefined);
  assert.equal(cpuMillis('-1'), 0);
  assert.equal(cpuMillis('100n'), 1);
  assert.equal(parseApproximate('1.5'), 1.5);
  assert.equal(parseApproximate('0.1'), 0.1);
  assert.equal(parseApproximate('250m'), 0.25);
  assert.equal(parseApproximate('1Gi'), 2 ** 30);
});

test('container hash: stable across key order, sensitive to spec, blind to resources', () => {
  const a = hashContainer({ name: 'a', image: 'i:1', command: ['x'], env: [{ name: 'A', value: '1' }] });
  const b = hashContainer({ env: [{ value: '1', name: 'A' }], command: ['x'], image: 'i:1', name: 'a' });
  assert.equal(a, b);
  assert.match(a, /^[0-9a-f]{1,8}$/);
  assert.notEqual(hashContainer({ name: 'a', image: 'i:2' }), hashContainer({ name: 'a', image: 'i:1' }));
  assert.equal(hashContainer({ name: 'a', image: 'i:1', resources: { limits: { cpu: '1' } } }), hashContainer({ name: 'a', image: 'i:1' }));
  assert.equal(stableJson({ b: 1, a: undefined, c: [2, { z: 1, y: null }] }), '{"b":1,"c":[2,{"z":1}]}');
  // The kubelet's format: FNV-1a 32 of the stable JSON, lower-case hex.
  assert.equal(hashContainer({ name: 'a', image: 'i:1' }), fnv1a32(stableJson({ image: 'i:1', name: 'a' })).toString(16));
});

test('$(VAR) expansion follows the kubelet: defined vars, $$ escapes, unknown left as is', () => {
  const vars = new Map([['A', 'x']]);
  const look = (n: string): string | undefined => vars.get(n);
  assert.equal(expand('$(A)-$(B)-$$(A)-$-$(', look), 'x-$(B)-$(A)-$-$(');
});
