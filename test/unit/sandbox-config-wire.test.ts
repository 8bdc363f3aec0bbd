/**
 * CreateContainer reuses the sandbox config's bytes from RunPodSandbox (sandbox-config-wire.ts).
 * The spliced request must be the very bytes the plain encoding gives, and the runtime must
 * accept it: checked on the proto's own serializers and through both CRI transports.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildUnaryMethods } from '../../src/shared/cri/cri-methods.js';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { SandboxConfigWire } from '../../src/shared/cri/sandbox-config-wire.js';
import type { ContainerConfig, PodSandboxConfig } from '../../src/shared/cri/cri-types.js';
import { startHarness } from './simruntime/sim-harness.js';

function sandboxConfig(name: string, labels: number): PodSandboxConfig {
  const extra = Object.fromEntries(Array.from({ length: labels }, (_, i) => [`example.com/label-${i}`, `välue-${i}`]));
  return {
    metadata: { name, uid: `uid-${name}`, namespace: 'wire', attempt: 0 },
    hostname: name,
    logDirectory: `/tmp/wire/${name}`,
    labels: { 'io.kubernetes.pod.name': name, ...extra },
    annotations: { note: 'ünïcode ✓' },
    linux: { cgroupParent: '', securityContext: { namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } } },
  } as PodSandboxConfig;
}

const containerConfig: ContainerConfig = {
  metadata: { name: 'app', attempt: 0 },
  image: { image: 'busybox:1.36' },
  command: ['sleep', '100000'],
  args: [],
  labels: { 'io.kubernetes.container.name': 'app' },
  annotations: {},
  logPath: 'app/0.log',
} as ContainerConfig;

test('a spliced CreateContainerRequest is byte for byte the plain encoding (small and multi-byte lengths)', () => {
  const methods = buildUnaryMethods();
  const run = methods.get('RunPodSandbox');
  const create = methods.get('CreateContainer');
  assert.ok(run && create);
  for (const labels of [0, 3, 40]) {
    const wire = new SandboxConfigWire();
    const config = sandboxConfig(`p${labels}`, labels);
    wire.remember(config, run.serialize({ config, runtimeHandler: 'runc' }));
    const req = { podSandboxId: 'sb-1', config: containerConfig, sandboxConfig: config };
    const spliced = wire.createContainerRequest(config, () => create.serialize({ podSandboxId: req.podSandboxId, config: req.config }));
    assert.ok(spliced !== undefined, 'the remembered config is reused');
    assert.ok(spliced.equals(create.serialize(req)), `${labels} labels: the spliced bytes differ from the plain encoding`);
    assert.equal(wire.createContainerRequest(sandboxConfig(`p${labels}`, labels), () => Buffer.alloc(0)), undefined, 'an equal but other object is not reused');
  }
  const wire = new SandboxConfigWire();
  wire.remember('not an object', Buffer.of(0x0a, 0));
  assert.equal(wire.createContainerRequest(undefined, () => Buffer.alloc(0)), undefined);
});

for (const transport of ['h2', 'grpc-js'] as const) {
  test(`${transport}: RunPodSandbox then CreateContainer with the same config: the runtime accepts the spliced request`, async () => {
    const h = await startHarness();
    const client = new CriClient({ transport, endpoint: h.rt.endpoint, timeoutMs: 10_000 });
    try {
      const config = sandboxConfig(`splice-${transport}`, 40);
      await client.pullImage({ image: { image: 'busybox:1.36' } });
      const sandboxId = await client.runPodSandbox({ config });
      const containerId = await client.createContainer({ podSandboxId: sandboxId, config: containerConfig, sandboxConfig: config });
      const st = await client.containerStatus(containerId);
      assert.equal(st.status?.metadata?.name, 'app');
      assert.equal(st.status?.labels?.['io.kubernetes.container.name'], 'app');
    } finally {
      client.close();
      await h.close();
    }
  });
}
