/**
 * CRI runtime.v1 client on a unix socket. Unary calls go over one of two transports:
 *   - 'h2' (default): the purpose-built HTTP/2 unary transport in `h2/` (net.Socket, own frame
 *     codec and HPACK decoder; about half the client CPU per call of grpc-js, issue 15);
 *   - 'grpc-js': a @grpc/grpc-js channel driven below its Client layer.
 * The one server-streaming call, GetContainerEvents, always uses grpc-js; on 'h2' that channel
 * is created on first use. One instance owns its connection(s); it is cheap enough to create
 * one per worker thread, which is how shardlet uses it.
 *
 * Every call: a deadline (2 min default like the kubelet's --runtime-request-timeout, 4 min for
 * image pulls), cancellation by AbortSignal, gRPC status translated once into CriError, and the
 * operation hook called with the kubelet's operation_type name and the duration.
 */
import * as grpc from '@grpc/grpc-js';
import { clampTimerMs, realClock, realRandom } from '../clock/clock.js';
import type { Clock, Random } from '../clock/clock.js';
import { CriError, criErrorFromGrpc } from './cri-errors.js';
import { GrpcCode } from './h2/grpc-codes.js';
import { H2Channel } from './h2/h2-channel.js';
import { requestHeaderPrefix } from './h2/h2-request-headers.js';
import { H2UnaryCall } from './h2/h2-unary-call.js';
import type { H2CallOwner } from './h2/h2-unary-call.js';
import { CriListMemo } from './cri-list-memo.js';
import { CRI_FLOW_CONTROL_WINDOW, loadCriProto, MAX_MESSAGE_BYTES } from './cri-proto.js';
import type { CallOptions, ContainerLogService, CriOperationHook, ImageService, RuntimeService } from './runtime-service.js';
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
  /** Deadlines and the reconnect backoff of the 'h2' transport (grpc-js keeps its own timers). */
  clock?: Clock;
  /** Backoff jitter of the 'h2' transport. */
  random?: Random;
}

export type CriTransport = 'h2' | 'grpc-js';

/**
 * The transport when the options name none: 'h2', or what `SHARDLET_CRI_TRANSPORT` says
 * ('h2' | 'grpc-js'; read at each client's construction, inherited by worker threads), so a
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

/** CRI method → the kubelet's `operation_type` label (pkg/kubelet/kuberuntime/instrumented_services.go). */
const OPERATION_NAMES: Readonly<Record<string, string>> = Object.freeze({
  Version: 'version',
  Status: 'status',
  RunPodSandbox: 'run_podsandbox',
  StopPodSandbox: 'stop_podsandbox',
  RemovePodSandbox: 'remove_podsandbox',
  PodSandboxStatus: 'podsandbox_status',
  ListPodSandbox: 'list_podsandbox',
  CreateContainer: 'create_container',
  StartContainer: 'start_container',
  StopContainer: 'stop_container',
  RemoveContainer: 'remove_container',
  ListContainers: 'list_containers',
  ContainerStatus: 'container_status',
  ExecSync: 'exec_sync',
  ReopenContainerLog: 'reopen_container_log',
  ListContainerStats: 'list_container_stats',
  ListPodSandboxStats: 'list_podsandbox_stats',
  GetContainerEvents: 'get_container_events',
  ListImages: 'list_images',
  ImageStatus: 'image_status',
  PullImage: 'pull_image',
  RemoveImage: 'remove_image',
  ImageFsInfo: 'image_fs_info',
});

export function normalizeEndpoint(endpoint: string): string {
  if (endpoint.startsWith('unix://')) return endpoint;
  if (endpoint.startsWith('/')) return `unix://${endpoint}`;
  throw new CriError('ERR_CRI_INVALID_ARGUMENT', 'connect', `container runtime endpoint must be unix:///path or an absolute socket path, got ${JSON.stringify(endpoint)}`);
}

/** The channel-level call grpc-js's Client drives; the CRI client drives it directly (see #unary). */
type ChannelCall = ReturnType<grpc.Channel['createCall']>;

/**
 * One unary CRI method, resolved once per client: its HTTP/2 path, the proto-loader
 * (de)serializers (a memoizing one for the PLEG's lists) and the kubelet's operation name.
 */
interface UnaryMethod {
  readonly name: string;
  readonly path: string;
  readonly serialize: (req: unknown) => Buffer;
  readonly deserialize: (buf: Buffer) => unknown;
  readonly operation: string;
  /** The request's HPACK header block minus grpc-timeout, built once (h2 transport). */
  readonly headerPrefix: Buffer;
}

