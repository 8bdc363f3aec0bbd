/**
 * CRI runtime.v1 client on a unix socket. Unary calls go over one of three transports
 * (unary-transport.ts):
 *   - 'h2' (default, unary-transport-h2.ts): the purpose-built HTTP/2 client in `h2/`
 *     (net.Socket, own frame codec and HPACK decoder; ~15–20 µs of client CPU per call against
 *     ~145–155 µs on grpc-js, issue 15);
 *   - 'node-http2' (unary-transport-node-http2.ts): node:http2 with the gRPC framing done here;
 *     3–4× the CPU per call of 'h2' (issue 27: the README's transport decision), kept as the
 *     stock-stack fallback and the reference the 'h2' tests hold the hand-written client to;
 *   - 'grpc-js' (unary-transport-grpc-js.ts): a @grpc/grpc-js channel driven below its Client layer.
 * No streaming call: the agent has no evented PLEG (GetContainerEvents has no user). One
 * instance owns its connection(s); it is cheap enough to create one per worker thread, which is
 * how shardlet uses it.
 *
 * Every call: a deadline (2 min default like the kubelet's --runtime-request-timeout, 4 min for
 * image pulls), cancellation by AbortSignal, gRPC status translated once into CriError, and the
 * operation hook called with the kubelet's operation_type name and the duration.
 */
import * as grpc from '@grpc/grpc-js';
import { clampTimerMs, realClock, realRandom } from '../clock/clock.js';
import type { Clock, Random } from '../clock/clock.js';
import { CriError } from './cri-errors.js';
import { buildUnaryMethods, operationOf } from './cri-methods.js';
import type { UnaryMethod } from './cri-methods.js';
import { CRI_FLOW_CONTROL_WINDOW, loadCriProto, MAX_MESSAGE_BYTES } from './cri-proto.js';
import type { UnaryReport, UnaryTransport } from './unary-transport.js';
import { GrpcJsUnaryTransport } from './unary-transport-grpc-js.js';
import { H2UnaryTransport } from './unary-transport-h2.js';
import { NodeHttp2UnaryTransport } from './unary-transport-node-http2.js';
import type { CallOptions, ContainerLogService, CriOperationHook, ImageService, RuntimeService, StreamingService } from './runtime-service.js';
import type * as T from './cri-types.js';

export interface CriClientOptions {
  /** `unix:///path/to.sock` (or a bare absolute path, taken as unix). */
  endpoint: string;
  /** Default per-call deadline; the kubelet's default runtime request timeout is 2 min. */
  timeoutMs?: number;
  /** Deadline for PullImage. */
  pullTimeoutMs?: number;
  onOperation?: CriOperationHook;
  /** Unary transport (see the module comment); default 'h2'. */
  transport?: CriTransport;
  /** Deadlines and the reconnect backoff of the 'h2' and 'node-http2' transports (grpc-js keeps its own timers). */
  clock?: Clock;
  /** Backoff jitter of the 'h2' and 'node-http2' transports. */
  random?: Random;
}

export type CriTransport = 'h2' | 'node-http2' | 'grpc-js';

const TRANSPORTS: ReadonlySet<string> = new Set<CriTransport>(['h2', 'node-http2', 'grpc-js']);

/**
 * The transport when the options name none: 'h2', or what `SHARDLET_CRI_TRANSPORT` says
 * ('h2' | 'node-http2' | 'grpc-js'; read at each client's construction, inherited by worker threads), so a
 * bench can A/B a whole agent without a flag. Any other value is a construction error.
 */
function defaultTransport(): CriTransport {
  const env = process.env['SHARDLET_CRI_TRANSPORT'];
  return env === undefined || env === '' ? CRI_CLIENT_DEFAULTS.transport : (env as CriTransport);
}

export const CRI_CLIENT_DEFAULTS = Object.freeze({
  timeoutMs: 120_000,
  pullTimeoutMs: 240_000,
  transport: 'h2' as CriTransport,
});

/**
 * Reconnect backoff of a CRI channel, as the kubelet dials the runtime (remote_runtime.go:
 * grpc.WithConnectParams{Backoff: {BaseDelay: 100ms, MaxDelay: 3s}}). grpc-js defaults to
 * 1 s → 120 s, which after a runtime restart holds every CRI call (the PLEG's relist, the
 * sync loop's status check, the pod workers) for up to two minutes.
 */
