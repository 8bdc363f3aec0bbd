/**
 * The simulated runtime's CRI semantics (containerd 1.6 CRI plugin as the reference), free of
 * gRPC: the server (`sim-server.ts`) decodes a request, applies latency and faults, and calls
 * one method here; errors are thrown as CriError with the code containerd's status maps to.
 *
 * Lifecycle (containerd's, which the kubelet expects):
 *   sandbox:   RunPodSandbox → READY ─StopPodSandbox→ NOTREADY ─RemovePodSandbox→ (gone)
 *   container: CreateContainer → CREATED ─Start→ RUNNING ─(exit | Stop)→ EXITED ─Remove→ (gone)
 *              a failed start goes CREATED → EXITED (exit 128, reason StartError).
 * Idempotency: StopPodSandbox on a stopped sandbox, StopContainer on a non-running container,
 * and Remove* of unknown ids are OK. StopPodSandbox/Remove* of a running container kill it
 * (SIGKILL, no grace, as containerd's forcible stop does). Unknown ids elsewhere: NOT_FOUND;
 * an empty or ambiguous id: UNKNOWN (containerd's truncindex errors). Ids may be given as any
 * unique prefix. Names are reserved from create to remove ("is reserved for").
 *
 * Deliberate differences from the brief/containerd, each also noted at the spot:
 *  - RemoveContainer of a RUNNING container force-kills and removes it (OK), as containerd
 *    1.6 does (container_remove.go "Forcibly stopping container"), not FAILED_PRECONDITION.
 *  - CreateContainer in a NOTREADY sandbox fails NOT_FOUND (containerd cannot find the
 *    sandbox's task).
 */
import { stdinReaderOf } from './sim-attach-stdin.js';
import { targetNamespaceError } from './sim-namespace-target.js';
import { checkMountSources, createMissingSources } from './sim-mounts.js';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../shared/clock/clock.js';
import { CriError } from '../shared/cri/cri-errors.js';
import type * as T from '../shared/cri/cri-types.js';
import { simFlag, simNumber } from './sim-annotations.js';
import type { SimEventHub } from './sim-events.js';
import { isBusyboxLike, type SimImageStore } from './sim-images.js';
import { clampChatter } from './sim-log-chatter.js';
import { CriLogWriter } from './sim-logs.js';
import { SimOutputTaps } from './sim-output-taps.js';
import { PodIpPool } from './sim-network.js';
import { SimProcess, type ProcessExit, type ProcessOverrides } from './sim-process.js';
import { resolveArgv } from './sim-shell.js';
import { imageUserDbOf } from './sim-image-users.js';
import { defaultProcessContext, type SimProcessContext } from './sim-process-context.js';
import { runtimeCapabilities, simSecurityOf } from './sim-security.js';
import { containerVerboseInfo, sandboxVerboseInfo } from './sim-verbose-info.js';
import { containerWriter } from './sim-files.js';
import { containerNameOf, sandboxNameOf, SimStore, type ContainerRecord, type LookupResult, type SandboxRecord } from './sim-state.js';
import { msToNs, REASON_OOM, REASON_START_ERROR, toCriContainer, toCriContainerStatus, toCriSandbox, toCriSandboxStatus } from './sim-views.js';

/** containerd's exit code for a container that failed to start (errorStartExitCode). */
export const START_ERROR_EXIT_CODE = 128;
/** Runtime handlers accepted by RunPodSandbox ('' = default). */
const KNOWN_HANDLERS = new Set(['', 'runc']);

export interface SimRuntimeCoreDeps {
  clock: Clock;
  images: SimImageStore;
  events: SimEventHub;
  /** Generates object ids; defaults to 64 random hex digits like containerd. */
  newId?: () => string;
  /** What "all capabilities" are (privileged, add ALL): default the runtime process's own CapEff, as containerd. */
  allCapabilities?: bigint;
}

function lookupError(op: string, kind: 'sandbox' | 'container', id: string, why: 'empty' | 'not-found' | 'ambiguous', prefix: string): CriError {
  switch (why) {
    case 'not-found':
      return new CriError('ERR_CRI_NOT_FOUND', op, `${prefix} ${kind} "${id}": not found`);
    case 'empty':
      return new CriError('ERR_CRI_UNKNOWN', op, `${prefix} ${kind} "${id}": prefix can't be empty`);
    case 'ambiguous':
      return new CriError('ERR_CRI_UNKNOWN', op, `${prefix} ${kind} "${id}": multiple IDs found with provided prefix: ${id}`);
    default: {
      const never: never = why;
      throw new Error(`unreachable ${String(never)}`);
    }
  }
}

