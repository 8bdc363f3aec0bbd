/**
 * Runs a container lifecycle handler (postStart / preStop), like the kubelet's HandlerRunner
 * (pkg/kubelet/lifecycle/handlers.go): `exec` through CRI ExecSync (a non-zero exit code is a
 * failure), `httpGet` (lifecycle-http.ts: any HTTP response is success) and `sleep` (KEP-3960)
 * on the injected clock. `tcpSocket` is not a lifecycle handler (the API keeps the field for
 * compatibility; the kubelet fails it at run time): it fails, as there. Failure messages are
 * the kubelet's; the events (FailedPostStartHook / FailedPreStopHook) are recorded by the
 * callers with the kubelet's secret-safe messages.
 */
import type { V1Container, V1LifecycleHandler, V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../src/shared/clock/clock.js';
import type { RuntimeService } from '../../src/shared/cri/runtime-service.js';
import { errorMessage, rethrowIfAborted } from './kuberuntime-errors.js';
import { httpHookTarget, runHttpHook } from './lifecycle-http.js';
import { joinHostPort } from '../prober/probe-port.js';
import type { PodEventRecorder } from './pod-events.js';
import { formatPod, isHostNetwork } from './pod-spec.js';

export type HookResult = { ok: true } | { ok: false; message: string };

export interface HookDeps {
  runtime: RuntimeService;
  clock: Clock;
  /** The node's IP: an httpGet hook's host for a host-network pod without a runtime pod IP. */
  hostIP?: string;
  events?: PodEventRecorder;
}

export interface RunHookInput {
  pod: V1Pod;
  container: V1Container;
  containerId: string;
  handler: V1LifecycleHandler;
  /** ExecSync / HTTP timeout in seconds (0 = none, as the kubelet runs postStart). */
  timeoutSeconds: number;
  /** The pod's IPs from the runtime (primary first): an httpGet hook's default host. */
  podIPs?: readonly string[];
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
  if (handler.httpGet) {
    const action = handler.httpGet;
    const desc = `HTTP lifecycle hook (${action.path ?? ''}) for Container "${container.name}" in Pod "${formatPod(pod)}" failed - error: `;
    const target = httpHookTarget(action, container, input.podIPs ?? [], deps.hostIP, isHostNetwork(pod));
    if ('error' in target) return { ok: false, message: desc + target.error };
    const r = await runHttpHook(deps.clock, target, input.timeoutSeconds * 1000, signal);
    rethrowIfAborted(signal);
    if (!r.ok) return { ok: false, message: desc + r.error };
    if (r.fellBackToHttp) {
      deps.events?.(pod, 'Warning', 'LifecycleHTTPFallback', `request to HTTPS lifecycle hook ${joinHostPort(target.host, target.port)} got HTTP response, retry with HTTP succeeded`);
    }
    return { ok: true };
  }
  if (handler.sleep) {
    await deps.clock.sleep(Math.max(0, handler.sleep.seconds) * 1000, signal);
    return { ok: true };
  }
  const kind = handler.tcpSocket ? 'tcpSocket' : 'unknown';
  return { ok: false, message: `Cannot run handler: invalid handler: lifecycle handler of type ${kind} for Container "${container.name}" in Pod "${formatPod(pod)}" is not supported` };
}
