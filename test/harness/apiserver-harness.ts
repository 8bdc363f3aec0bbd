/**
 * A private, real Kubernetes control plane for tests and benchmarks: etcd 3.4 (Debian
 * `etcd-server`) and kube-apiserver v1.20.2 (built from Debian's `kubernetes` source package) on
 * loopback, HTTPS, `--authorization-mode=Node,RBAC`, `--enable-admission-plugins=NodeRestriction`,
 * with an admin identity (`O=system:masters`), node identities (`CN=system:node:<name>,
 * O=system:nodes`) and static bearer tokens. By default no scheduler or controller-manager runs
 * (options `scheduler` / `controllerManager` start the real v1.20.2 ones): pods are
 * created with `spec.nodeName` set, and `ensureNamespace` creates the ServiceAccount `default`
 * that the ServiceAccount controller would (pod creation is refused without it).
 *
 * What it installs, and where (apiserver-install.ts): etcd-server, etcd-client, openssl and a
 * kubectl via apt when missing (root); kube-apiserver built once by
 * test/harness/build-kube-apiserver.sh and cached at
 * `${SHARDLET_TOOLS_DIR:-/var/cache/shardlet-tools}/kube-apiserver-<debian-version>/kube-apiserver`
 * (~6 min the first time on 2 cores; later starts reuse it). `prepare.ts` does the same before
 * `npm test`; `startControlPlane` does it too when called first (e.g. by `npm run bench`).
 *
 * Isolation (apiserver-slots.ts): every instance has its own temp dir (on /dev/shm when present)
 * with etcd's data, both logs, the PKI and kubeconfigs, and its own three ports from an owned slot,
 * so several instances (several test files, several engineers) run at once on one machine.
 *
 * Lifecycle: startControlPlane() → running ⇄ (killApiserver → apiserver down → restartApiserver)
 * → stop() → stopped. stop() is idempotent (a second call returns the first call's promise): it
 * stops the apiserver and etcd by PID (SIGTERM, SIGKILL after 10 s), gives the slot back and
 * removes the temp dir. A run killed before stop() leaves both daemons running; the next
 * startControlPlane() on this machine finds the dead owner's slot, SIGKILLs the processes whose
 * command line names that instance's temp dir, and removes the dir. A process that exits without
 * stop() (a crashed test file) tears its instances down from an 'exit' hook (SIGKILL, slot, dir).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { createPki, isDns1123Label, issueKubeletClientCert, issueNodeCert, writeKubeconfig, writeTokenFile, CredentialsError, type IssuedToken, type Pki, type TokenUser } from './apiserver-credentials.js';
import { httpGet, type ClientTls } from './apiserver-http.js';
import { ensureControlPlaneTools, ensureKubeComponent, type ControlPlaneTools } from './apiserver-install.js';
import {
  apiserverArgs,
  apiserverReady,
  controllerManagerArgs,
  controlPlaneLayout,
  etcdArgs,
  etcdEndpoint,
  etcdHealthy,
  hasExited,
  schedulerArgs,
  spawnDaemon,
  stopDaemon,
  waitDaemonReady,
  waitExit,
  type ControlPlaneLayout,
  type Daemon,
} from './apiserver-processes.js';
import {
  ControlPlaneHarnessError,
  type ControlPlane,
  type KubectlOptions,
  type KubectlResult,
  type StartControlPlaneOptions,
} from './apiserver-control-plane.js';
import { claimPortSlot, killInstanceProcesses, makeInstanceDir, slotPorts } from './apiserver-slots.js';
import { isAlive } from './host-processes.js';
import type { OwnedSlot } from './owned-slots.js';
import { pollUntil } from './poll.js';

export { ControlPlaneHarnessError, type ControlPlane, type KubectlOptions, type KubectlResult, type StartControlPlaneOptions } from './apiserver-control-plane.js';
export type { ControlPlaneTools } from './apiserver-install.js';
export type { TokenUser } from './apiserver-credentials.js';

const TOKEN_ADMIN: TokenUser = Object.freeze({ name: 'shardlet-token-admin', groups: Object.freeze(['system:masters']) });
const STOP_GRACE_MS = 10_000;
/** Bound on each API call the harness makes itself (the client library sets none). */
const API_CALL_TIMEOUT_MS = 30_000;

/**
 * Instances not yet stopped, torn down synchronously (SIGKILL both daemons, give the slot back,
 * remove the temp dir) if this process exits without stop(): a crashed or forgetful test file
 * leaves nothing running. (A SIGKILLed process runs no hook; the next claim reclaims its slot.)
 */
const liveInstances = new Set<Instance>();
let exitHookInstalled = false;
function trackInstance(i: Instance): void {
  liveInstances.add(i);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const x of liveInstances) x.destroySync();
    });
  }
}