export const CRI_RECONNECT_BACKOFF = Object.freeze({ initialMs: 100, maxMs: 3_000 });

export function normalizeEndpoint(endpoint: string): string {
  if (endpoint.startsWith('unix://')) return endpoint;
  if (endpoint.startsWith('/')) return `unix://${endpoint}`;
  throw new CriError('ERR_CRI_INVALID_ARGUMENT', 'connect', `container runtime endpoint must be unix:///path or an absolute socket path, got ${JSON.stringify(endpoint)}`);
}

export class CriClient implements RuntimeService, ContainerLogService, ImageService, StreamingService {
  readonly endpoint: string;
  readonly transport: CriTransport;
  /** The grpc-js client whose channel carries the unary calls on 'grpc-js' (none on 'h2'). */
  #grpc: grpc.Client | null = null;
  readonly #unaryTransport: UnaryTransport;
  readonly #methods: ReadonlyMap<string, UnaryMethod>;
  readonly #timeoutMs: number;
  readonly #pullTimeoutMs: number;
  readonly #onOperation: CriOperationHook | undefined;
  #closed = false;

  constructor(opts: CriClientOptions) {
    this.endpoint = normalizeEndpoint(opts.endpoint);
    this.#timeoutMs = opts.timeoutMs ?? CRI_CLIENT_DEFAULTS.timeoutMs;
    this.#pullTimeoutMs = opts.pullTimeoutMs ?? CRI_CLIENT_DEFAULTS.pullTimeoutMs;
    this.#onOperation = opts.onOperation;
    const transport = opts.transport ?? defaultTransport();
    if (!TRANSPORTS.has(transport)) {
      throw new CriError('ERR_CRI_INVALID_ARGUMENT', 'connect', `transport must be one of ${[...TRANSPORTS].join(', ')}, got ${JSON.stringify(transport)}`);
    }
    this.transport = transport;
    this.#methods = buildUnaryMethods();
    const report: UnaryReport = (operation, start, err) => this.#report(operation, start, err);
    if (transport === 'h2') {
      this.#unaryTransport = new H2UnaryTransport({
        path: this.endpoint.slice('unix://'.length),
        backoff: CRI_RECONNECT_BACKOFF,
        clock: opts.clock ?? realClock,
        random: opts.random ?? realRandom,
        report,
      });
    } else if (transport === 'node-http2') {
      this.#unaryTransport = new NodeHttp2UnaryTransport({
        path: this.endpoint.slice('unix://'.length),
        backoff: CRI_RECONNECT_BACKOFF,
        clock: opts.clock ?? realClock,
        random: opts.random ?? realRandom,
        report,
        maxMessageBytes: MAX_MESSAGE_BYTES,
      });
    } else {
      this.#grpcClient();
      this.#unaryTransport = new GrpcJsUnaryTransport({ client: () => this.#grpcClient(), report });
    }
  }

  /** The grpc-js client, created on first use. */
  #grpcClient(): grpc.Client {
    if (this.#grpc !== null) return this.#grpc;
    const channelOptions: grpc.ChannelOptions = {
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
      // HTTP/2's default 64 KiB window makes a large List reply (1,000 pods: ~0.5 MB; 20,000
      // containers: ~9 MB) wait on a WINDOW_UPDATE round trip per 64 KiB (see CRI_FLOW_CONTROL_WINDOW).
      'grpc-node.flow_control_window': CRI_FLOW_CONTROL_WINDOW,
      // A unix socket has no authority; grpc-js otherwise derives one from the path.
      'grpc.default_authority': 'localhost',
      'grpc.initial_reconnect_backoff_ms': CRI_RECONNECT_BACKOFF.initialMs,
      'grpc.max_reconnect_backoff_ms': CRI_RECONNECT_BACKOFF.maxMs,
      // Per-call bookkeeping nothing reads (no channelz server runs in the agent).
      'grpc.enable_channelz': 0,
    };
    this.#grpc = new (loadCriProto().RuntimeServiceClient)(this.endpoint, grpc.credentials.createInsecure(), channelOptions);
    return this.#grpc;
  }

  /** Closes the connection(s). Idempotent. In-flight calls fail with UNAVAILABLE (CANCELLED on grpc-js). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unaryTransport.close();
    this.#grpc?.close();
  }

  /** Resolves once the channel is connected, or rejects after `timeoutMs` (ERR_CRI_UNAVAILABLE). */
  waitForReady(timeoutMs: number): Promise<void> {
    return this.#unaryTransport.waitForReady(timeoutMs);
  }

  /**
   * One unary call: what both transports share (an aborted signal or an unknown method never
   * starts; the request serialized once here, a request the proto cannot encode is INTERNAL),
   * then the transport. Every call reaches the operation hook exactly once.
   */
  #unary<Res>(method: string, req: unknown, opts: CallOptions | undefined, defaultTimeoutMs: number): Promise<Res> {
    const start = performance.now();
    const m = this.#methods.get(method);
    let err: CriError;
    if (opts?.signal?.aborted) err = new CriError('ERR_CRI_CANCELLED', method, `${method}: cancelled before start`);
    else if (m === undefined) err = new CriError('ERR_CRI_UNIMPLEMENTED', method, `${method}: not in proto`);
    else {
      let body: Buffer;
      try {
        body = m.serialize(req);
      } catch (e) {
        err = new CriError('ERR_CRI_INTERNAL', method, `${method}: ${e instanceof Error ? e.message : String(e)}`);
        this.#report(m.operation, start, err);
        return Promise.reject(err);
      }
      return this.#unaryTransport.unary<Res>(m, body, opts, clampTimerMs(opts?.timeoutMs ?? defaultTimeoutMs), start);
    }
    this.#report(m?.operation ?? operationOf(method), start, err);
    return Promise.reject(err);
  }

  #report(operation: string, start: number, err: CriError | undefined): void {
    const hook = this.#onOperation;
    if (hook === undefined) return;
    const durationSeconds = (performance.now() - start) / 1000;
    hook(err === undefined ? { operation, durationSeconds } : { operation, durationSeconds, error: err });
  }

  #rt<Res>(method: string, req: unknown, opts?: CallOptions, timeoutMs = this.#timeoutMs): Promise<Res> {
    return this.#unary<Res>(method, req, opts, timeoutMs);
  }

  #img<Res>(method: string, req: unknown, opts?: CallOptions, timeoutMs = this.#timeoutMs): Promise<Res> {
    return this.#unary<Res>(method, req, opts, timeoutMs);
  }

  // ---- RuntimeService ------------------------------------------------------------------

  version(opts?: CallOptions): Promise<T.VersionResponse> {
    return this.#rt('Version', { version: 'v1' }, opts);
  }

  status(opts?: CallOptions & { verbose?: boolean }): Promise<T.StatusResponse> {
    return this.#rt('Status', { verbose: opts?.verbose === true }, opts);
  }

  async runPodSandbox(req: T.RunPodSandboxRequest, opts?: CallOptions): Promise<string> {
    const res = await this.#rt<T.RunPodSandboxResponse>('RunPodSandbox', req, opts);
    return res.podSandboxId;
  }

  async stopPodSandbox(podSandboxId: string, opts?: CallOptions): Promise<void> {
    await this.#rt('StopPodSandbox', { podSandboxId }, opts);
  }

  async removePodSandbox(podSandboxId: string, opts?: CallOptions): Promise<void> {
    await this.#rt('RemovePodSandbox', { podSandboxId }, opts);
  }

  podSandboxStatus(podSandboxId: string, opts?: CallOptions & { verbose?: boolean }): Promise<T.PodSandboxStatusResponse> {
    return this.#rt('PodSandboxStatus', { podSandboxId, verbose: opts?.verbose === true }, opts);
  }

  async listPodSandbox(filter?: T.PodSandboxFilter, opts?: CallOptions): Promise<T.PodSandbox[]> {
    const res = await this.#rt<{ items: T.PodSandbox[] }>('ListPodSandbox', filter ? { filter } : {}, opts);
    return res.items;
  }

  async createContainer(req: T.CreateContainerRequest, opts?: CallOptions): Promise<string> {
    // KeyValue.value is `bytes` in the CRI contract (proto/); protobufjs would read a JS string
    // there as base64, so env values are encoded as UTF-8 here, once, at the edge.
    const envs = (req.config as T.ContainerConfig | undefined)?.envs?.map((kv) => ({ key: kv.key, value: Buffer.from(kv.value, 'utf8') }));
    const wire = envs ? { ...req, config: { ...req.config, envs } } : req;
    const res = await this.#rt<{ containerId: string }>('CreateContainer', wire, opts);
    return res.containerId;
  }

  async startContainer(containerId: string, opts?: CallOptions): Promise<void> {
    await this.#rt('StartContainer', { containerId }, opts);
  }

  async stopContainer(containerId: string, timeoutSeconds: number, opts?: CallOptions): Promise<void> {
    // Like the kubelet: the call may legitimately take the whole grace period.
    // Seconds the runtime may wait, as a deadline grpc and Node can schedule (int64 on the wire).
    const seconds = Math.floor(clampTimerMs(timeoutSeconds * 1000) / 1000);
    const deadline = (opts?.timeoutMs ?? this.#timeoutMs) + seconds * 1000;
    await this.#rt('StopContainer', { containerId, timeout: String(seconds) }, { ...opts, timeoutMs: deadline });
  }

  async removeContainer(containerId: string, opts?: CallOptions): Promise<void> {
    await this.#rt('RemoveContainer', { containerId }, opts);
  }

  async listContainers(filter?: T.ContainerFilter, opts?: CallOptions): Promise<T.Container[]> {
    const res = await this.#rt<{ containers: T.Container[] }>('ListContainers', filter ? { filter } : {}, opts);
    return res.containers;
  }

  containerStatus(containerId: string, opts?: CallOptions & { verbose?: boolean }): Promise<T.ContainerStatusResponse> {
    return this.#rt('ContainerStatus', { containerId, verbose: opts?.verbose === true }, opts);
  }

  execSync(req: T.ExecSyncRequest, opts?: CallOptions): Promise<T.ExecSyncResponse> {
    const timeoutSeconds = Math.floor(clampTimerMs(Number(req.timeout ?? 0) * 1000) / 1000);
    const deadline = timeoutSeconds > 0 ? (opts?.timeoutMs ?? this.#timeoutMs) + timeoutSeconds * 1000 : opts?.timeoutMs;
    return this.#rt('ExecSync', { ...req, timeout: String(timeoutSeconds) }, deadline === undefined ? opts : { ...opts, timeoutMs: deadline });
  }

  async exec(req: T.ExecRequest, opts?: CallOptions): Promise<string> {
    return (await this.#rt<T.StreamingUrlResponse>('Exec', req, opts)).url;
  }

  async attach(req: T.AttachRequest, opts?: CallOptions): Promise<string> {
    return (await this.#rt<T.StreamingUrlResponse>('Attach', req, opts)).url;
  }

  async portForward(req: T.PortForwardRequest, opts?: CallOptions): Promise<string> {
    return (await this.#rt<T.StreamingUrlResponse>('PortForward', req, opts)).url;
  }

  async reopenContainerLog(containerId: string, opts?: CallOptions): Promise<void> {
    await this.#rt('ReopenContainerLog', { containerId }, opts);
  }

  async listContainerStats(opts?: CallOptions): Promise<T.ContainerStats[]> {
    const res = await this.#rt<{ stats: T.ContainerStats[] }>('ListContainerStats', {}, opts);
    return res.stats;
  }

  async listPodSandboxStats(opts?: CallOptions): Promise<T.PodSandboxStats[]> {
    const res = await this.#rt<{ stats: T.PodSandboxStats[] }>('ListPodSandboxStats', {}, opts);
    return res.stats;
  }

  // ---- ImageService --------------------------------------------------------------------

  async listImages(filter?: T.ImageSpec, opts?: CallOptions): Promise<T.Image[]> {
    const res = await this.#img<{ images: T.Image[] }>('ListImages', filter ? { filter: { image: filter } } : {}, opts);
    return res.images;
  }

  imageStatus(image: T.ImageSpec, opts?: CallOptions): Promise<T.ImageStatusResponse> {
    return this.#img('ImageStatus', { image, verbose: false }, opts);
  }

  async pullImage(req: T.PullImageRequest, opts?: CallOptions): Promise<string> {
    const res = await this.#img<{ imageRef: string }>('PullImage', req, opts, this.#pullTimeoutMs);
    return res.imageRef;
  }

  async removeImage(image: T.ImageSpec, opts?: CallOptions): Promise<void> {
    await this.#img('RemoveImage', { image }, opts);
  }

  imageFsInfo(opts?: CallOptions): Promise<T.ImageFsInfoResponse> {
    return this.#img('ImageFsInfo', {}, opts);
  }
}
