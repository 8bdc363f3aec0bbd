/**
 * A private, real Kubernetes control plane for tests and benchmarks: etcd 3.4 (Debian
 * `etcd-server`) and kube-apiserver v1.20.2 (built from Debian's `kubernetes` source package) on
 * loopback, HTTPS, `--authorization-mode=Node,RBAC`, `--enable-admission-plugins=NodeRestriction`,
 * with an admin identity (`O=system:masters`), node identities (`CN=system:node:<name>,
 * O=system:nodes`) and static bearer tokens. No scheduler or controller-manager runs: pods are
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
 * Isolation: every instance has its own temp dir (`/dev/shm/shardlet-kapi-*` when /dev/shm
 * exists, so etcd's fsyncs cost nothing; else the OS temp dir) holding etcd's data, both logs, the
 * PKI and kubeconfigs, and its own ports from an owned slot (owned-slots.ts, registry
 * `<tmpdir>/shardlet-harness-apiserver-slots`): slot N owns 24000+10N (etcd client), +1 (etcd
 * peer), +2 (apiserver) — below the kernel's ephemeral range, so outgoing connections never hold
 * them, and each is checked free before the slot is kept.
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
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { createPki, isDns1123Label, issueNodeCert, writeKubeconfig, writeTokenFile, CredentialsError, type IssuedToken, type Pki, type TokenUser } from './apiserver-credentials.js';
import { httpGet, type ClientTls } from './apiserver-http.js';
import { ensureControlPlaneTools, type ControlPlaneTools } from './apiserver-install.js';
import {
  apiserverArgs,
  apiserverReady,
  controlPlaneLayout,
  etcdArgs,
  etcdEndpoint,
  etcdHealthy,
  hasExited,
  spawnDaemon,
  stopDaemon,
  waitDaemonReady,
  waitExit,
  type ControlPlaneLayout,
  type Daemon,
} from './apiserver-processes.js';
import { findProcesses, isAlive, signal } from './host-processes.js';
import { claimSlot, type OwnedSlot } from './owned-slots.js';
import { pollUntil } from './poll.js';

export interface StartControlPlaneOptions {
  /** Bound on etcd health + apiserver /readyz, per start and per restart (default 120 s). Not counting a first-time build. */
  readonly startTimeoutMs?: number;
  /**
   * The apiserver's `--watch-cache` (default **false** here; true in a real cluster). Without the
   * watch cache every watch is served by etcd, so `compact()` makes any watch (re)started from a
   * resourceVersion seen before it get 410 Gone — deterministic expiry for tests. With it, a watch
   * is served from the apiserver's memory, compaction changes nothing, and 410 comes only for a
   * resourceVersion older than the cache's window (e.g. one from before `restartApiserver()`).
   * Lists, gets and request counts behave the same either way.
   */
  readonly watchCache?: boolean;
  /**
   * Static bearer-token users, in addition to the built-in `shardlet-token-admin`
   * (`system:masters`). The token file is read at apiserver start, so they are fixed here.
   */
  readonly tokenUsers?: readonly TokenUser[];
  /** More kube-apiserver flags (appended; a later flag wins). */
  readonly extraApiserverArgs?: readonly string[];
}

export interface KubectlOptions {
  /** Kills kubectl after this long (default 60 s); the result then has `timedOut: true`. */
  readonly timeoutMs?: number;
  /** Written to kubectl's stdin (e.g. a manifest for `apply -f -`). */
  readonly stdin?: string;
  /** Another kubeconfig than the admin one (e.g. `nodeKubeconfig('n1')`). */
  readonly kubeconfig?: string;
}

export interface KubectlResult {
  /** Exit code; null when kubectl was killed (timeout). */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
}

export interface ControlPlane {
  /** `https://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** CA that signed the serving and client certificates. */
  readonly caFile: string;
  /** Kubeconfig of `CN=shardlet-admin, O=system:masters`. */
  readonly adminKubeconfig: string;
  /** `http://127.0.0.1:<port>` of this instance's etcd. */
  readonly etcdEndpoint: string;
  readonly tmpDir: string;
  readonly apiserverLogPath: string;
  readonly etcdLogPath: string;
  readonly tools: ControlPlaneTools;
  /** PID of the running apiserver; undefined after killApiserver() until restartApiserver(). */
  readonly apiserverPid: number | undefined;
  readonly etcdPid: number;
  /**
   * Writes (once per name) and returns a kubeconfig with a client certificate
   * `CN=system:node:<nodeName>, O=system:nodes`. Throws (code ERR_HARNESS_BAD_NAME) unless
   * `nodeName` is a DNS-1123 subdomain.
   */
  nodeKubeconfig(nodeName: string): string;
  /**
   * Writes (once per user) and returns a bearer-token kubeconfig for `userName`: the built-in
   * `shardlet-token-admin` (default) or one of `tokenUsers`. Throws for an unknown user.
   */
  tokenKubeconfig(userName?: string): string;
  /** Runs kubectl with the admin kubeconfig (unless `opts.kubeconfig`); never rejects for a non-zero exit. */
  kubectl(args: readonly string[], opts?: KubectlOptions): Promise<KubectlResult>;
  /**
   * Writes a key outside the apiserver's prefix twice (so the revision moves past every
   * resourceVersion a client has seen), compacts etcd at the new current revision (etcdctl) and
   * returns it. With `watchCache: false` (the default), any watch started afterwards from an older
   * resourceVersion gets 410 Gone (an ERROR event with code 410). A watch already open stays open:
   * it expires when it next restarts (its timeout, or `restartApiserver()`).
   */
  compact(): Promise<number>;
  /** SIGKILLs the apiserver and waits until it is gone. etcd keeps running. Idempotent. */
  killApiserver(): Promise<void>;
  /** SIGKILLs the apiserver if running, starts it again on the same port and etcd data, waits for /readyz. */
  restartApiserver(): Promise<void>;
  /** GET /metrics with admin credentials (Prometheus text, e.g. apiserver_request_total). */
  metricsText(): Promise<string>;
  /**
   * Creates namespace `ns` when missing, with what kube-controller-manager (not run here) would
   * add: the ServiceAccount `default` (pod creation is refused without it) and the ConfigMap
   * `kube-root-ca.crt` (the CA; the projected `kube-api-access-*` volume of pods that keep
   * automountServiceAccountToken refers to it). Throws ERR_HARNESS_BAD_NAME unless `ns` is a
   * DNS-1123 label.
   */
  ensureNamespace(ns: string): Promise<void>;
  /** Stops everything and removes the temp dir (see module comment). Idempotent. */
  stop(): Promise<void>;
}

