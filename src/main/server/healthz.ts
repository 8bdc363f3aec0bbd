/**
 * /healthz responses in the format of k8s.io/apiserver/pkg/server/healthz, which the kubelet
 * serves: `[+]name ok` / `[-]name failed: …` lines, then "healthz check passed|failed".
 *
 * Deliberate difference: the kubelet prints "reason withheld" on the aggregate endpoint and logs
 * the reason; shardlet prints the reason (the server binds to loopback by default and the
 * reasons carry no secrets), which is what an operator curling the node wants to see.
 */
import type { HealthCheckResult } from './server-sources.js';

export interface HealthzResponse {
  status: 200 | 404 | 500;
  body: string;
}

/** The always-passing check the kubelet lists first. */
export const PING_CHECK: HealthCheckResult = Object.freeze({ name: 'ping', ok: true });

/**
 * GET /healthz[?verbose][&exclude=name…]: "ok" when every check passes (the check list with
 * ?verbose), else 500 with every check's line.
 */
export function aggregateHealthz(checks: readonly HealthCheckResult[], opts: { verbose: boolean; exclude: ReadonlySet<string> }): HealthzResponse {
  const lines: string[] = [];
  let failed = false;
  for (const c of checks) {
    if (opts.exclude.has(c.name)) {
      lines.push(`[+]${c.name} excluded: ok`);
      continue;
    }
    if (c.ok) {
      lines.push(`[+]${c.name} ok`);
    } else {
      failed = true;
      lines.push(`[-]${c.name} failed: ${c.reason ?? 'reason unknown'}`);
    }
  }
  if (failed) return { status: 500, body: `${lines.join('\n')}\nhealthz check failed\n` };
  if (!opts.verbose) return { status: 200, body: 'ok' };
  return { status: 200, body: `${lines.join('\n')}\nhealthz check passed\n` };
}

/** GET /healthz/<name>: "ok", or 500 "internal server error: <reason>", or 404 for an unknown check. */
export function singleHealthz(checks: readonly HealthCheckResult[], name: string): HealthzResponse {
  const c = checks.find((x) => x.name === name);
  if (c === undefined) return { status: 404, body: '404 page not found\n' };
  if (c.ok) return { status: 200, body: 'ok' };
  return { status: 500, body: `internal server error: ${c.reason ?? 'reason unknown'}\n` };
}