function must<V>(r: LookupResult<V>, op: string, kind: 'sandbox' | 'container', id: string, prefix: string): V {
  if (r.ok) return r.value;
  throw lookupError(op, kind, id, r.why, prefix);
}

export class SimRuntimeCore {
  readonly store = new SimStore();
  readonly ips = new PodIpPool();
  /** Live output of running containers (CRI Attach). */
  readonly taps = new SimOutputTaps();
  readonly #clock: Clock;
  readonly #images: SimImageStore;
  readonly #events: SimEventHub;
  readonly #newId: () => string;
  readonly #allCaps: bigint;
  /** Per container id: resolvers waiting for its process to exit (StopContainer). */
  readonly #exitWaiters = new Map<string, (() => void)[]>();

  constructor(deps: SimRuntimeCoreDeps) {
    this.#clock = deps.clock;
    this.#images = deps.images;
    this.#events = deps.events;
    this.#newId = deps.newId ?? (() => randomBytes(32).toString('hex'));
    this.#allCaps = deps.allCapabilities ?? runtimeCapabilities();
  }

  #nowNs(): string {
    return msToNs(this.#clock.now());
  }

  // ---- sandboxes ---------------------------------------------------------------------------

  runPodSandbox(req: T.RunPodSandboxRequest): string {
    const config = req.config as T.PodSandboxConfig | null | undefined;
    const md = config?.metadata;
    if (!config || !md) throw new CriError('ERR_CRI_UNKNOWN', 'RunPodSandbox', 'sandbox config must include metadata');
    const name = sandboxNameOf(md);
    const owner = this.store.sandboxNameOwner(name);
    if (owner !== undefined) {
      throw new CriError('ERR_CRI_UNKNOWN', 'RunPodSandbox', `failed to reserve sandbox name "${name}": name "${name}" is reserved for "${owner}"`);
    }
    const handler = req.runtimeHandler ?? '';
    if (!KNOWN_HANDLERS.has(handler)) {
      throw new CriError('ERR_CRI_UNKNOWN', 'RunPodSandbox', `failed to get sandbox runtime: no runtime for "${handler}" is configured`);
    }
    const hostNetwork = config.linux?.securityContext?.namespaceOptions?.network === 'NODE';
    const rec: SandboxRecord = {
      id: this.#newId(),
      name,
      config,
      runtimeHandler: handler,
      state: 'SANDBOX_READY',
      createdAtNs: this.#nowNs(),
      ip: hostNetwork ? '' : this.ips.allocate(),
      hostNetwork,
    };
    this.store.addSandbox(rec);
    this.#publish(rec.id, 'CONTAINER_STARTED_EVENT', rec);
    return rec.id;
  }

  /** Kills the sandbox's running containers (no grace), then marks it NOTREADY. Idempotent. */
  stopPodSandbox(id: string): void {
    const sb = must(this.store.findSandbox(id), 'StopPodSandbox', 'sandbox', id, 'an error occurred when try to find');
    for (const c of this.store.containersOf(sb.id)) this.#kill(c);
    if (sb.state === 'SANDBOX_READY') {
      sb.state = 'SANDBOX_NOTREADY';
      if (sb.ip !== '') this.ips.release(sb.ip);
      this.#publish(sb.id, 'CONTAINER_STOPPED_EVENT', sb);
    }
  }

  removePodSandbox(id: string): void {
    const r = this.store.findSandbox(id);
    if (!r.ok) {
      if (r.why === 'not-found') return; // containerd: "Do not return error if the id doesn't exist"
      throw lookupError('RemovePodSandbox', 'sandbox', id, r.why, 'an error occurred when try to find');
    }
    const sb = r.value;
    this.stopPodSandbox(sb.id);
    for (const c of this.store.containersOf(sb.id)) this.removeContainer(c.id);
    this.store.removeSandbox(sb);
    this.#publish(sb.id, 'CONTAINER_DELETED_EVENT', sb);
  }

