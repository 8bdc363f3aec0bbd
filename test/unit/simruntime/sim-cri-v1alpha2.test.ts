/**
 * The simulated runtime serves CRI runtime.v1alpha2 beside v1, as containerd 1.6 does (a kubelet
 * before 1.23 speaks v1alpha2 only; the bench runs a v1.20.2 kubelet on the sim). The client here
 * is built from the upstream v1alpha2 api.proto of Kubernetes v1.20.2 (test/fixtures), not from
 * the product's renamed v1 definition, so a field the two encode differently would show.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_LOADER_OPTIONS } from '../../../src/shared/cri/cri-proto.js';
import { containerConfig, sandboxConfig, startHarness, type Harness } from './sim-harness.js';

// dist/test/unit/simruntime/ → the repository root.
const ALPHA_PROTO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'test', 'fixtures', 'cri-api-v1alpha2', 'api.proto');

type Unary = (method: string, req: object) => Promise<Record<string, unknown>>;

function alphaClients(endpoint: string): { runtime: Unary; image: Unary; close(): void } {
  const def = protoLoader.loadSync(ALPHA_PROTO, PROTO_LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as { runtime: { v1alpha2: Record<string, grpc.ServiceClientConstructor> } };
  const R = pkg.runtime.v1alpha2['RuntimeService'];
  const I = pkg.runtime.v1alpha2['ImageService'];
  assert.ok(R && I);
  const rt = new R(endpoint, grpc.credentials.createInsecure());
  const im = new I(endpoint, grpc.credentials.createInsecure());
  const call =
    (c: grpc.Client): Unary =>
    (method, req) =>
      new Promise((resolve, reject) => {
        const fn = (c as unknown as Record<string, (r: object, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, v: Record<string, unknown>) => void) => void>)[method];
        assert.ok(fn, `client has ${method}`);
        fn.call(c, req, { deadline: Date.now() + 10_000 }, (e, v) => (e ? reject(e) : resolve(v)));
      });
  return { runtime: call(rt), image: call(im), close: () => (rt.close(), im.close()) };
}

describe('sim-runtime serves CRI runtime.v1alpha2', () => {
  let h: Harness;
  let alpha: ReturnType<typeof alphaClients>;
  before(async () => {
    h = await startHarness();
    alpha = alphaClients(h.rt.endpoint);
  });
  after(async () => {
    alpha.close();
    await h.close();
  });

  it('answers Version with runtimeApiVersion v1alpha2 (v1 still answers v1)', async () => {
    const v = await alpha.runtime('Version', { version: '0.1.0' });
    assert.equal(v['version'], '0.1.0');
    assert.equal(v['runtimeApiVersion'], 'v1alpha2');
    assert.equal((await h.client.version()).runtimeApiVersion, 'v1');
  });

  it('runs a pod through the v1alpha2 calls a v1.20 kubelet makes, one state with v1', async () => {
    const sb = sandboxConfig({ name: 'alpha', hostNetwork: true });
    const { podSandboxId } = (await alpha.runtime('RunPodSandbox', { config: sb })) as { podSandboxId: string };
    assert.ok(podSandboxId);
    const { containerId } = (await alpha.runtime('CreateContainer', { podSandboxId, config: containerConfig('c', ['sleep', '1000']), sandboxConfig: sb })) as { containerId: string };
    await alpha.runtime('StartContainer', { containerId });
    // ListContainers is answered from pre-encoded v1 frames: the v1alpha2 decoder must read them.
    const list = (await alpha.runtime('ListContainers', { filter: { podSandboxId } })) as { containers: Array<Record<string, unknown>> };
    assert.equal(list.containers.length, 1);
    assert.equal(list.containers[0]?.['id'], containerId);
    assert.equal(list.containers[0]?.['state'], 'CONTAINER_RUNNING');
    assert.equal((list.containers[0]?.['metadata'] as { name: string }).name, 'c');
    const sbs = (await alpha.runtime('ListPodSandbox', { filter: { id: podSandboxId } })) as { items: Array<Record<string, unknown>> };
    assert.equal(sbs.items[0]?.['state'], 'SANDBOX_READY');
    const st = (await alpha.runtime('ContainerStatus', { containerId })) as { status: Record<string, unknown> };
    assert.equal(st.status['state'], 'CONTAINER_RUNNING');
    assert.equal((st.status['image'] as { image: string }).image, 'docker.io/library/busybox:latest');
    const ex = (await alpha.runtime('ExecSync', { containerId, cmd: ['sh', '-c', 'echo ok; exit 3'], timeout: 5 })) as { stdout: Buffer; exitCode: number };
    assert.equal(ex.stdout.toString(), 'ok\n');
    assert.equal(ex.exitCode, 3);
    // The same pod through v1: one runtime, two API versions.
    assert.equal((await h.client.containerStatus(containerId)).status?.state, 'CONTAINER_RUNNING');
    await alpha.runtime('StopContainer', { containerId, timeout: 0 });
    await alpha.runtime('RemoveContainer', { containerId });
    await alpha.runtime('StopPodSandbox', { podSandboxId });
    await alpha.runtime('RemovePodSandbox', { podSandboxId });
    assert.equal(((await alpha.runtime('ListPodSandbox', {})) as { items: unknown[] }).items.length, 0);
  });

  it('answers Status, UpdateRuntimeConfig and the ImageService', async () => {
    const s = (await alpha.runtime('Status', {})) as { status: { conditions: Array<{ type: string; status: boolean }> } };
    assert.deepEqual(
      s.status.conditions.map((c) => [c.type, c.status]),
      [
        ['RuntimeReady', true],
        ['NetworkReady', true],
      ],
    );
    assert.deepEqual(await alpha.runtime('UpdateRuntimeConfig', { runtimeConfig: { networkConfig: { podCidr: '10.0.0.0/24' } } }), {});
    const img = (await alpha.image('ImageStatus', { image: { image: 'busybox' } })) as { image: { id: string } | null };
    assert.ok(img.image?.id);
    const fs = (await alpha.image('ImageFsInfo', {})) as { imageFilesystems: unknown[] };
    assert.ok(fs.imageFilesystems.length >= 1);
  });
});
