/**
 * `SimulatedRuntime`: the simulated CRI runtime as one object — a grpc-js server on a unix
 * socket serving CRI runtime.v1 and runtime.v1alpha2 (RuntimeService + ImageService) over the
 * in-memory core.
 * The CLI (`shardlet sim-runtime`) wraps it with the real clock; tests run it in-process on a
 * FakeClock and drive it with CriClient.
 *
 * Listening: the runtime's own `net.Server` accepts on the socket and hands each connection to
 * the grpc-js server through a connection injector, wrapped in an H2AuthorityShim: real Go
 * gRPC clients (crictl, critest, kubelets ≤ 1.25) send the socket path as `:authority`, which
 * Node's HTTP/2 server would reset with PROTOCOL_ERROR; containerd accepts them, so must we
 * (h2-authority-shim.ts, hpack-authority-rewriter.ts).
 *
 * Lifecycle: `start()` removes a stale socket file, loads `statePath` if given, listens.
 * `close()` is graceful: ends hung calls and event streams, saves state, stops processes'
 * timers, shuts the server down and removes the socket. `destroy()` is a crash: no save
 * (only the last periodic save survives), immediate shutdown. Both idempotent.
 */
import { feedAttachStdin, stdinReaderOf } from './sim-attach-stdin.js';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { realClock, realRandom, type Clock, type Random, type TimerHandle } from '../shared/clock/clock.js';
import { loadCriProto, MAX_MESSAGE_BYTES } from '../shared/cri/cri-proto.js';
import { H2AuthorityShim } from './h2-authority-shim.js';
import { asV1alpha2, v1alpha2RuntimeService } from './sim-cri-v1alpha2.js';
import { SimEventHub } from './sim-events.js';
import { SimExecLog } from './sim-exec-log.js';
import { FaultInjector, type FaultConfig } from './sim-faults.js';
import { SimImageService } from './sim-image-service.js';
import { SimImageStore } from './sim-images.js';
import { SimImageFs, type SimImageFsSettings } from './sim-image-fs.js';
import type { SimContainerUsage } from './sim-state.js';
import { LatencyModel, ZERO_PROFILE, type LatencyProfile } from './sim-latency.js';
import { containerToJson, readStateFile, writeStateFile, type StateDocument } from './sim-persistence.js';
import { SimRuntimeCore } from './sim-runtime.js';
import { buildHandlers, PRE_ENCODED_METHODS, type SimHandlers } from './sim-server.js';
import { withPreEncoded } from './sim-wire-cache.js';
import { SimPortRegistry } from './sim-ports.js';
import { SimContainerFiles } from './sim-container-files.js';
import { SimStreamServer } from './sim-stream-server.js';

export interface SimulatedRuntimeOptions {
  /** Absolute path of the unix socket to serve on. */
  socketPath: string;
  clock?: Clock;
  /** Random source for fault draws. */
  random?: Random;
  profile?: LatencyProfile;
  faults?: Partial<FaultConfig>;
  /** JSON state file (see sim-persistence.ts); absent = state lives and dies with the process. */
  statePath?: string;
  /** Periodic state save interval (ms of clock time); 0 = only on close. */
  stateSaveIntervalMs?: number;
  /** Root directory reported in ImageFsInfo (containerd's --root). */
  root?: string;
  /** false: GetContainerEvents is UNIMPLEMENTED, like containerd 1.6.20. */
  containerEvents?: boolean;
  /** Images present at start (like images imported into containerd beforehand). */
  preloadImages?: readonly string[];
  /** The simulated image filesystem's size and extra usage (sim-image-fs.ts). */
  imageFs?: Partial<SimImageFsSettings>;
  /** Receives unexpected internal errors (default: stderr). */
  reportError?: (msg: string) => void;
  /** Append one line per ExecSync to this file (sim-exec-log.ts; `--exec-log`). */
  execLogPath?: string;
}

export const SIM_RUNTIME_DEFAULTS = Object.freeze({
  stateSaveIntervalMs: 5_000,
  root: '/var/lib/shardlet-sim',
  containerEvents: true,
  runtimeVersion: '0.1.0',
});