class Instance implements ControlPlane {
  readonly url: string;
  readonly port: number;
  readonly caFile: string;
  readonly adminKubeconfig: string;
  readonly etcdEndpoint: string;
  readonly tmpDir: string;
  readonly apiserverLogPath: string;
  readonly etcdLogPath: string;
  readonly tools: ControlPlaneTools;
  readonly #layout: ControlPlaneLayout;
  readonly #pki: Pki;
  readonly #tls: ClientTls;
  readonly #tokens: readonly IssuedToken[];
  readonly #apiserverArgs: readonly string[];
  readonly #startTimeoutMs: number;
  readonly #slot: OwnedSlot;
  readonly #kubeconfigs = new Map<string, string>();
  #etcd: Daemon | undefined;
  #apiserver: Daemon | undefined;
  /** kube-scheduler / kube-controller-manager when asked for (startComponent). */
  readonly #components: Daemon[] = [];
  #core: CoreV1Api | undefined;
  #stopping: Promise<void> | undefined;

  constructor(deps: {
    layout: ControlPlaneLayout;
    pki: Pki;
    tokens: readonly IssuedToken[];
    tools: ControlPlaneTools;
    slot: OwnedSlot;
    apiserverArgs: readonly string[];
    startTimeoutMs: number;
  }) {
    this.#layout = deps.layout;
    this.#pki = deps.pki;
    this.#tokens = deps.tokens;
    this.#slot = deps.slot;
    this.#apiserverArgs = deps.apiserverArgs;
    this.#startTimeoutMs = deps.startTimeoutMs;
    this.tools = deps.tools;
    this.tmpDir = deps.layout.tmpDir;
    this.port = deps.layout.apiserverPort;
    this.url = `https://127.0.0.1:${this.port}`;
    this.caFile = deps.pki.caFile;
    this.etcdEndpoint = etcdEndpoint(deps.layout);
    this.apiserverLogPath = deps.layout.apiserverLogPath;
    this.etcdLogPath = deps.layout.etcdLogPath;
    this.#tls = { ca: fs.readFileSync(deps.pki.caFile), cert: fs.readFileSync(deps.pki.admin.certFile), key: fs.readFileSync(deps.pki.admin.keyFile) };
    this.adminKubeconfig = writeKubeconfig(path.join(this.tmpDir, 'kubeconfig-admin.json'), this.url, this.caFile, 'shardlet-admin', deps.pki.admin);
  }

  get apiserverPid(): number | undefined {
    return this.#apiserver && !hasExited(this.#apiserver) ? this.#apiserver.child.pid : undefined;
  }

  get etcdPid(): number {
    return this.#etcd?.child.pid ?? -1;
  }

  #checkRunning(): void {
    if (this.#stopping) throw new ControlPlaneHarnessError('ERR_HARNESS_STOPPED', 'control plane already stopped');
  }

