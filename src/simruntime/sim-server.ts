/**
 * gRPC wiring of the simulated runtime: builds the RuntimeService and ImageService handler
 * tables over the core, and is the one place where outcomes become gRPC statuses
 * (CriError → its status via grpcStatusOf; anything unexpected → UNKNOWN, logged — a bad
 * request never crashes the process).
 *
 * Per unary call, in order: fault decision (sim-faults.ts) → latency (sim-latency.ts; List*
 * calls are answered first so latency can scale with the item count) → the operation →
 * answer. The zero profile answers without touching the clock.
 *
 * Ownership: hung calls and open event streams are tracked here so `closeCalls()` can end
 * them when the runtime shuts down.
 */
import { simSandboxVerboseInfo, simVirtualFile } from './sim-cgroup.js';
import { SIMULATED_RUNTIME_NAME } from '../shared/cri/simulated-runtime-name.js';
import * as grpc from '@grpc/grpc-js';
import { CriError, grpcStatusOf } from '../shared/cri/cri-errors.js';
import type * as T from '../shared/cri/cri-types.js';
import type { SimEventHub } from './sim-events.js';
import { simExecSync } from './sim-exec.js';
import { catArgs } from './sim-mounts.js';
import { procSelfStatus, procSysValue } from './sim-proc-status.js';
import { containerCat, containerWriter } from './sim-files.js';
import type { FaultInjector } from './sim-faults.js';
import type { SimImageService } from './sim-image-service.js';
import type { LatencyModel } from './sim-latency.js';
import type { SimRuntimeCore } from './sim-runtime.js';
import { streamingOps } from './sim-stream-ops.js';
import type { SimStreamServer } from './sim-stream-server.js';
import { containerStatsOf, sandboxStatsOf } from './sim-stats.js';
import type { ContainerRecord, SandboxRecord } from './sim-state.js';
import { toCriContainer, toCriSandbox } from './sim-views.js';
import { ListFrameCache, PreEncoded, serializerOf } from './sim-wire-cache.js';
import type { Clock } from '../shared/clock/clock.js';

export interface SimServerDeps {
  core: SimRuntimeCore;
  images: SimImageService;
  events: SimEventHub;
  latency: LatencyModel;
  faults: FaultInjector;
  clock: Clock;
  /** Where unexpected (bug) errors are reported; the call itself answers UNKNOWN. */
  reportError: (msg: string) => void;
  /** false: GetContainerEvents answers UNIMPLEMENTED, as containerd 1.6.20 does. */
  containerEvents: boolean;
  runtimeVersion: string;
  /** The RuntimeService definition (its serializers build the cached list frames). */
  runtimeDefinition: grpc.ServiceDefinition;
  /** The streaming server behind Exec/Attach/PortForward (undefined until it listens). */
  streaming: () => Pick<SimStreamServer, 'prepare'> | undefined;
  /** Told of every ExecSync as it arrives (the --exec-log, sim-exec-log.ts). */
  onExecSync?: (containerId: string, cmd: readonly string[]) => void;
}

/**
 * Status(verbose=true) info key carrying the per-method call counts since start, as JSON
 * (`{"RunPodSandbox": 1000, ...}`): the runtime's own view of how many CRI calls a client made,
 * which the bench reads around each workload (CRI calls per started pod, issue 15).
 */
export const SIM_OP_COUNTS_INFO_KEY = 'shardlet.sim/op-counts';

/** Methods whose handlers answer with PreEncoded (see sim-wire-cache.ts). */
export const PRE_ENCODED_METHODS: readonly string[] = Object.freeze(['ListContainers', 'ListPodSandbox']);

type Req = Record<string, unknown>;
type Op = (req: Req) => unknown;

export interface SimHandlers {
  runtime: grpc.UntypedServiceImplementation;
  image: grpc.UntypedServiceImplementation;
  /** Ends hung calls (UNAVAILABLE) and event streams. */
  closeCalls(): void;
}