  /** `verbose`: the info map carries what the sandbox was created with (sim-verbose-info.ts). */
  podSandboxStatus(id: string, verbose = false): T.PodSandboxStatusResponse {
    const sb = must(this.store.findSandbox(id), 'PodSandboxStatus', 'sandbox', id, 'an error occurred when trying to find');
    return { status: toCriSandboxStatus(sb), info: verbose ? sandboxVerboseInfo(sb) : {}, containersStatuses: [], timestamp: this.#nowNs() };
  }

  listPodSandbox(filter: T.PodSandboxFilter | null | undefined): T.PodSandbox[] {
    return this.listPodSandboxRecords(filter).map(toCriSandbox);
  }

  /** The records ListPodSandbox answers with (the server encodes them from its frame cache). */
  listPodSandboxRecords(filter: T.PodSandboxFilter | null | undefined): SandboxRecord[] {
    return this.store.listSandboxes({
      ...(filter?.id ? { id: filter.id } : {}),
      ...(filter?.state ? { state: filter.state.state } : {}),
      ...(filter?.labelSelector ? { labelSelector: filter.labelSelector } : {}),
    });
  }

  // ---- containers --------------------------------------------------------------------------

  createContainer(req: T.CreateContainerRequest): string {
    const op = 'CreateContainer';
    const sb = must(this.store.findSandbox(req.podSandboxId ?? ''), op, 'sandbox', req.podSandboxId ?? '', 'failed to find');
    const config = req.config as T.ContainerConfig | null | undefined;
    const md = config?.metadata;
    if (!config || !md) throw new CriError('ERR_CRI_UNKNOWN', op, 'container config must include metadata');
    const sandboxConfig = (req.sandboxConfig as T.PodSandboxConfig | null | undefined) ?? sb.config;
    const name = containerNameOf(md, sandboxConfig.metadata);
    const owner = this.store.containerNameOwner(name);
    if (owner !== undefined) {
      throw new CriError('ERR_CRI_UNKNOWN', op, `failed to reserve container name "${name}": name "${name}" is reserved for "${owner}"`);
    }
    const imageRef = config.image?.image ?? '';
    const image = this.#images.resolve(imageRef);
    if (!image) throw new CriError('ERR_CRI_NOT_FOUND', op, `failed to resolve image "${imageRef}": not found`);
    if (sb.state !== 'SANDBOX_READY') {
      // Deliberate: containerd needs the sandbox's task (pid) here; a stopped sandbox has none.
      throw new CriError('ERR_CRI_NOT_FOUND', op, `failed to get sandbox container task: no running task found: task ${sb.id} not found: not found`);
    }
    const id = this.#newId();
    const targetError = targetNamespaceError(config, sb.id, { container: (cid) => {
      const t = this.store.findContainer(cid);
      return t.ok ? { sandboxId: t.value.sandboxId, state: t.value.state } : undefined;
    } });
    if (targetError !== undefined) throw new CriError('ERR_CRI_UNKNOWN', op, `failed to generate container "${id}" spec: ${targetError}`);
    const users = imageUserDbOf(image.repoTags[0] ?? imageRef);
    const security = simSecurityOf(config, users, this.#allCaps);
    if (!security.ok) throw new CriError('ERR_CRI_UNKNOWN', op, `failed to generate container "${id}" spec: failed to generate spec: ${security.message}`);
    const seccomp = config.linux?.securityContext?.seccomp;
    if (seccomp?.profileType === 'Localhost' && !config.linux?.securityContext?.privileged) {
      const ref = seccomp.localhostRef ?? '';
      if (!path.isAbsolute(ref) || !fs.existsSync(ref)) {
        throw new CriError('ERR_CRI_UNKNOWN', op, `failed to create containerd container: cannot load seccomp profile ${JSON.stringify(ref)}: open ${ref}: no such file or directory`);
      }
    }
    const mkdirError = createMissingSources(id, config.mounts ?? []);
    if (mkdirError !== undefined) throw new CriError('ERR_CRI_UNKNOWN', op, mkdirError);
    const command = config.command ?? [];
    const args = config.args ?? [];
    // The image's defaults: busybox-like images have no Entrypoint and Cmd ["sh"]; other images
    // run an opaque program (represented by its image name, which resolves as opaque).
    const argv = command.length > 0 ? [...command, ...args] : isBusyboxLike(image.repoTags[0] ?? imageRef) ? (args.length > 0 ? [...args] : ['sh']) : ['image-entrypoint', ...args]; // an opaque workload: runs until stopped, like nginx would
    const logDir = sandboxConfig.logDirectory ?? '';
    const env: Record<string, string> = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOSTNAME: sb.config.hostname ?? '', HOME: '/root' };
    // Upstream CRI KeyValue.value is a string; accept bytes too (see the report on proto/).
    for (const kv of config.envs ?? []) env[kv.key] = Buffer.isBuffer(kv.value) ? kv.value.toString() : String(kv.value ?? '');
    const rec: ContainerRecord = {
      id,
      sandboxId: sb.id,
      name,
      config,
      sandboxAnnotations: { ...(sb.config.annotations ?? {}) },
      logPath: config.logPath ? path.join(logDir, config.logPath) : '',
      imageId: image.id,
      imageName: image.repoTags[0] ?? imageRef,
      argv,
      env,
      security: security.security,
      state: 'CONTAINER_CREATED',
      createdAtNs: this.#nowNs(),
      startedAtNs: '0',
      finishedAtNs: '0',
      startedAtMs: 0,
      exitCode: 0,
      reason: '',
      message: '',
      process: undefined,
      log: undefined,
    };
    this.store.addContainer(rec);
    this.#publish(rec.id, 'CONTAINER_CREATED_EVENT', sb);
    return rec.id;
  }

  startContainer(id: string): void {
    const op = 'StartContainer';
    const c = must(this.store.findContainer(id), op, 'container', id, 'an error occurred when try to find');
    if (c.state !== 'CONTAINER_CREATED') {
      throw new CriError('ERR_CRI_UNKNOWN', op, `failed to set starting state for container "${c.id}": container is in ${c.state} state`);
    }
    const sb = this.store.findSandbox(c.sandboxId);
    if (!sb.ok || sb.value.state !== 'SANDBOX_READY') this.#failStart(c, `sandbox container "${c.sandboxId}" is not running`);
    const mountError = checkMountSources(c.config.mounts ?? []);
    if (mountError !== undefined) this.#failStart(c, mountError);
    const resolved = resolveArgv(c.argv, c.env, this.processContext(c));
    if (resolved.kind === 'not-found') {
      this.#failStart(c, `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "${resolved.executable}": executable file not found in $PATH: unknown`);
    }
    const src = { own: c.config.annotations, pod: c.sandboxAnnotations, containerName: c.config.metadata.name };
    if (simFlag(src, 'start-fail')) this.#failStart(c, 'failed to create containerd task: failed to start shim: sim.shardlet.io/start-fail: unknown');
    if (c.logPath !== '') {
      try {
        c.log = new CriLogWriter(c.logPath);
      } catch (e) {
        this.#failStart(c, `failed to create container loggers: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    const now = this.#clock.now();
    c.state = 'CONTAINER_RUNNING';
    c.startedAtMs = now;
    c.startedAtNs = msToNs(now);
    this.#spawn(c, 0);
    this.#publish(c.id, 'CONTAINER_STARTED_EVENT');
  }

  /** (Re)creates the process of a RUNNING container, `elapsedMs` into its timeline. */
  #spawn(c: ContainerRecord, elapsedMs: number): void {
    // Its file writes happen once, at a fresh start (not again when resumed after a restart).
    const resolved = resolveArgv(c.argv, c.env, this.processContext(c), elapsedMs === 0 ? containerWriter(c.config.mounts ?? []) : undefined);
    // A program that reads an open stdin waits for it (sim-attach-stdin.ts) instead of exiting at its EOF.
    const waitsForStdin = c.config.stdin === true && stdinReaderOf(c.argv) !== undefined;
    const timeline = resolved.kind === 'timeline' && !waitsForStdin ? resolved.timeline : { outputs: [], exit: null, ignoreTermFromMs: null };
    const src = { own: c.config.annotations, pod: c.sandboxAnnotations, containerName: c.config.metadata.name };
    const overrides: ProcessOverrides = {};
    if (simFlag(src, 'ignore-sigterm')) overrides.ignoreSigterm = true;
    // PID-1 semantics, as on containerd: in its own PID namespace (pid CONTAINER, the kubelet's
    // default without shareProcessNamespace) a busybox `sleep`/`sh` is PID 1 with no SIGTERM
    // handler, so the kernel drops SIGTERM and only the SIGKILL at the timeout ends it (137).
    // Sharing the sandbox's namespace (POD) makes it an ordinary process that SIGTERM kills (143).
    if (resolved.kind === 'timeline' && c.config.linux?.securityContext?.namespaceOptions?.pid === 'CONTAINER') overrides.ignoreSigterm = true;
    const crashAfter = simNumber(src, 'crash-after-ms');
    if (crashAfter !== undefined) overrides.crash = { afterMs: crashAfter, code: simNumber(src, 'exit-code') ?? 1 };
    const oomAfter = simNumber(src, 'oom-after-ms');
    if (oomAfter !== undefined) overrides.oomAfterMs = oomAfter;
    const chatter = clampChatter(simNumber(src, 'log-lines-per-second') ?? 0, simNumber(src, 'log-line-bytes'));
    if (chatter !== undefined) overrides.chatter = chatter;
    c.process = new SimProcess({
      clock: this.#clock,
      timeline,
      overrides,
      startedAtMs: c.startedAtMs,
      elapsedMs,
      onOutput: (stream, text, atMs) => {
        c.log?.write(stream, text, atMs);
        this.taps.output(c.id, stream, text);
      },
      onExit: (exit) => this.#onExit(c, exit),
    });
  }

  /** Output of a running container's program (its log and attached clients); ignored once it stopped. */
  containerOutput(id: string, stream: 'stdout' | 'stderr', text: string): void {
    const r = this.store.findContainer(id);
    if (!r.ok || r.value.state !== 'CONTAINER_RUNNING') return;
    r.value.log?.write(stream, text, this.#clock.now());
    this.taps.output(r.value.id, stream, text);
  }

  /** A running container's program exits by itself with `code` (sim-attach-stdin.ts). */
  endContainerProcess(id: string, code: number): void {
    const r = this.store.findContainer(id);
    if (r.ok) r.value.process?.end(code);
  }

  #failStart(c: ContainerRecord, message: string): never {
    c.state = 'CONTAINER_EXITED';
    c.finishedAtNs = this.#nowNs();
    c.exitCode = START_ERROR_EXIT_CODE;
    c.reason = REASON_START_ERROR;
    c.message = message;
    this.#publish(c.id, 'CONTAINER_STOPPED_EVENT');
    throw new CriError('ERR_CRI_UNKNOWN', 'StartContainer', `failed to start container "${c.id}": ${message}`);
  }

  #onExit(c: ContainerRecord, exit: ProcessExit): void {
    c.state = 'CONTAINER_EXITED';
    c.finishedAtNs = msToNs(exit.atMs);
    c.exitCode = exit.code;
    if (exit.oomKilled) c.reason = REASON_OOM;
    c.process = undefined;
    c.log?.close(exit.atMs);
    c.log = undefined;
    const waiters = this.#exitWaiters.get(c.id);
    this.#exitWaiters.delete(c.id);
    this.#publish(c.id, 'CONTAINER_STOPPED_EVENT');
    this.taps.exited(c.id, exit.code);
    for (const w of waiters ?? []) w();
  }

  #kill(c: ContainerRecord): void {
    c.process?.signal('SIGKILL');
  }

