/**
 * Exec probes (the kubelet's pkg/probe/exec over CRI ExecSync). The command runs exactly as
 * written: no shell is added (a probe wanting one says ["sh", "-c", ...]). Exit code 0 is
 * success, any other exit code failure with stdout+stderr as output (capped at 10 KiB). The
 * runtime enforces the timeout and answers DEADLINE_EXCEEDED, which is a failure (the kubelet's
 * ExecProbeTimeout behaviour, GA since 1.20); the CRI client's own deadline is timeout + its
 * default, so a hung runtime cannot hold a probe forever. Any other CRI error is a probe error.
 */
import type { RuntimeService } from '../../../src/shared/cri/runtime-service.js';
import { CriError, isCancelled, isDeadlineExceeded } from '../../../src/shared/cri/cri-errors.js';
import { ProbeError } from '../prober-errors.js';
import { boundedText, probeErrored, probeFailure, PROBE_SUCCESS, type ProbeOutcome } from '../probe-outcome.js';

export type ExecRuntime = Pick<RuntimeService, 'execSync'>;

export interface ExecProbeRequest {
  containerId: string;
  command: readonly string[];
  timeoutSeconds: number;
  signal: AbortSignal;
}

export async function execProbe(runtime: ExecRuntime, req: ExecProbeRequest): Promise<ProbeOutcome> {
  if (req.signal.aborted) return probeErrored(new ProbeError('ERR_PROBE_ABORTED', 'probe aborted'));
  try {
    const res = await runtime.execSync(
      { containerId: req.containerId, cmd: req.command as string[], timeout: req.timeoutSeconds },
      { signal: req.signal },
    );
    if (res.exitCode === 0) return PROBE_SUCCESS;
    const out = res.stderr.length === 0 ? res.stdout : Buffer.concat([res.stdout, res.stderr]);
    return probeFailure(boundedText(out));
  } catch (err: unknown) {
    if (isDeadlineExceeded(err)) {
      return probeFailure(`command ${JSON.stringify(req.command)} timed out after ${req.timeoutSeconds}s`);
    }
    if (req.signal.aborted || isCancelled(err)) return probeErrored(new ProbeError('ERR_PROBE_ABORTED', 'probe aborted'));
    const detail = err instanceof CriError ? `${err.code}: ${err.message}` : String(err);
    return probeErrored(new ProbeError('ERR_PROBE_RUNTIME', `exec probe: ${detail}`));
  }
}
