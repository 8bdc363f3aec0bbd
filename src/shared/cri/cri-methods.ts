/**
 * The unary CRI methods a client calls, resolved once per client from the proto: HTTP/2 path,
 * (de)serializers (a memoizing deserializer for the PLEG's two lists, cri-list-memo.ts), the
 * kubelet's operation name and the request header block the 'h2' transport sends.
 */
import { CriListMemo } from './cri-list-memo.js';
import { loadCriProto } from './cri-proto.js';
import { requestHeaderPrefix } from './h2/h2-request-headers.js';

/** CRI method → the kubelet's `operation_type` label (pkg/kubelet/kuberuntime/instrumented_services.go). */
export const OPERATION_NAMES: Readonly<Record<string, string>> = Object.freeze({
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
  Exec: 'exec',
  Attach: 'attach',
  PortForward: 'port_forward',
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

/** The operation name of `method` for the hook (the method's own name when the kubelet has none). */
export function operationOf(method: string): string {
  return OPERATION_NAMES[method] ?? method;
}

/** One unary CRI method. */
export interface UnaryMethod {
  readonly name: string;
  readonly path: string;
  readonly serialize: (req: unknown) => Buffer;
  readonly deserialize: (buf: Buffer) => unknown;
  readonly operation: string;
  /** The request's HPACK header block minus grpc-timeout ('h2' transport). */
  readonly headerPrefix: Buffer;
  /**
   * The deserializer keeps nothing that aliases the reply's bytes (the list memo copies what it
   * keeps; its items have no `bytes` fields), so the 'h2' transport may gather large replies
   * in a reused buffer (h2/reply-buffers.ts).
   */
  readonly copiesReply: boolean;
}

/** Every unary method of both services (one connection: the path names the service); memos are the caller's own. */
export function buildUnaryMethods(): ReadonlyMap<string, UnaryMethod> {
  const proto = loadCriProto();
  const listField: Readonly<Record<string, string>> = { ListPodSandbox: 'items', ListContainers: 'containers' };
  const methods = new Map<string, UnaryMethod>();
  for (const service of [proto.runtime, proto.image]) {
    for (const [name, def] of Object.entries(service)) {
      if (def.requestStream || def.responseStream) continue;
      const field = listField[name];
      const deserialize = field === undefined ? def.responseDeserialize : new CriListMemo({ deserialize: def.responseDeserialize, listField: field }).deserialize;
      methods.set(name, { name, path: def.path, serialize: def.requestSerialize, deserialize, operation: operationOf(name), headerPrefix: requestHeaderPrefix(def.path), copiesReply: field !== undefined });
    }
  }
  return methods;
}