export class SimOptionsError extends Error {
  readonly code = 'ERR_SIM_OPTIONS';
}

export class SimulatedRuntime {
  readonly socketPath: string;
  readonly core: SimRuntimeCore;
  readonly images: SimImageStore;
  /** The simulated image filesystem: tests set its capacity and extra usage (set()) and read its figures(). */
  readonly imageFs: SimImageFs;
  readonly latency: LatencyModel;
  readonly #opts: SimulatedRuntimeOptions;
  readonly #clock: Clock;
  readonly #faults: FaultInjector;
  readonly #handlers: SimHandlers;
  readonly #execLog: SimExecLog | undefined;
  readonly #events: SimEventHub;
  readonly #server: grpc.Server;
  readonly #injector: grpc.ConnectionInjector;
  readonly #listener: net.Server;
  /** Accepted connections, destroyed by `destroy()` (a crash cuts them at once). */
  readonly #connections = new Set<net.Socket>();
  /** Ports simulated processes listen on (port-forward targets). */
  readonly ports = new SimPortRegistry();
  /** The CRI streaming server (Exec/Attach/PortForward URLs); set once start() listened. */
  #streaming: SimStreamServer | undefined;
  #saveTimer: TimerHandle | undefined;
  #state: 'new' | 'serving' | 'closed' = 'new';

  /**
   * Sets a live container's simulated usage (tests and the bench create memory or disk pressure
   * with it); unset fields keep their value. Throws SimOptionsError for an unknown container or a
   * value that is not a non-negative safe integer.
   */
  setContainerUsage(containerId: string, usage: SimContainerUsage): void {
    for (const [k, v] of Object.entries(usage)) {
      if (v !== undefined && (!Number.isSafeInteger(v) || (v as number) < 0)) throw new SimOptionsError(`${k} must be a non-negative integer, got ${String(v)}`);
    }
    const found = this.core.store.findContainer(containerId);
    if (!found.ok) throw new SimOptionsError(`no container ${JSON.stringify(containerId)}`);
    found.value.usage = { ...found.value.usage, ...usage };
  }