function toStatus(err: unknown, report: (msg: string) => void, method: string): Partial<grpc.StatusObject> {
  if (err instanceof CriError) return { code: grpcStatusOf(err.code), details: err.message };
  report(`sim-runtime: unexpected error in ${method}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return { code: grpc.status.UNKNOWN, details: `${method}: ${err instanceof Error ? err.message : String(err)}` };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const int = (v: unknown): number => {
  const n = Number(v ?? 0);
  return Number.isFinite(n) ? n : 0;
};

export function buildHandlers(d: SimServerDeps): SimHandlers {
  const hung = new Set<grpc.sendUnaryData<unknown>>();
  const streams = new Set<grpc.ServerWritableStream<unknown, unknown>>();

  /** List* methods: answer first, then latency by item count. */
  const listOps = new Set(['ListPodSandbox', 'ListContainers', 'ListContainerStats', 'ListPodSandboxStats', 'ListImages']);

  const run = async (method: string, op: Op, req: Req): Promise<unknown> => {
    if (listOps.has(method)) {
      const res = op(req);
      const items = res instanceof PreEncoded ? res.count : (Object.values(res as Record<string, unknown>).find(Array.isArray)?.length ?? 0);
      if (!d.latency.isFree(method, items)) await d.latency.apply(method, items);
      return res;
    }
    if (!d.latency.isFree(method)) await d.latency.apply(method);
    return await op(req);
  };

  /** Calls received per method (every unary call, faulted ones included). Written here only. */
  const opCounts = new Map<string, number>();
  const unary = (method: string, op: Op): grpc.handleUnaryCall<Req, unknown> => (call, callback) => {
    opCounts.set(method, (opCounts.get(method) ?? 0) + 1);
    const fault = d.faults.decide(method);
    switch (fault) {
      case 'unavailable':
        callback({ code: grpc.status.UNAVAILABLE, details: `sim-runtime: injected UNAVAILABLE (${method})` });
        return;
      case 'hang':
        hung.add(callback);
        call.on('cancelled', () => hung.delete(callback));
        return;
      case 'deadline':
      case 'none':
        break;
      default: {
        const never: never = fault;
        throw new Error(`unreachable ${String(never)}`);
      }
    }
    run(method, op, call.request ?? {}).then(
      (res) => {
        if (fault === 'deadline') callback({ code: grpc.status.DEADLINE_EXCEEDED, details: `sim-runtime: injected DEADLINE_EXCEEDED after ${method} took effect` });
        else callback(null, res);
      },
      (err: unknown) => callback(toStatus(err, d.reportError, method)),
    );
  };

  const { core, images } = d;
  const encodeContainers = serializerOf(d.runtimeDefinition, 'ListContainers');
  const encodeSandboxes = serializerOf(d.runtimeDefinition, 'ListPodSandbox');
  const containerFrames = new ListFrameCache<ContainerRecord>((c) => encodeContainers({ containers: [toCriContainer(c)] }), (c) => c.state);
  const sandboxFrames = new ListFrameCache<SandboxRecord>((s) => encodeSandboxes({ items: [toCriSandbox(s)] }), (s) => s.state);
  const runtimeOps: Record<string, Op> = {
    Version: () => ({ version: '0.1.0', runtimeName: SIMULATED_RUNTIME_NAME, runtimeVersion: d.runtimeVersion, runtimeApiVersion: 'v1' }),
    Status: (r) => ({
      status: {
        conditions: [
          { type: 'RuntimeReady', status: true, reason: '', message: '' },
          { type: 'NetworkReady', status: true, reason: '', message: '' },
        ],
      },
      info: r['verbose'] === true ? { [SIM_OP_COUNTS_INFO_KEY]: JSON.stringify(Object.fromEntries(opCounts)) } : {},
    }),
    RunPodSandbox: (r) => ({ podSandboxId: core.runPodSandbox(r as unknown as T.RunPodSandboxRequest) }),
    StopPodSandbox: (r) => (core.stopPodSandbox(str(r['podSandboxId'])), {}),
    RemovePodSandbox: (r) => (core.removePodSandbox(str(r['podSandboxId'])), {}),
    PodSandboxStatus: (r) => {
      const verbose = r['verbose'] === true;
      const res = core.podSandboxStatus(str(r['podSandboxId']), verbose);
      const sb = verbose ? core.store.findSandbox(str(r['podSandboxId'])) : undefined;
      return sb?.ok ? { ...res, info: simSandboxVerboseInfo(res.info, sb.value.id, sb.value.config) } : res;
    },
    ListPodSandbox: (r) => sandboxFrames.encode(core.listPodSandboxRecords(r['filter'] as T.PodSandboxFilter | null)),
    CreateContainer: (r) => ({ containerId: core.createContainer(r as unknown as T.CreateContainerRequest) }),
    StartContainer: (r) => (core.startContainer(str(r['containerId'])), {}),
    StopContainer: async (r) => (await core.stopContainer(str(r['containerId']), Math.max(0, int(r['timeout']))), {}),
    RemoveContainer: (r) => (core.removeContainer(str(r['containerId'])), {}),
    ListContainers: (r) => containerFrames.encode(core.listContainerRecords(r['filter'] as T.ContainerFilter | null)),
    ContainerStatus: (r) => core.containerStatus(str(r['containerId']), r['verbose'] === true),
    UpdateContainerResources: (r) => (core.containerStatus(str(r['containerId'])), {}),
    ReopenContainerLog: (r) => (core.reopenContainerLog(str(r['containerId'])), {}),
    ExecSync: (r) => {
      const c = core.execTarget(str(r['containerId']));
      const cmd = Array.isArray(r['cmd']) ? (r['cmd'] as unknown[]).map(String) : [];
      d.onExecSync?.(c.id, cmd);
      const ctx = core.processContext(c);
      const files = catArgs(cmd);
      if (files) {
        const sb = core.store.findSandbox(c.sandboxId);
        const sandboxConfig = sb.ok ? sb.value.config : undefined;
        const sysctls = sandboxConfig?.linux?.sysctls;
        // The runtime's own files (/etc/hosts, resolv.conf), mounts, then what the kernel makes up.
        return containerCat(c.config.mounts ?? [], sandboxConfig, files, (p) =>
          p === '/proc/self/status' ? procSelfStatus(ctx.security, 'cat', 7) : (procSysValue(sysctls, p) ?? simVirtualFile(p, sandboxConfig, c)));
      }
      return simExecSync(d.clock, cmd, Math.max(0, int(r['timeout'])), c.env, ctx, containerWriter(c.config.mounts ?? []));
    },
    ...streamingOps(core, d.streaming),
    ContainerStats: (r) => {
      const res = core.store.findContainer(str(r['containerId']));
      if (!res.ok) throw new CriError('ERR_CRI_NOT_FOUND', 'ContainerStats', `failed to find container "${str(r['containerId'])}": not found`);
      return { stats: containerStatsOf(res.value, d.clock.now()) };
    },
    ListContainerStats: () => {
      const now = d.clock.now();
      return { stats: core.store.listContainers({ state: 'CONTAINER_RUNNING' }).map((c) => containerStatsOf(c, now)) };
    },
    PodSandboxStats: (r) => {
      const res = core.store.findSandbox(str(r['podSandboxId']));
      if (!res.ok) throw new CriError('ERR_CRI_NOT_FOUND', 'PodSandboxStats', `failed to find sandbox "${str(r['podSandboxId'])}": not found`);
      return { stats: sandboxStatsOf(res.value, core.store.containersOf(res.value.id), d.clock.now()) };
    },
    ListPodSandboxStats: () => {
      const now = d.clock.now();
      return { stats: core.store.listSandboxes({ state: 'SANDBOX_READY' }).map((s) => sandboxStatsOf(s, core.store.containersOf(s.id), now)) };
    },
  };
  const imageOps: Record<string, Op> = {
    ListImages: (r) => ({ images: images.listImages((r['filter'] as { image?: T.ImageSpec | null } | null)?.image) }),
    ImageStatus: (r) => ({ image: images.imageStatus(r['image'] as T.ImageSpec | null), info: {} }),
    PullImage: async (r) => ({ imageRef: await images.pullImage(r as unknown as T.PullImageRequest) }),
    RemoveImage: (r) => (images.removeImage(r['image'] as T.ImageSpec | null), {}),
    ImageFsInfo: () => images.imageFsInfo(),
  };

  const runtime: grpc.UntypedServiceImplementation = {};
  for (const [m, op] of Object.entries(runtimeOps)) runtime[m] = unary(m, op) as grpc.UntypedHandleCall;
  const image: grpc.UntypedServiceImplementation = {};
  for (const [m, op] of Object.entries(imageOps)) image[m] = unary(m, op) as grpc.UntypedHandleCall;

  const getContainerEvents: grpc.handleServerStreamingCall<unknown, unknown> = (call) => {
    if (!d.containerEvents) {
      call.emit('error', { code: grpc.status.UNIMPLEMENTED, details: 'method GetContainerEvents not implemented' });
      return;
    }
    streams.add(call);
    const unsubscribe = d.events.subscribe((ev) => call.write(ev));
    const done = (): void => {
      unsubscribe();
      streams.delete(call);
    };
    call.on('cancelled', done);
    call.on('close', done);
  };
  runtime['GetContainerEvents'] = getContainerEvents as grpc.UntypedHandleCall;

  return {
    runtime,
    image,
    closeCalls: () => {
      for (const cb of hung) cb({ code: grpc.status.UNAVAILABLE, details: 'sim-runtime: shutting down' });
      hung.clear();
      for (const s of streams) s.end();
      streams.clear();
    },
  };
}
