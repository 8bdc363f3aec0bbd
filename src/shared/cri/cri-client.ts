/**
 * CRI runtime.v1 client over @grpc/grpc-js on a unix socket. One instance owns one gRPC
 * channel (shared by its RuntimeService and ImageService stubs); it is cheap enough to create
 * one per worker thread, which is how shardlet uses it.
 *
 * Every call: a deadline (2 min default like the kubelet's --runtime-request-timeout, 4 min for
 * image pulls), cancellation by AbortSignal, gRPC status translated once into CriError, and the
 * operation hook called with the kubelet's operation_type name and the duration.
 */
import * as grpc from '@grpc/grpc-js';
import { clampTimerMs } from '../clock/clock.js';
import { CriError, criErrorFromGrpc } from './cri-errors.js';
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
}

export const CRI_CLIENT_DEFAULTS = Object.freeze({
  timeoutMs: 120_000,
  pullTimeoutMs: 240_000,
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

type UnaryFn = (
  req: unknown,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res: unknown) => void,
) => grpc.ClientUnaryCall;

export class CriClient implements RuntimeService, ContainerLogService, ImageService {
  readonly endpoint: string;
  readonly #runtime: grpc.Client;
  readonly #image: grpc.Client;
  readonly #timeoutMs: number;
  readonly #pullTimeoutMs: number;
  readonly #onOperation: CriOperationHook | undefined;
  #closed = false;

  constructor(opts: CriClientOptions) {
    this.endpoint = normalizeEndpoint(opts.endpoint);
    this.#timeoutMs = opts.timeoutMs ?? CRI_CLIENT_DEFAULTS.timeoutMs;
    this.#pullTimeoutMs = opts.pullTimeoutMs ?? CRI_CLIENT_DEFAULTS.pullTimeoutMs;
    this.#onOperation = opts.onOperation;
    const proto = loadCriProto();
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
    };
    // The two lists the PLEG repeats every second decode only what changed (cri-list-memo.ts);
    // the memos are this client's own, so the stub class is built per client.
    const rt = proto.runtime;
    const memoized = (method: string, listField: string): grpc.MethodDefinition<unknown, unknown> => {
      const def = rt[method] as grpc.MethodDefinition<unknown, unknown>;
      return { ...def, responseDeserialize: new CriListMemo({ deserialize: def.responseDeserialize, listField }).deserialize };
    };
    const RuntimeClient = grpc.makeGenericClientConstructor(
      { ...rt, ListPodSandbox: memoized('ListPodSandbox', 'items'), ListContainers: memoized('ListContainers', 'containers') },
      'RuntimeService',
    );
    this.#runtime = new RuntimeClient(this.endpoint, grpc.credentials.createInsecure(), channelOptions);
    // The image stub shares the runtime stub's channel: one connection per client.
    this.#image = new proto.ImageServiceClient(this.endpoint, grpc.credentials.createInsecure(), {
      ...channelOptions,
      channelOverride: this.#runtime.getChannel(),
    });
  }

  /** Closes the channel. Idempotent. In-flight calls fail with CANCELLED/UNAVAILABLE. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#runtime.close();
  }

  /** Resolves once the channel is connected, or rejects after `timeoutMs`. */
  waitForReady(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#runtime.waitForReady(Date.now() + timeoutMs, (err) => {
        if (err) reject(criErrorFromGrpc('connect', Object.assign(err, { code: grpc.status.UNAVAILABLE })));
        else resolve();
      });
    });
  }

  #unary<Res>(client: grpc.Client, method: string, req: unknown, opts: CallOptions | undefined, defaultTimeoutMs: number): Promise<Res> {
    const operation = OPERATION_NAMES[method] ?? method;
    const start = performance.now();
    return new Promise<Res>((resolve, reject) => {
      const finish = (err: CriError | undefined, res?: Res): void => {
        this.#onOperation?.({ operation, durationSeconds: (performance.now() - start) / 1000, ...(err ? { error: err } : {}) });
        if (err) reject(err);
        else resolve(res as Res);
      };
      const signal = opts?.signal;
      if (signal?.aborted) {
        finish(new CriError('ERR_CRI_CANCELLED', method, `${method}: cancelled before start`));
        return;
      }
      const fn = (client as unknown as Record<string, UnaryFn>)[method];
      if (typeof fn !== 'function') {
        finish(new CriError('ERR_CRI_UNIMPLEMENTED', method, `${method}: not in proto`));
        return;
      }
      const deadline = new Date(Date.now() + clampTimerMs(opts?.timeoutMs ?? defaultTimeoutMs));
      const call = fn.call(client, req, new grpc.Metadata(), { deadline }, (err, res) => {
        signal?.removeEventListener('abort', onAbort);
        if (err) finish(criErrorFromGrpc(method, err));
        else finish(undefined, res as Res);
      });
      const onAbort = (): void => call.cancel();
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #rt<Res>(method: string, req: unknown, opts?: CallOptions, timeoutMs = this.#timeoutMs): Promise<Res> {
    return this.#unary<Res>(this.#runtime, method, req, opts, timeoutMs);
  }

  #img<Res>(method: string, req: unknown, opts?: CallOptions, timeoutMs = this.#timeoutMs): Promise<Res> {
    return this.#unary<Res>(this.#image, method, req, opts, timeoutMs);
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
    const fn = (this.#runtime as unknown as Record<string, (req: unknown) => grpc.ClientReadableStream<T.ContainerEventResponse>>)['GetContainerEvents'];
    if (!fn) throw new CriError('ERR_CRI_UNIMPLEMENTED', 'GetContainerEvents', 'not in proto');
    const stream = fn.call(this.#runtime, {});
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