  private constructor(opts: SimulatedRuntimeOptions) {
    if (!path.isAbsolute(opts.socketPath)) throw new SimOptionsError(`socketPath must be absolute, got ${JSON.stringify(opts.socketPath)}`);
    const interval = opts.stateSaveIntervalMs ?? SIM_RUNTIME_DEFAULTS.stateSaveIntervalMs;
    if (!Number.isFinite(interval) || interval < 0) throw new SimOptionsError('stateSaveIntervalMs must be ≥ 0');
    this.#opts = opts;
    this.socketPath = opts.socketPath;
    this.#clock = opts.clock ?? realClock;
    this.images = new SimImageStore();
    const events = new SimEventHub();
    this.#events = events;
    this.core = new SimRuntimeCore({ clock: this.#clock, images: this.images, events });
    const core = this.core;
    this.imageFs = new SimImageFs({
      mountpoint: path.join(opts.root ?? SIM_RUNTIME_DEFAULTS.root, 'io.containerd.snapshotter.v1.overlayfs'),
      images: () => this.images.list(),
      containers: () => core.store.allContainers(),
      ...(opts.imageFs ? { settings: opts.imageFs } : {}),
    });
    this.latency = new LatencyModel(this.#clock, opts.profile ?? ZERO_PROFILE);
    this.#faults = new FaultInjector(opts.random ?? realRandom, opts.faults ?? {});
    const proto = loadCriProto();
    const runtimeDefinition = withPreEncoded(proto.runtime, PRE_ENCODED_METHODS);
    const execLog = opts.execLogPath !== undefined ? new SimExecLog(opts.execLogPath, this.#clock) : undefined;
    this.#execLog = execLog;
    this.#handlers = buildHandlers({
      ...(execLog ? { onExecSync: (id: string, cmd: readonly string[]) => execLog.record(id, cmd) } : {}),
      runtimeDefinition,
      core: this.core,
      images: new SimImageService({ store: this.images, clock: this.#clock, fs: this.imageFs }),
      events,
      latency: this.latency,
      faults: this.#faults,
      clock: this.#clock,
      reportError: opts.reportError ?? ((msg) => process.stderr.write(msg + '\n')),
      containerEvents: opts.containerEvents ?? SIM_RUNTIME_DEFAULTS.containerEvents,
      runtimeVersion: SIM_RUNTIME_DEFAULTS.runtimeVersion,
      streaming: () => this.#streaming,
    });
    this.#server = new grpc.Server({
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    });
    this.#server.addService(runtimeDefinition, this.#handlers.runtime);
    this.#server.addService(proto.image, this.#handlers.image);
    // runtime.v1alpha2 beside v1, as containerd 1.6 serves both (sim-cri-v1alpha2.ts).
    const alpha = v1alpha2RuntimeService(runtimeDefinition, this.#handlers.runtime);
    this.#server.addService(alpha.definition, alpha.implementation);
    this.#server.addService(asV1alpha2(proto.image), this.#handlers.image);
    this.#injector = this.#server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
    this.#listener = net.createServer((socket) => {
      this.#connections.add(socket);
      socket.once('close', () => this.#connections.delete(socket));
      this.#injector.injectConnection(new H2AuthorityShim(socket));
    });
  }

  /** Creates, loads state, and starts serving. */
  static async start(opts: SimulatedRuntimeOptions): Promise<SimulatedRuntime> {
    const rt = new SimulatedRuntime(opts);
    await rt.#start();
    return rt;
  }

  get endpoint(): string {
    return `unix://${this.socketPath}`;
  }

  /** Open GetContainerEvents streams. */
  get eventSubscribers(): number {
    return this.#events.subscriberCount;
  }

  /** Resolves when exactly `n` GetContainerEvents streams are open (at once if they are now). */
  whenEventSubscribers(n: number): Promise<void> {
    return this.#events.whenSubscribers(n);
  }

  get faults(): FaultConfig {
    return this.#faults.config;
  }

  /** Replaces the fault configuration (unset fields become 0 / all methods). */
  setFaults(f: Partial<FaultConfig>): void {
    this.#faults.set(f);
  }

  /** The streaming server's loopback port (0 before start). */
  get streamingPort(): number {
    return this.#streaming?.port ?? 0;
  }

  /** Streaming sessions open now. */
  get streamingSessions(): number {
    return this.#streaming?.sessionCount ?? 0;
  }

  async #startStreaming(): Promise<void> {
    const core = this.core;
    const files = new SimContainerFiles({ live: (id) => core.store.findContainer(id).ok });
    this.#streaming = await SimStreamServer.start({
      clock: this.#clock,
      ports: this.ports,
      execTarget: (id) => {
        const c = core.store.findContainer(id);
        if (!c.ok || c.value.state !== 'CONTAINER_RUNNING') return undefined;
        return { sandboxId: c.value.sandboxId, env: c.value.env, mounts: c.value.config.mounts ?? [], files: files.of(c.value.id, Math.floor(this.#clock.now() / 1000)) };
      },
      attach: (id, sink) => {
        const c = core.store.findContainer(id);
        if (!c.ok || c.value.state !== 'CONTAINER_RUNNING') return undefined;
        return core.taps.add(c.value.id, sink);
      },
      attachStdin: (id, stdin, signal) => {
        const c = core.store.findContainer(id);
        if (!c.ok || c.value.state !== 'CONTAINER_RUNNING' || c.value.config.stdin !== true) return false;
        const reader = stdinReaderOf(c.value.argv);
        if (reader === undefined) return false;
        const containerId = c.value.id;
        feedAttachStdin({
          clock: this.#clock, ports: this.ports,
          execTarget: (cid) => {
            const t = core.store.findContainer(cid);
            if (!t.ok || t.value.state !== 'CONTAINER_RUNNING') return undefined;
            return { sandboxId: t.value.sandboxId, env: t.value.env, mounts: t.value.config.mounts ?? [], files: files.of(t.value.id, Math.floor(this.#clock.now() / 1000)) };
          },
          output: (cid, stream, text) => core.containerOutput(cid, stream, text),
          end: (cid, code) => core.endContainerProcess(cid, code),
        }, containerId, reader, { stdinOnce: c.value.config.stdinOnce === true, tty: c.value.config.tty === true }, stdin, signal);
        return true;
      },
      sandboxReady: (id) => {
        const sb = core.store.findSandbox(id);
        return sb.ok && sb.value.state === 'SANDBOX_READY';
      },
      reportError: this.#opts.reportError ?? ((msg) => process.stderr.write(msg + '\n')),
    });
  }

  async #start(): Promise<void> {
    await this.#startStreaming();
    for (const ref of this.#opts.preloadImages ?? []) this.images.add(ref, false);
    if (this.#opts.statePath) this.#load(this.#opts.statePath);
    removeStaleSocket(this.socketPath);
    fs.mkdirSync(path.dirname(this.socketPath), { recursive: true });
    await new Promise<void>((resolve, reject) => {
      this.#listener.once('error', reject);
      this.#listener.listen(this.socketPath, () => {
        this.#listener.off('error', reject);
        resolve();
      });
    });
    this.#state = 'serving';
    this.#armSave();
  }

  #armSave(): void {
    const interval = this.#opts.stateSaveIntervalMs ?? SIM_RUNTIME_DEFAULTS.stateSaveIntervalMs;
    if (!this.#opts.statePath || interval === 0 || this.#state !== 'serving') return;
    this.#saveTimer = this.#clock.setTimer(interval, () => {
      this.saveState();
      this.#armSave();
    }, { unref: true });
  }

  /** Writes the state file now (no-op without statePath). */
  saveState(): void {
    const file = this.#opts.statePath;
    if (!file) return;
    const doc: StateDocument = {
      version: 1,
      savedAtMs: this.#clock.now(),
      ipCursor: this.core.ips.cursor,
      images: this.images.toJson(),
      sandboxes: [...this.core.store.allSandboxes()],
      containers: [...this.core.store.allContainers()].map(containerToJson),
    };
    writeStateFile(file, doc);
  }

  #load(file: string): void {
    const doc = readStateFile(file);
    if (!doc) return;
    for (const img of doc.images) this.images.add(img.ref, img.pulled);
    for (const sb of doc.sandboxes) this.core.restoreSandbox(sb);
    for (const c of doc.containers) this.core.restoreContainer({ ...c, process: undefined, log: undefined });
    this.core.ips.cursor = doc.ipCursor;
  }

  /** Graceful stop: saves state, ends calls, removes the socket. Idempotent. */
  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    const wasServing = this.#state === 'serving';
    this.#state = 'closed';
    this.#saveTimer?.cancel();
    this.#handlers.closeCalls();
    this.#streaming?.close();
    if (wasServing) this.saveState();
    this.core.detachAll();
    // Stop accepting first; tryShutdown then drains the injected sessions.
    this.#listener.close();
    await new Promise<void>((resolve) => this.#server.tryShutdown(() => resolve()));
    removeStaleSocket(this.socketPath);
    await this.#execLog?.close();
  }

  /** Crash: no state save, calls cut off. Idempotent. */
  destroy(): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    this.#saveTimer?.cancel();
    this.#streaming?.close();
    this.core.detachAll();
    this.#listener.close();
    this.#server.forceShutdown();
    for (const socket of this.#connections) socket.destroy();
    this.#connections.clear();
    removeStaleSocket(this.socketPath);
  }
}

/** Removes `p` if it is a socket (a previous run's); refuses to delete anything else. */
function removeStaleSocket(p: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch {
    return;
  }
  if (!st.isSocket()) throw new SimOptionsError(`${p} exists and is not a socket; refusing to remove it`);
  fs.unlinkSync(p);
}