  async startEtcd(): Promise<void> {
    fs.mkdirSync(this.#layout.etcdDataDir, { recursive: true, mode: 0o700 });
    const d = spawnDaemon(this.tools.etcd, etcdArgs(this.#layout), this.etcdLogPath);
    this.#etcd = d;
    await waitDaemonReady(`etcd on ${this.etcdEndpoint}`, d, this.etcdLogPath, this.#startTimeoutMs, () => etcdHealthy(this.#layout));
  }

  async startApiserver(): Promise<void> {
    const d = spawnDaemon(this.tools.kubeApiserver, this.#apiserverArgs, this.apiserverLogPath);
    this.#apiserver = d;
    await waitDaemonReady(`kube-apiserver /readyz on ${this.url}`, d, this.apiserverLogPath, this.#startTimeoutMs, () => apiserverReady(this.url, this.#tls));
  }

  /**
   * Starts a control-plane component (kube-scheduler, kube-controller-manager) with its log at
   * `<tmpDir>/<name>.log`; ready once it holds its leader-election Lease in kube-system.
   */
  async startComponent(name: 'kube-scheduler' | 'kube-controller-manager', bin: string, args: readonly string[]): Promise<void> {
    const logPath = path.join(this.tmpDir, `${name}.log`);
    const d = spawnDaemon(bin, args, logPath);
    this.#components.push(d);
    const leaseUrl = `${this.url}/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${name}`;
    await waitDaemonReady(`${name} holding its lease`, d, logPath, this.#startTimeoutMs, async () => {
      const r = await httpGet(leaseUrl, { timeoutMs: 10_000, tls: this.#tls }).catch(() => undefined);
      return r?.status === 200 && /"holderIdentity":"[^"]+"/.test(r.body);
    });
  }

  nodeKubeconfig(nodeName: string): string {
    this.#checkRunning();
    const key = `node:${nodeName}`;
    const existing = this.#kubeconfigs.get(key);
    if (existing !== undefined) return existing;
    let pair;
    try {
      pair = issueNodeCert(this.tools.openssl, this.#pki, nodeName);
    } catch (err) {
      if (err instanceof CredentialsError && err.code === 'ERR_HARNESS_BAD_NAME') throw new ControlPlaneHarnessError('ERR_HARNESS_BAD_NAME', err.message);
      throw err;
    }
    const file = writeKubeconfig(path.join(this.tmpDir, `kubeconfig-node-${nodeName}.json`), this.url, this.caFile, `system:node:${nodeName}`, pair);
    this.#kubeconfigs.set(key, file);
    return file;
  }

  tokenKubeconfig(userName: string = TOKEN_ADMIN.name): string {
    this.#checkRunning();
    const index = this.#tokens.findIndex((t) => t.name === userName);
    const t = this.#tokens[index];
    if (t === undefined) throw new ControlPlaneHarnessError('ERR_HARNESS_BAD_NAME', `no token user ${JSON.stringify(userName)} (declare it in tokenUsers)`);
    const key = `token:${userName}`;
    const existing = this.#kubeconfigs.get(key);
    if (existing !== undefined) return existing;
    const file = writeKubeconfig(path.join(this.tmpDir, `kubeconfig-token-${index}.json`), this.url, this.caFile, userName, { token: t.token });
    this.#kubeconfigs.set(key, file);
    return file;
  }

  async kubectl(args: readonly string[], opts: KubectlOptions = {}): Promise<KubectlResult> {
    this.#checkRunning();
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const kubeconfig = opts.kubeconfig ?? this.adminKubeconfig;
    return new Promise((resolve) => {
      const child = execFile(
        this.tools.kubectl,
        [`--kubeconfig=${kubeconfig}`, ...args],
        { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' },
        (err, stdout, stderr) => {
          const timedOut = err !== null && err.killed === true;
          const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
          resolve({ code, stdout, stderr: timedOut ? `${stderr}\n(kubectl killed after ${timeoutMs} ms)` : stderr, timedOut });
        },
      );
      child.stdin?.end(opts.stdin ?? '');
    });
  }

  #etcdctl(args: readonly string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        this.tools.etcdctl,
        [`--endpoints=${this.etcdEndpoint}`, '--command-timeout=20s', ...args],
        { timeout: 30_000, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024, encoding: 'utf8', env: { ...process.env, ETCDCTL_API: '3' } },
        (err, stdout, stderr) => {
          if (err) reject(new ControlPlaneHarnessError('ERR_HARNESS_ETCDCTL', `etcdctl ${args.join(' ')}: ${stderr.trim() || err.message}`));
          else resolve(stdout);
        },
      );
    });
  }

  async compact(): Promise<number> {
    this.#checkRunning();
    // The bump: a watch from resourceVersion r asks etcd for revisions from r+1, which counts as
    // compacted only when r+1 < the compaction revision. Two writes outside /registry put the
    // compaction revision at least two past any r a client has seen (r ≤ R → r+1 ≤ R+1 < R+2),
    // so every such watch gets 410, even from a client that has missed nothing.
    await this.#etcdctl(['put', '/shardlet-harness/compact-bump', 'a']);
    await this.#etcdctl(['put', '/shardlet-harness/compact-bump', 'b']);
    const status = JSON.parse(await this.#etcdctl(['endpoint', 'status', '--write-out=json'])) as Array<{ Status?: { header?: { revision?: number } } }>;
    const rev = status[0]?.Status?.header?.revision;
    if (typeof rev !== 'number' || !Number.isSafeInteger(rev) || rev < 1) {
      throw new ControlPlaneHarnessError('ERR_HARNESS_ETCDCTL', `etcdctl endpoint status: no revision in ${JSON.stringify(status)}`);
    }
    await this.#etcdctl(['compact', String(rev)]);
    return rev;
  }

  async killApiserver(): Promise<void> {
    this.#checkRunning();
    const d = this.#apiserver;
    if (d === undefined || hasExited(d)) return;
    d.child.kill('SIGKILL');
    if (!(await waitExit(d, 10_000))) throw new ControlPlaneHarnessError('ERR_HARNESS_API', `kube-apiserver pid ${d.child.pid} still running 10 s after SIGKILL`);
  }

  async restartApiserver(): Promise<void> {
    await this.killApiserver();
    await this.startApiserver();
  }

  async metricsText(): Promise<string> {
    this.#checkRunning();
    const r = await httpGet(`${this.url}/metrics`, { timeoutMs: 30_000, tls: this.#tls });
    if (r.status !== 200) throw new ControlPlaneHarnessError('ERR_HARNESS_API', `GET /metrics: HTTP ${r.status}: ${r.body.slice(0, 500)}`);
    return r.body;
  }

  #coreApi(): CoreV1Api {
    if (this.#core === undefined) {
      const kc = new KubeConfig();
      kc.loadFromFile(this.adminKubeconfig);
      this.#core = kc.makeApiClient(CoreV1Api);
    }
    return this.#core;
  }

  async ensureNamespace(ns: string): Promise<void> {
    this.#checkRunning();
    if (!isDns1123Label(ns)) throw new ControlPlaneHarnessError('ERR_HARNESS_BAD_NAME', `namespace ${JSON.stringify(ns)} is not a DNS-1123 label`);
    const core = this.#coreApi();
    const createdOrExists = async (create: () => Promise<unknown>, what: string): Promise<void> => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ControlPlaneHarnessError('ERR_HARNESS_API', `create ${what}: no answer within ${API_CALL_TIMEOUT_MS} ms`)), API_CALL_TIMEOUT_MS);
      });
      try {
        await Promise.race([create(), deadline]);
      } catch (err) {
        if (err instanceof ControlPlaneHarnessError) throw err;
        if (err instanceof ApiException && err.code === 409) return;
        throw new ControlPlaneHarnessError('ERR_HARNESS_API', `create ${what}: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        clearTimeout(timer);
      }
    };
    await createdOrExists(() => core.createNamespace({ body: { metadata: { name: ns } } }), `namespace ${ns}`);
    await createdOrExists(() => core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'default' } } }), `serviceaccount ${ns}/default`);
    await createdOrExists(
      () => core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'kube-root-ca.crt' }, data: { 'ca.crt': this.#tls.ca.toString('utf8') } } }),
      `configmap ${ns}/kube-root-ca.crt`,
    );
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  /** The exit hook's teardown: synchronous, forceful, no waiting. */
  destroySync(): void {
    for (const d of [...this.#components, this.#apiserver, this.#etcd]) if (d && !hasExited(d)) d.child.kill('SIGKILL');
    this.#slot.release();
    fs.rmSync(this.tmpDir, { recursive: true, force: true });
  }

  async #stop(): Promise<void> {
    for (const d of this.#components) await stopDaemon(d, STOP_GRACE_MS);
    if (this.#apiserver) await stopDaemon(this.#apiserver, STOP_GRACE_MS);
    if (this.#etcd) await stopDaemon(this.#etcd, STOP_GRACE_MS);
    const leftovers = killInstanceProcesses(this.tmpDir);
    await pollUntil(() => (leftovers.some(isAlive) ? undefined : true), { what: 'leftover control-plane processes to exit', timeoutMs: 10_000 });
    this.#slot.release();
    fs.rmSync(this.tmpDir, { recursive: true, force: true, maxRetries: 3 });
    liveInstances.delete(this);
  }
}

/**
 * Installs what is missing (see module comment), then starts etcd and kube-apiserver and resolves
 * once /readyz answers `ok`. On failure everything started so far is stopped and removed.
 */
export async function startControlPlane(opts: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const tools = await ensureControlPlaneTools();
  const tmpDir = makeInstanceDir();
  let slot: OwnedSlot | undefined;
  let instance: Instance | undefined;
  try {
    slot = await claimPortSlot(tmpDir);
    const layout = controlPlaneLayout(tmpDir, slotPorts(slot.slot));
    const pki = createPki(tools.openssl, layout.pkiDir);
    const tokens = writeTokenFile(layout.tokenFile, [TOKEN_ADMIN, ...(opts.tokenUsers ?? [])]);
    const kubeletClient = opts.kubeletClient === true ? issueKubeletClientCert(tools.openssl, pki) : undefined;
    const kubeletArgs = kubeletClient
      ? [`--kubelet-client-certificate=${kubeletClient.certFile}`, `--kubelet-client-key=${kubeletClient.keyFile}`, '--kubelet-preferred-address-types=InternalIP']
      : [];
    const args = apiserverArgs(layout, pki, { watchCache: opts.watchCache ?? false, extraArgs: [...kubeletArgs, ...(opts.extraApiserverArgs ?? [])] });
    instance = new Instance({ layout, pki, tokens, tools, slot, apiserverArgs: args, startTimeoutMs: opts.startTimeoutMs ?? 120_000 });
    trackInstance(instance);
    await instance.startEtcd();
    await instance.startApiserver();
    if (opts.scheduler === true) await instance.startComponent('kube-scheduler', await ensureKubeComponent('kube-scheduler'), schedulerArgs(instance.adminKubeconfig));
    if (opts.controllerManager === true) {
      const bin = await ensureKubeComponent('kube-controller-manager');
      await instance.startComponent('kube-controller-manager', bin, controllerManagerArgs(instance.adminKubeconfig, pki, opts.extraControllerManagerArgs ?? []));
    }
    return instance;
  } catch (err) {
    if (instance) await instance.stop();
    else {
      slot?.release();
      fs.rmSync(tmpDir, { recursive: true, force: true });
    }
    throw err;
  }
}
