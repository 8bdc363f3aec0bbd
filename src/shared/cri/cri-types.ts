/**
 * TypeScript shapes of the CRI runtime.v1 messages shardlet uses, as @grpc/proto-loader decodes
 * them with {@link PROTO_LOADER_OPTIONS}: camelCase field names, enums as their string names,
 * int64/uint64 as decimal strings (nanosecond timestamps exceed 2^53), bytes as Buffer, and
 * every scalar present with its proto3 default. Only fields shardlet reads or writes are typed;
 * the wire contract itself is `proto/cri-runtime-v1.proto`.
 *
 * This module is plain types: no gRPC, no I/O. Both the agent and the simulated runtime use it.
 */

/** A decimal int64 as proto-loader hands it over with `longs: String`. */
export type Int64 = string;
export type StringMap = Record<string, string>;

export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';
export type ContainerEventType =
  | 'CONTAINER_CREATED_EVENT'
  | 'CONTAINER_STARTED_EVENT'
  | 'CONTAINER_STOPPED_EVENT'
  | 'CONTAINER_DELETED_EVENT';

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}

export interface ContainerMetadata {
  name: string;
  attempt: number;
}

/** Env var. The wire type of `value` is bytes (see proto/); the client encodes this string as UTF-8. */
export interface KeyValue {
  key: string;
  value: string;
}

export interface ImageSpec {
  image: string;
  annotations?: StringMap;
  userSpecifiedImage?: string;
  runtimeHandler?: string;
}

export interface NamespaceOption {
  network?: NamespaceMode;
  pid?: NamespaceMode;
  ipc?: NamespaceMode;
  /** With a TARGET mode: the container whose namespace is joined (ephemeral containers). */
  targetId?: string;
}

/** Int64Value (a wrapper, so that 0 differs from unset). */
export interface Int64Value {
  value: Int64 | number;
}

/** SecurityProfile.ProfileType (enum names). */
export type SecurityProfileType = 'RuntimeDefault' | 'Unconfined' | 'Localhost';

export interface SecurityProfile {
  profileType: SecurityProfileType;
  /** Localhost only: the profile's absolute path (seccomp) or name (AppArmor). */
  localhostRef?: string;
}

export interface SELinuxOption {
  user: string;
  role: string;
  type: string;
  level: string;
}

export interface Capability {
  addCapabilities?: string[];
  dropCapabilities?: string[];
}

/** LinuxContainerSecurityContext: the container's identity and confinement (the kubelet's determineEffectiveSecurityContext). */
export interface LinuxContainerSecurityContext {
  capabilities?: Capability;
  privileged?: boolean;
  namespaceOptions?: NamespaceOption;
  selinuxOptions?: SELinuxOption;
  runAsUser?: Int64Value;
  runAsGroup?: Int64Value;
  runAsUsername?: string;
  readonlyRootfs?: boolean;
  supplementalGroups?: (Int64 | number)[];
  noNewPrivs?: boolean;
  maskedPaths?: string[];
  readonlyPaths?: string[];
  seccomp?: SecurityProfile;
  apparmor?: SecurityProfile;
  /** Deprecated string form, still sent by the kubelet for older runtimes. */
  apparmorProfile?: string;
}

/** LinuxSandboxSecurityContext (the kubelet's generatePodSandboxLinuxConfig). */
export interface LinuxSandboxSecurityContext {
  namespaceOptions?: NamespaceOption;
  selinuxOptions?: SELinuxOption;
  runAsUser?: Int64Value;
  runAsGroup?: Int64Value;
  readonlyRootfs?: boolean;
  supplementalGroups?: (Int64 | number)[];
  privileged?: boolean;
  seccomp?: SecurityProfile;
  apparmor?: SecurityProfile;
}

export interface PortMapping {
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  containerPort: number;
  hostPort?: number;
  hostIp?: string;
}

export interface DnsConfig {
  servers: string[];
  searches: string[];
  options: string[];
}

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  hostname?: string;
  logDirectory?: string;
  dnsConfig?: DnsConfig;
  portMappings?: PortMapping[];
  labels?: StringMap;
  annotations?: StringMap;
  linux?: {
    cgroupParent?: string;
    securityContext?: LinuxSandboxSecurityContext;
    sysctls?: StringMap;
  };
}

/** CRI MountPropagation (enum names, as proto-loader encodes them). */
export type MountPropagation = 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL';

export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly?: boolean;
  selinuxRelabel?: boolean;
  propagation?: MountPropagation;
}

export interface ContainerConfig {
  metadata: ContainerMetadata;
  image: ImageSpec;
  command?: string[];
  args?: string[];
  workingDir?: string;
  envs?: KeyValue[];
  mounts?: Mount[];
  labels?: StringMap;
  annotations?: StringMap;
  logPath?: string;
  stdin?: boolean;
  /** Stdin closes after the first attach ends (the kubelet passes container.stdinOnce). */
  stdinOnce?: boolean;
  tty?: boolean;
  linux?: { resources?: LinuxContainerResources; securityContext?: LinuxContainerSecurityContext };
}

export interface LinuxContainerResources {
  cpuPeriod?: Int64 | number;
  cpuQuota?: Int64 | number;
  cpuShares?: Int64 | number;
  memoryLimitInBytes?: Int64 | number;
  oomScoreAdj?: Int64 | number;
}

