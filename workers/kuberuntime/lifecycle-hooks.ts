/**
 * Runs a container lifecycle handler (postStart / preStop), like the kubelet's HandlerRunner
 * (pkg/kubelet/lifecycle/handlers.go): `exec` through CRI ExecSync (a non-zero exit code is a
 * failure) and `sleep` on the injected clock. `httpGet` and `tcpSocket` handlers are not
 * implemented in shardlet and fail with a message saying so.
 */
import type { V1Container, V1LifecycleHandler, V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../src/shared/clock/clock.js';
import type { RuntimeService } from '../../src/shared/cri/runtime-service.js';
import { errorMessage, rethrowIfAborted } from './kuberuntime-errors.js';
import { formatPod } from './pod-spec.js';

export type HookResult = { ok: true } | { ok: false; message: string };

export interface HookDeps {
  runtime: RuntimeService;
  clock: Clock;
}

export interface RunHookInput {
  pod: V1Pod;
  container: V1Container;
  containerId: string;
  handler: V1LifecycleHandler;
  /** ExecSync timeout in seconds (0 = none, as the kubelet runs postStart). */
  timeoutSeconds: number;
  signal: AbortSignal;
}

export async function runLifecycleHandler(deps: HookDeps, input: RunHookInput): Promise<HookResult> {
  const { handler, container, pod, signal } = input;
  if (handler.exec) {
    const cmd = handler.exec.command ?? [];
    const desc = `Exec lifecycle hook ([${cmd.join(' ')}]) for Container "${container.name}" in Pod "${formatPod(pod)}" failed`;
    try {
      const r = await deps.runtime.execSync({ containerId: input.containerId, cmd, timeout: input.timeoutSeconds }, { signal });
      if (r.exitCode === 0) return { ok: true };
      const output = Buffer.concat([r.stdout, r.stderr]).toString('utf8');
      return { ok: false, message: `${desc} - error: command '${cmd.join(' ')}' exited with ${r.exitCode}: ${r.stderr.toString('utf8')}, message: ${JSON.stringify(output)}` };
    } catch (err) {
      rethrowIfAborted(signal);
      return { ok: false, message: `${desc} - error: ${errorMessage(err)}, message: ""` };
    }
  }
  if (handler.sleep) {
    await deps.clock.sleep(Math.max(0, handler.sleep.seconds) * 1000, signal);
    return { ok: true };
  }
  const kind = handler.httpGet ? 'httpGet' : handler.tcpSocket ? 'tcpSocket' : 'unknown';
  return { ok: false, message: `Lifecycle hook of type ${kind} for Container "${container.name}" in Pod "${formatPod(pod)}" is not supported by shardlet` };
}
