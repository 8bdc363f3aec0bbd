/**
 * Test-machine preparation, run by `test/run-all.ts` before any test file (and runnable on its
 * own: `node dist/test/harness/prepare.js`): installs (apt-packages.ts: apt, root, only what is
 * missing) what the containerd harness, the CRI contract suite, the Prometheus scrape test and the
 * grpc-go client test need, then what the kube-apiserver harness needs (apiserver-install.ts:
 * etcd-server, etcd-client, openssl, a kubectl, and kube-apiserver built from Debian's
 * `kubernetes` source package, cached under /var/cache/shardlet-tools: ~6 min the first time,
 * with progress on stderr; a no-op later).
 */
import { fileURLToPath } from 'node:url';
import { ensureAllKubeBinaries, ensureControlPlaneTools } from './apiserver-install.js';
import { ensurePackages, PrepareError, realHost, type PrepareHost, type Requirement } from './apt-packages.js';

/** What a private containerd with CNI and the locally built images needs. */
export const CONTAINERD_REQUIREMENTS: readonly Requirement[] = Object.freeze([
  { pkg: 'containerd', paths: ['/usr/bin/containerd', '/usr/bin/ctr', '/usr/bin/containerd-shim-runc-v2'] },
  { pkg: 'runc', paths: ['/usr/sbin/runc'] },
  { pkg: 'containernetworking-plugins', paths: ['/usr/lib/cni/bridge', '/usr/lib/cni/host-local', '/usr/lib/cni/loopback'] },
  { pkg: 'gcc', paths: ['/usr/bin/gcc'] },
  { pkg: 'libc6-dev', paths: [] },
  { pkg: 'busybox-static', paths: ['/bin/busybox'] },
]);

/** The Go toolchain and Debian's grpc-go, to build test/harness/go-grpc-client. */
export const GO_GRPC_CLIENT_REQUIREMENTS: readonly Requirement[] = Object.freeze([
  { pkg: 'golang-go', paths: ['/usr/bin/go'] },
  { pkg: 'golang-google-grpc-dev', paths: ['/usr/share/gocode/src/google.golang.org/grpc/clientconn.go'] },
]);

/** Every package `npm test` needs (the control plane's come with ensureControlPlaneTools). */
export const REQUIREMENTS: readonly Requirement[] = Object.freeze([
  ...CONTAINERD_REQUIREMENTS,
  { pkg: 'prometheus', paths: ['/usr/bin/prometheus'] },
  ...GO_GRPC_CLIENT_REQUIREMENTS,
]);

/** Installs `requirements`; 0 on success, 1 with a message. */
export function preparePackages(requirements: readonly Requirement[] = REQUIREMENTS, host: PrepareHost = realHost): number {
  try {
    ensurePackages(requirements, host);
    return 0;
  } catch (err) {
    if (!(err instanceof PrepareError)) throw err;
    process.stderr.write(`prepare: ${err.message}\n`);
    return 1;
  }
}

/** etcd, etcdctl, kubectl, openssl and the cached Kubernetes builds (apiserver-install.ts). */
async function prepareControlPlane(): Promise<number> {
  try {
    // The apiserver, scheduler, controller-manager and kubelet (hollow-node and kubelet-beside
    // tests) built from one source unpack, before any test needs them.
    const others = await ensureAllKubeBinaries();
    const tools = await ensureControlPlaneTools();
    process.stdout.write(`prepare: kube-apiserver harness ready (${tools.kubeApiserver})\n`);
    process.stdout.write(`prepare: kube-scheduler, kube-controller-manager, kubelet ready (${others.join(', ')})\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`prepare: kube-apiserver harness: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

/** The CLI / run-all entry: everything `npm test` needs. */
export async function prepare(): Promise<number> {
  const code = preparePackages();
  if (code !== 0) return code;
  return prepareControlPlane();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = await prepare();
}
