/**
 * The control-plane harness's public surface: what `startControlPlane` (apiserver-harness.ts)
 * takes and returns. Kept apart from the implementation so tests and the bench read the contract
 * in one place; apiserver-harness.ts re-exports every name here.
 */
import type { TokenUser } from './apiserver-credentials.js';
import type { ControlPlaneTools } from './apiserver-install.js';

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
  /**
   * Let the apiserver reach kubelets (`kubectl logs`, node proxy): a client certificate
   * `CN=kube-apiserver-kubelet-client, O=system:masters` signed by the harness CA
   * (`--kubelet-client-certificate/--kubelet-client-key`), and
   * `--kubelet-preferred-address-types=InternalIP`. An agent trusts it with
   * `--client-ca-file=<caFile>`. Default false.
   */
  readonly kubeletClient?: boolean;
  /** More kube-apiserver flags (appended; a later flag wins). */
  readonly extraApiserverArgs?: readonly string[];
  /**
   * Also run the real kube-scheduler (v1.20.2, built like the apiserver; admin identity, leader
   * election on a kube-system Lease, which is the readiness signal; no serving ports). Default false.
   */
  readonly scheduler?: boolean;
  /**
   * Also run the real kube-controller-manager (same; all default controllers: deployments,
   * replicasets, node lifecycle, service accounts, ...). Default false.
   */
  readonly controllerManager?: boolean;
  /** More kube-controller-manager flags (appended), e.g. `--node-monitor-grace-period=20s`. */
  readonly extraControllerManagerArgs?: readonly string[];
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