  /**
   * SIGTERM, then SIGKILL after `timeoutSec` if still running; timeout 0 kills at once.
   * Resolves once the container has exited. OK (no-op) for a container that is not running.
   */
  async stopContainer(id: string, timeoutSec: number): Promise<void> {
    const c = must(this.store.findContainer(id), 'StopContainer', 'container', id, 'an error occurred when try to find');
    const proc = c.process;
    if (c.state !== 'CONTAINER_RUNNING' || !proc) return;
    if (timeoutSec > 0) {
      proc.signal('SIGTERM');
      if (proc.state === 'running') {
        await new Promise<void>((resolve) => {
          const timer = this.#clock.setTimer(timeoutSec * 1000, resolve);
          const list = this.#exitWaiters.get(c.id) ?? [];
          list.push(() => {
            timer.cancel();
            resolve();
          });
          this.#exitWaiters.set(c.id, list);
        });
      }
    }
    proc.signal('SIGKILL');
  }

  removeContainer(id: string): void {
    const r = this.store.findContainer(id);
    if (!r.ok) {
      if (r.why === 'not-found') return; // containerd: "Do not return error if container metadata doesn't exist"
      throw lookupError('RemoveContainer', 'container', id, r.why, 'an error occurred when try to find');
    }
    const c = r.value;
    // Deliberate (matches containerd 1.6, not the brief): a running container is force-killed.
    this.#kill(c);
    this.store.removeContainer(c);
    const sb = this.store.findSandbox(c.sandboxId);
    this.#publish(c.id, 'CONTAINER_DELETED_EVENT', sb.ok ? sb.value : undefined);
  }