export class ControlPlaneHarnessError extends Error {
  override readonly name = 'ControlPlaneHarnessError';
  readonly code: 'ERR_HARNESS_BAD_NAME' | 'ERR_HARNESS_STOPPED' | 'ERR_HARNESS_ETCDCTL' | 'ERR_HARNESS_API';
  constructor(code: ControlPlaneHarnessError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

const TMP_PREFIX = 'shardlet-kapi-';
const MAX_SLOT = 200;
const PORT_BASE = 24_000;
const TOKEN_ADMIN: TokenUser = Object.freeze({ name: 'shardlet-token-admin', groups: Object.freeze(['system:masters']) });
const STOP_GRACE_MS = 10_000;

function slotRegistry(): string {
  return path.join(os.tmpdir(), 'shardlet-harness-apiserver-slots');
}

function slotPorts(slot: number): { etcdClient: number; etcdPeer: number; apiserver: number } {
  const base = PORT_BASE + 10 * slot;
  return { etcdClient: base, etcdPeer: base + 1, apiserver: base + 2 };
}

function instanceParentDir(): string {
  return fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
}

/** SIGKILLs the daemons whose command line names `tmpDir` (only ever our own dirs). */
function killInstanceProcesses(tmpDir: string): number[] {
  const pids = [...findProcesses('kube-apiserver', tmpDir), ...findProcesses('etcd', tmpDir)].map((p) => p.pid);
  for (const pid of pids) signal(pid, 'SIGKILL');
  return pids;
}

/** Reclaims what a killed earlier run left (owned-slots.ts calls this for a dead owner's slot). */
function reclaimStaleInstance(_slot: number, staleTmpDir: string | undefined): void {
  if (staleTmpDir === undefined || !path.basename(staleTmpDir).startsWith(TMP_PREFIX)) return;
  killInstanceProcesses(staleTmpDir);
  fs.rmSync(staleTmpDir, { recursive: true, force: true, maxRetries: 3 });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** A slot whose three ports are free right now. Slots found busy are held while searching, then given back. */
async function claimPortSlot(tmpDir: string): Promise<OwnedSlot> {
  const busy: OwnedSlot[] = [];
  const skip = new Set<number>();
  try {
    for (;;) {
      const slot = claimSlot({ dir: slotRegistry(), max: MAX_SLOT, tmpDir, reclaim: reclaimStaleInstance, skip });
      const ports = Object.values(slotPorts(slot.slot));
      const free = await Promise.all(ports.map(portFree));
      if (free.every(Boolean)) return slot;
      busy.push(slot);
      skip.add(slot.slot);
    }
  } finally {
    for (const b of busy) b.release();
  }
}

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
      try {
        await create();
      } catch (err) {
        if (err instanceof ApiException && err.code === 409) return;
        throw new ControlPlaneHarnessError('ERR_HARNESS_API', `create ${what}: ${err instanceof Error ? err.message : String(err)}`);
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
    for (const d of [this.#apiserver, this.#etcd]) if (d && !hasExited(d)) d.child.kill('SIGKILL');
    this.#slot.release();
    fs.rmSync(this.tmpDir, { recursive: true, force: true });
  }

  async #stop(): Promise<void> {
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
  const tmpDir = fs.mkdtempSync(path.join(instanceParentDir(), TMP_PREFIX));
  let slot: OwnedSlot | undefined;
  let instance: Instance | undefined;
  try {
    slot = await claimPortSlot(tmpDir);
    const layout = controlPlaneLayout(tmpDir, slotPorts(slot.slot));
    const pki = createPki(tools.openssl, layout.pkiDir);
    const tokens = writeTokenFile(layout.tokenFile, [TOKEN_ADMIN, ...(opts.tokenUsers ?? [])]);
    const args = apiserverArgs(layout, pki, { watchCache: opts.watchCache ?? false, extraArgs: opts.extraApiserverArgs ?? [] });
    instance = new Instance({ layout, pki, tokens, tools, slot, apiserverArgs: args, startTimeoutMs: opts.startTimeoutMs ?? 120_000 });
    trackInstance(instance);
    await instance.startEtcd();
    await instance.startApiserver();
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
