/**
 * Hollow mode's simulated runtimes: one SimulatedRuntime per hollow node, in this process, each
 * with its own socket, state file and in-memory state, and the same latency profile and crash
 * behaviours as `shardlet sim-runtime`. Lives in the CLI because only the CLI may import both the
 * agent side (src/main/hollow) and the simulated runtime (src/simruntime).
 *
 * down() is a graceful runtime stop (state saved, processes' timers detached, socket removed);
 * up() starts a new server from that state on the same socket, so running containers resume.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { HollowRuntime, HollowRuntimeFactory } from '../main/hollow/hollow-runtime.js';
import { CONTAINERD_PROFILE, ZERO_PROFILE } from '../simruntime/sim-latency.js';
import { crashPodContainers } from '../simruntime/sim-pod-crash.js';
import { SimulatedRuntime } from '../simruntime/simulated-runtime.js';

export function hollowSimFactory(profile: 'zero' | 'containerd', reportError: (msg: string) => void): HollowRuntimeFactory {
  return async (_node, paths) => {
    fs.mkdirSync(path.dirname(paths.simState), { recursive: true, mode: 0o700 });
    const start = (): Promise<SimulatedRuntime> =>
      SimulatedRuntime.start({
        socketPath: paths.socket,
        profile: profile === 'containerd' ? CONTAINERD_PROFILE : ZERO_PROFILE,
        statePath: paths.simState,
        // Saved on close only: a thousand runtimes writing state every 5 s is all disk and CPU.
        stateSaveIntervalMs: 0,
        reportError,
      });
    let rt: SimulatedRuntime | undefined = await start();
    let closed = false;
    let transition: Promise<void> = Promise.resolve();
    const endpoint = rt.endpoint;
    const runtime: HollowRuntime = {
      endpoint,
      get serving() {
        return rt !== undefined;
      },
      down: () =>
        (transition = transition.then(async () => {
          const r = rt;
          rt = undefined;
          await r?.close();
        })),
      up: () =>
        (transition = transition.then(async () => {
          if (rt === undefined && !closed) rt = await start();
        })),
      crashPod: (namespace, pod) => (rt === undefined ? 0 : crashPodContainers(rt.core, namespace, pod)),
      close: () =>
        (transition = transition.then(async () => {
          closed = true;
          const r = rt;
          rt = undefined;
          await r?.close();
        })),
    };
    return runtime;
  };
}