  listContainers(filter: T.ContainerFilter | null | undefined): T.Container[] {
    return this.listContainerRecords(filter).map(toCriContainer);
  }

  /** The records ListContainers answers with (the server encodes them from its frame cache). */
  listContainerRecords(filter: T.ContainerFilter | null | undefined): ContainerRecord[] {
    return this.store.listContainers({
      ...(filter?.id ? { id: filter.id } : {}),
      ...(filter?.state ? { state: filter.state.state } : {}),
      ...(filter?.podSandboxId ? { podSandboxId: filter.podSandboxId } : {}),
      ...(filter?.labelSelector ? { labelSelector: filter.labelSelector } : {}),
    });
  }

  /** `verbose`: the info map carries the config and the security settings applied (sim-verbose-info.ts). */
  containerStatus(id: string, verbose = false): T.ContainerStatusResponse {
    const c = must(this.store.findContainer(id), 'ContainerStatus', 'container', id, 'an error occurred when try to find');
    return { status: toCriContainerStatus(c), info: verbose ? containerVerboseInfo(c, this.processContext(c).security) : {} };
  }

  /** The identity and mounts the container's processes (and execs) run with. */
  processContext(c: ContainerRecord): SimProcessContext {
    if (!c.security) return { ...defaultProcessContext(), mounts: c.config.mounts ?? [] };
    return { security: c.security, users: imageUserDbOf(c.imageName), mounts: c.config.mounts ?? [] };
  }

