/**
 * The runtime seam. The gRPC client (`cri-client.ts`) satisfies these interfaces; so do test
 * fakes. Method names and request/response shapes mirror CRI runtime.v1 one to one so that what
 * the agent does is readable as CRI calls.
 */
import type {
  Container,
  ContainerFilter,
  ContainerStats,
  ContainerStatusResponse,
  CreateContainerRequest,
  AttachRequest,
  ExecRequest,
  ExecSyncRequest,
  ExecSyncResponse,
  Image,
  ImageFsInfoResponse,
  ImageSpec,
  ImageStatusResponse,
  PodSandbox,
  PodSandboxFilter,
  PodSandboxStats,
  PodSandboxStatusResponse,
  PortForwardRequest,
  PullImageRequest,
  RunPodSandboxRequest,
  StatusResponse,
  VersionResponse,
} from './cri-types.js';

export interface CallOptions {
  /** Aborting cancels the call; it then rejects with ERR_CRI_CANCELLED. */
  signal?: AbortSignal;
  /** Deadline for this call in ms; defaults to the client's (2 min, 4 min for pulls). */
  timeoutMs?: number;
}

export interface RuntimeService {
  version(opts?: CallOptions): Promise<VersionResponse>;
  /** `verbose`: ask for the runtime's extra info map (the sim runtime puts its call counts there). */
  status(opts?: CallOptions & { verbose?: boolean }): Promise<StatusResponse>;
  runPodSandbox(req: RunPodSandboxRequest, opts?: CallOptions): Promise<string>;
  stopPodSandbox(podSandboxId: string, opts?: CallOptions): Promise<void>;
  removePodSandbox(podSandboxId: string, opts?: CallOptions): Promise<void>;
  /** `verbose`: ask for the runtime's info map (containerd: the sandbox's config and OCI spec as JSON under "info"). */
  podSandboxStatus(podSandboxId: string, opts?: CallOptions & { verbose?: boolean }): Promise<PodSandboxStatusResponse>;
  listPodSandbox(filter?: PodSandboxFilter, opts?: CallOptions): Promise<PodSandbox[]>;
  createContainer(req: CreateContainerRequest, opts?: CallOptions): Promise<string>;
  startContainer(containerId: string, opts?: CallOptions): Promise<void>;
  /** `timeoutSeconds` is the grace period before SIGKILL; the call's deadline is extended by it. */
  stopContainer(containerId: string, timeoutSeconds: number, opts?: CallOptions): Promise<void>;
  removeContainer(containerId: string, opts?: CallOptions): Promise<void>;
  listContainers(filter?: ContainerFilter, opts?: CallOptions): Promise<Container[]>;
  /** `verbose`: ask for the runtime's info map (containerd: the container's config and OCI spec as JSON under "info"). */
  containerStatus(containerId: string, opts?: CallOptions & { verbose?: boolean }): Promise<ContainerStatusResponse>;
  execSync(req: ExecSyncRequest, opts?: CallOptions): Promise<ExecSyncResponse>;
  listContainerStats(opts?: CallOptions): Promise<ContainerStats[]>;
  listPodSandboxStats(opts?: CallOptions): Promise<PodSandboxStats[]>;
}

/**
 * The streaming calls (the kubelet's streamingRuntime): each prepares a session on the
 * runtime's own streaming server and answers with its URL; the caller then proxies the client's
 * upgraded connection there (pkg/kubelet/server/server.go, proxyStream). Errors are CriError.
 */
export interface StreamingService {
  exec(req: ExecRequest, opts?: CallOptions): Promise<string>;
  attach(req: AttachRequest, opts?: CallOptions): Promise<string>;
  portForward(req: PortForwardRequest, opts?: CallOptions): Promise<string>;
}

/**
 * Log rotation's one call (the kubelet's ContainerLogManager): the runtime closes the container's
 * log file and opens its path again (creating it), after the kubelet renamed the old one away.
 * containerd fails it for a container that is not running.
 */
export interface ContainerLogService {
  reopenContainerLog(containerId: string, opts?: CallOptions): Promise<void>;
}

export interface ImageService {
  listImages(filter?: ImageSpec, opts?: CallOptions): Promise<Image[]>;
  imageStatus(image: ImageSpec, opts?: CallOptions): Promise<ImageStatusResponse>;
  /** Returns the image reference (id) of the pulled image. */
  pullImage(req: PullImageRequest, opts?: CallOptions): Promise<string>;
  removeImage(image: ImageSpec, opts?: CallOptions): Promise<void>;
  imageFsInfo(opts?: CallOptions): Promise<ImageFsInfoResponse>;
}

/** Observer of every CRI call, for metrics (operation = CRI method name, e.g. `run_podsandbox`). */
export interface CriOperationEvent {
  operation: string;
  durationSeconds: number;
  error?: Error;
}
export type CriOperationHook = (ev: CriOperationEvent) => void;