export interface PodSandboxNetworkStatus {
  ip: string;
  additionalIps: { ip: string }[];
}

export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxMetadata | null;
  state: PodSandboxState;
  createdAt: Int64;
  network: PodSandboxNetworkStatus | null;
  /** LinuxPodSandboxStatus: the namespace modes the sandbox runs with (absent from runtimes that omit it). */
  linux?: { namespaces: { options: NamespaceOption | null } | null } | null;
  labels: StringMap;
  annotations: StringMap;
  runtimeHandler: string;
}

export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata | null;
  state: PodSandboxState;
  createdAt: Int64;
  labels: StringMap;
  annotations: StringMap;
  runtimeHandler: string;
}

export interface Container {
  id: string;
  podSandboxId: string;
  metadata: ContainerMetadata | null;
  image: ImageSpec | null;
  imageRef: string;
  state: ContainerState;
  createdAt: Int64;
  labels: StringMap;
  annotations: StringMap;
  imageId: string;
}

export interface ContainerStatus {
  id: string;
  metadata: ContainerMetadata | null;
  state: ContainerState;
  createdAt: Int64;
  startedAt: Int64;
  finishedAt: Int64;
  exitCode: number;
  image: ImageSpec | null;
  imageRef: string;
  reason: string;
  message: string;
  labels: StringMap;
  annotations: StringMap;
  mounts: Mount[];
  logPath: string;
  imageId: string;
}

export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: Int64;
  /** The image's numeric user (absent/null when the image names its user, or names none). */
  uid?: { value: Int64 } | null;
  username: string;
  spec: ImageSpec | null;
  pinned: boolean;
}

export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

// ---- requests and responses ------------------------------------------------------------

export interface VersionResponse {
  version: string;
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

export interface StatusResponse {
  status: { conditions: RuntimeCondition[] } | null;
  info: StringMap;
}

export interface RunPodSandboxRequest {
  config: PodSandboxConfig;
  runtimeHandler?: string;
}
export interface RunPodSandboxResponse {
  podSandboxId: string;
}

export interface PodSandboxStatusResponse {
  status: PodSandboxStatus | null;
  info: StringMap;
  containersStatuses: ContainerStatus[];
  timestamp: Int64;
}

export interface PodSandboxFilter {
  id?: string;
  state?: { state: PodSandboxState };
  labelSelector?: StringMap;
}

export interface ContainerFilter {
  id?: string;
  state?: { state: ContainerState };
  podSandboxId?: string;
  labelSelector?: StringMap;
}

export interface CreateContainerRequest {
  podSandboxId: string;
  config: ContainerConfig;
  sandboxConfig: PodSandboxConfig;
}

export interface ContainerStatusResponse {
  status: ContainerStatus | null;
  info: StringMap;
}

export interface ExecSyncRequest {
  containerId: string;
  cmd: string[];
  /** Seconds; 0 means no timeout. */
  timeout?: Int64 | number;
}

export interface ExecSyncResponse {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

/** CRI Exec: prepares a streaming endpoint; the runtime answers with its URL. */
export interface ExecRequest {
  containerId: string;
  cmd: string[];
  tty: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}

/** CRI Attach: prepares a streaming endpoint to the container's own stdio. */
export interface AttachRequest {
  containerId: string;
  stdin: boolean;
  tty: boolean;
  stdout: boolean;
  stderr: boolean;
}

/** CRI PortForward: prepares a streaming endpoint for the sandbox's ports. */
export interface PortForwardRequest {
  podSandboxId: string;
  port: number[];
}

/** Exec, Attach and PortForward all answer with the streaming server's URL. */
export interface StreamingUrlResponse {
  url: string;
}

export interface ContainerEventResponse {
  containerId: string;
  containerEventType: ContainerEventType;
  createdAt: Int64;
  podSandboxStatus: PodSandboxStatus | null;
  containersStatuses: ContainerStatus[];
}

export interface ImageStatusResponse {
  image: Image | null;
  info: StringMap;
}

export interface PullImageRequest {
  image: ImageSpec;
  auth?: { username?: string; password?: string; auth?: string };
  sandboxConfig?: PodSandboxConfig;
}

export interface FilesystemUsage {
  timestamp: Int64;
  fsId: { mountpoint: string } | null;
  usedBytes: { value: Int64 } | null;
  inodesUsed: { value: Int64 } | null;
}

export interface ImageFsInfoResponse {
  imageFilesystems: FilesystemUsage[];
  containerFilesystems: FilesystemUsage[];
}

/** Stats are passed through untyped beyond ids: shardlet only forwards them. */
export interface ContainerStats {
  attributes: { id: string; metadata: ContainerMetadata | null; labels: StringMap; annotations: StringMap } | null;
  cpu: { timestamp: Int64; usageCoreNanoSeconds: { value: Int64 } | null } | null;
  memory: { timestamp: Int64; workingSetBytes: { value: Int64 } | null } | null;
  /** The container's writable layer (CRI ContainerStats.writable_layer). */
  writableLayer?: FilesystemUsage | null;
}

export interface PodSandboxStats {
  attributes: { id: string; metadata: PodSandboxMetadata | null; labels: StringMap; annotations: StringMap } | null;
  linux: unknown;
}