/** A unary call's promise settlers and what its completion reports (h2 transport's call context). */
interface PendingUnary {
  readonly method: UnaryMethod;
  readonly start: number;
  resolve: (res: unknown) => void;
  reject: (err: CriError) => void;
}

export class CriClient implements RuntimeService, ContainerLogService, ImageService, H2CallOwner {
  readonly endpoint: string;
  readonly transport: CriTransport;
  /**
   * The grpc-js client (its channel carries unary calls on 'grpc-js', GetContainerEvents on
   * both): created in the constructor on 'grpc-js', on first use on 'h2'.
   */
  #grpc: { readonly client: grpc.Client; readonly channel: grpc.Channel } | null = null;
  /** The HTTP/2 unary transport ('h2' only). */
  readonly #h2: H2Channel | null;
  readonly #clock: Clock;
  /** Every unary method of both services (one channel: the path names the service). */
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
    this.#clock = opts.clock ?? realClock;
    const transport = opts.transport ?? defaultTransport();
    if (transport !== 'h2' && transport !== 'grpc-js') {
      throw new CriError('ERR_CRI_INVALID_ARGUMENT', 'connect', `transport must be 'h2' or 'grpc-js', got ${JSON.stringify(transport)}`);
    }
    this.transport = transport;
    const proto = loadCriProto();
    // The two lists the PLEG repeats every second decode only what changed (cri-list-memo.ts);
    // the memos are this client's own.
    const listField: Readonly<Record<string, string>> = { ListPodSandbox: 'items', ListContainers: 'containers' };
    const methods = new Map<string, UnaryMethod>();
    for (const service of [proto.runtime, proto.image]) {
      for (const [name, def] of Object.entries(service)) {
        if (def.requestStream || def.responseStream) continue;
        const field = listField[name];
        const deserialize = field === undefined ? def.responseDeserialize : new CriListMemo({ deserialize: def.responseDeserialize, listField: field }).deserialize;
        methods.set(name, { name, path: def.path, serialize: def.requestSerialize, deserialize, operation: OPERATION_NAMES[name] ?? name, headerPrefix: requestHeaderPrefix(def.path) });
      }
    }
    this.#methods = methods;
    if (transport === 'h2') {
      this.#h2 = new H2Channel({
        path: this.endpoint.slice('unix://'.length),
        recvWindow: CRI_FLOW_CONTROL_WINDOW,
        backoff: CRI_RECONNECT_BACKOFF,
        clock: this.#clock,
        random: opts.random ?? realRandom,
      });
    } else {
      this.#h2 = null;
      this.#grpcClient();
    }
  }

  /** The grpc-js client, created on first use. */
  #grpcClient(): { readonly client: grpc.Client; readonly channel: grpc.Channel } {
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
    const client = new (loadCriProto().RuntimeServiceClient)(this.endpoint, grpc.credentials.createInsecure(), channelOptions);
    this.#grpc = { client, channel: client.getChannel() as grpc.Channel };
    return this.#grpc;
  }

  /** Closes the channel. Idempotent. In-flight calls fail with CANCELLED/UNAVAILABLE. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#h2?.close();
    this.#grpc?.client.close();
  }

  /** Resolves once the channel is connected, or rejects after `timeoutMs`. */
  waitForReady(timeoutMs: number): Promise<void> {
    if (this.#h2 !== null) {
      return this.#h2.waitForReady(timeoutMs).catch((err: unknown) => {
        throw criErrorFromGrpc('connect', { code: GrpcCode.UNAVAILABLE, details: err instanceof Error ? err.message : String(err) });
      });
    }
    const runtime = this.#grpcClient().client;
    return new Promise((resolve, reject) => {
      runtime.waitForReady(Date.now() + timeoutMs, (err) => {
        if (err) reject(criErrorFromGrpc('connect', Object.assign(err, { code: grpc.status.UNAVAILABLE })));
        else resolve();
      });
    });
  }

  /**
   * One unary call on the channel directly (channel.createCall + a minimal listener), the
   * same wire exchange as grpc-js's Client.makeUnaryRequest without its per-call layers: the
   * call emitter, the interceptor chain, the caller-stack Error it captures for every call and
   * a Metadata copy (issue 15: half of the client CPU per call). What grpc-js still does per
   * call: the deadline (grpc-timeout header and its timer), transparent retry, the compression
   * filter's headers.
   *
   * Exactly one of resolve/reject runs, once: after the status (the listener's last event), or
   * before the call starts (cancelled, unknown method, channel shut down).
   */
  #unaryGrpc<Res>(method: string, req: unknown, opts: CallOptions | undefined, defaultTimeoutMs: number): Promise<Res> {
    const m = this.#methods.get(method);
    const operation = m?.operation ?? OPERATION_NAMES[method] ?? method;
    const start = performance.now();
    return new Promise<Res>((resolve, reject) => {
      const finish = (err: CriError | undefined, res?: Res): void => {
        const hook = this.#onOperation;
        if (hook !== undefined) {
          const durationSeconds = (performance.now() - start) / 1000;
          hook(err === undefined ? { operation, durationSeconds } : { operation, durationSeconds, error: err });
        }
        if (err) reject(err);
        else resolve(res as Res);
      };
      const signal = opts?.signal;
      if (signal?.aborted) {
        finish(new CriError('ERR_CRI_CANCELLED', method, `${method}: cancelled before start`));
        return;
      }
      if (m === undefined) {
        finish(new CriError('ERR_CRI_UNIMPLEMENTED', method, `${method}: not in proto`));
        return;
      }
      let body: Buffer;
      let call: ChannelCall;
      try {
        body = m.serialize(req);
        if (this.#closed) throw new Error('Channel has been shut down');
        call = this.#grpcClient().channel.createCall(m.path, Date.now() + clampTimerMs(opts?.timeoutMs ?? defaultTimeoutMs), undefined, null, undefined);
      } catch (err) {
        // A request the proto cannot encode, or a closed channel ("Channel has been shut down").
        const closed = this.#closed;
        finish(new CriError(closed ? 'ERR_CRI_UNAVAILABLE' : 'ERR_CRI_INTERNAL', method, `${method}: ${err instanceof Error ? err.message : String(err)}`));
        return;
      }
      const onAbort = (): void => call.cancelWithStatus(grpc.status.CANCELLED, 'Cancelled on client');
      let reply: Buffer | null = null;
      call.start(new grpc.Metadata(), {
        onReceiveMetadata: noop,
        onReceiveMessage: (message: Buffer) => {
          if (reply !== null) call.cancelWithStatus(grpc.status.UNIMPLEMENTED, 'Too many responses received');
          else reply = message;
        },
        onReceiveStatus: (status: grpc.StatusObject) => {
          signal?.removeEventListener('abort', onAbort);
          if (status.code !== grpc.status.OK) {
            finish(criErrorFromGrpc(method, status));
            return;
          }
          if (reply === null) {
            finish(criErrorFromGrpc(method, { code: grpc.status.UNIMPLEMENTED, details: 'No message received' }));
            return;
          }
          let res: Res;
          try {
            res = m.deserialize(reply) as Res;
          } catch (err) {
            finish(criErrorFromGrpc(method, { code: grpc.status.INTERNAL, details: `Response message parsing error: ${err instanceof Error ? err.message : String(err)}` }));
            return;
          }
          finish(undefined, res);
        },
      });
      call.sendMessageWithContext({}, body);
      call.halfClose();
      call.startRead();
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * One unary call on the HTTP/2 transport: the request serialized here, the call carried by
   * the channel (h2/h2-channel.ts), its outcome delivered once to `callDone`. The deadline is
   * a local timer (RST_STREAM(CANCEL) + DEADLINE_EXCEEDED), the abort signal cancels likewise.
   */
  #unaryH2<Res>(h2: H2Channel, method: string, req: unknown, opts: CallOptions | undefined, defaultTimeoutMs: number): Promise<Res> {
    const m = this.#methods.get(method);
    const start = performance.now();
    const signal = opts?.signal;
    let early: CriError | undefined;
    let body: Buffer | undefined;
    if (signal?.aborted) early = new CriError('ERR_CRI_CANCELLED', method, `${method}: cancelled before start`);
    else if (m === undefined) early = new CriError('ERR_CRI_UNIMPLEMENTED', method, `${method}: not in proto`);
    else {
      try {
        body = m.serialize(req);
      } catch (err) {
        early = new CriError('ERR_CRI_INTERNAL', method, `${method}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (early !== undefined || m === undefined || body === undefined) {
      const err = early ?? new CriError('ERR_CRI_INTERNAL', method, `${method}: no request`);
      this.#report(m?.operation ?? OPERATION_NAMES[method] ?? method, start, err);
      return Promise.reject(err);
    }
    const timeoutMs = clampTimerMs(opts?.timeoutMs ?? defaultTimeoutMs);
    const pending: PendingUnary = { method: m, start, resolve: noop, reject: noop };
    const promise = new Promise<Res>((resolve, reject) => {
      pending.resolve = resolve as (res: unknown) => void;
      pending.reject = reject;
    });
    const call = new H2UnaryCall(method, m.headerPrefix, body, this.#clock.monotonic() + timeoutMs, this, pending, MAX_MESSAGE_BYTES);
    // Unref'd like grpc-js's deadline timers: the connection keeps the process alive while calls are open.
    call.arm(this.#clock.setTimer(timeoutMs, () => call.cancel(GrpcCode.DEADLINE_EXCEEDED, 'Deadline exceeded'), { unref: true }), signal);
    h2.start(call);
    return promise;
  }

  /** H2CallOwner: the one completion of an h2 call. `reply` may alias a socket chunk: decoded here, now. */
  callDone(call: H2UnaryCall, code: number, details: string, reply: Buffer | null): void {
    const p = call.context as PendingUnary;
    const m = p.method;
    let err: CriError | undefined;
    let res: unknown;
    if (code !== GrpcCode.OK || reply === null) {
      err = criErrorFromGrpc(m.name, { code: code === GrpcCode.OK ? GrpcCode.UNIMPLEMENTED : code, details: details === '' ? 'No message received' : details });
    } else {
      try {
        res = m.deserialize(reply);
      } catch (e) {
        err = criErrorFromGrpc(m.name, { code: GrpcCode.INTERNAL, details: `Response message parsing error: ${e instanceof Error ? e.message : String(e)}` });
      }
    }
    this.#report(m.operation, p.start, err);
    if (err !== undefined) p.reject(err);
    else p.resolve(res);
  }

  #report(operation: string, start: number, err: CriError | undefined): void {
    const hook = this.#onOperation;
    if (hook === undefined) return;
    const durationSeconds = (performance.now() - start) / 1000;
    hook(err === undefined ? { operation, durationSeconds } : { operation, durationSeconds, error: err });
  }

  #unary<Res>(method: string, req: unknown, opts: CallOptions | undefined, defaultTimeoutMs: number): Promise<Res> {
    const h2 = this.#h2;
    return h2 !== null ? this.#unaryH2<Res>(h2, method, req, opts, defaultTimeoutMs) : this.#unaryGrpc<Res>(method, req, opts, defaultTimeoutMs);
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

  podSandboxStatus(podSandboxId: string, opts?: CallOptions): Promise<T.PodSandboxStatusResponse> {
    return this.#rt('PodSandboxStatus', { podSandboxId, verbose: false }, opts);
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

  containerStatus(containerId: string, opts?: CallOptions): Promise<T.ContainerStatusResponse> {
    return this.#rt('ContainerStatus', { containerId, verbose: false }, opts);
  }

  execSync(req: T.ExecSyncRequest, opts?: CallOptions): Promise<T.ExecSyncResponse> {
    const timeoutSeconds = Math.floor(clampTimerMs(Number(req.timeout ?? 0) * 1000) / 1000);
    const deadline = timeoutSeconds > 0 ? (opts?.timeoutMs ?? this.#timeoutMs) + timeoutSeconds * 1000 : opts?.timeoutMs;
    return this.#rt('ExecSync', { ...req, timeout: String(timeoutSeconds) }, deadline === undefined ? opts : { ...opts, timeoutMs: deadline });
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

  getContainerEvents(handlers: { onEvent: (ev: T.ContainerEventResponse) => void; onError: (err: Error) => void; onEnd?: () => void }): { cancel(): void } {
    if (this.#closed) throw new CriError('ERR_CRI_UNAVAILABLE', 'GetContainerEvents', 'GetContainerEvents: Channel has been shut down');
    const runtime = this.#grpcClient().client;
    const fn = (runtime as unknown as Record<string, (req: unknown) => grpc.ClientReadableStream<T.ContainerEventResponse>>)['GetContainerEvents'];
    if (!fn) throw new CriError('ERR_CRI_UNIMPLEMENTED', 'GetContainerEvents', 'not in proto');
    const stream = fn.call(runtime, {});
    let cancelled = false;
    stream.on('data', (ev: T.ContainerEventResponse) => handlers.onEvent(ev));
    stream.on('error', (err: unknown) => {
      if (!cancelled) handlers.onError(criErrorFromGrpc('GetContainerEvents', err));
    });
    stream.on('end', () => handlers.onEnd?.());
    return {
      cancel: () => {
        cancelled = true;
        stream.cancel();
      },
    };
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

function noop(): void {}