  /**
   * ReopenContainerLog: closes the container's log file and opens its path again (log rotation
   * renamed the old file away). As containerd: only for a running container.
   */
  reopenContainerLog(id: string): void {
    const op = 'ReopenContainerLog';
    const c = must(this.store.findContainer(id), op, 'container', id, 'failed to find');
    if (c.state !== 'CONTAINER_RUNNING') throw new CriError('ERR_CRI_UNKNOWN', op, 'container is not running');
    try {
      c.log?.reopen();
    } catch (e) {
      throw new CriError('ERR_CRI_UNKNOWN', op, `failed to create and open log file: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** The running container to exec in (ExecSync), or the error containerd gives. */
  execTarget(id: string): ContainerRecord {
    const c = must(this.store.findContainer(id), 'ExecSync', 'container', id, 'failed to find');
    if (c.state !== 'CONTAINER_RUNNING') throw new CriError('ERR_CRI_UNKNOWN', 'ExecSync', `container is in ${c.state} state`);
    return c;
  }

  // ---- restart support ---------------------------------------------------------------------

  /** Re-adds a record loaded from the state file; a RUNNING container's process resumes. */
  restoreSandbox(rec: SandboxRecord): void {
    this.store.addSandbox(rec);
    if (rec.state === 'SANDBOX_READY' && rec.ip !== '') this.ips.claim(rec.ip);
  }

  restoreContainer(rec: ContainerRecord): void {
    this.store.addContainer(rec);
    if (rec.state !== 'CONTAINER_RUNNING') return;
    if (rec.logPath !== '') {
      try {
        rec.log = new CriLogWriter(rec.logPath);
      } catch {
        rec.log = undefined;
      }
    }
    this.#spawn(rec, this.#clock.now() - rec.startedAtMs);
  }

  /** Stops every process's timers without exiting it (shutdown: state keeps them running). */
  detachAll(): void {
    for (const c of this.store.allContainers()) {
      c.process?.detach();
      c.process = undefined;
    }
  }

  #publish(containerId: string, type: T.ContainerEventType, sandbox?: SandboxRecord): void {
    if (this.#events.subscriberCount === 0) return;
    let sb = sandbox;
    if (!sb) {
      const c = this.store.findContainer(containerId);
      const s = c.ok ? this.store.findSandbox(c.value.sandboxId) : undefined;
      sb = s?.ok ? s.value : undefined;
    }
    this.#events.publish({
      containerId,
      containerEventType: type,
      createdAt: this.#nowNs(),
      podSandboxStatus: sb ? toCriSandboxStatus(sb) : null,
      containersStatuses: sb ? this.store.containersOf(sb.id).map(toCriContainerStatus) : [],
    });
  }
}
