/**
 * The cluster-mode section of report.md: one row per --kube-api-qps session beside the
 * standalone burst of the same size and worker count from the same run (pods from manifest
 * files), then the API requests by verb and resource. Pure: results in, Markdown out.
 */
import type { ClusterSessionResult } from './cluster-session.js';
import { LEASE_LATENESS_TARGET_S, leaseVerdict } from './lease-during-burst.js';
import type { BenchResults } from './results.js';
import { fmt } from './report-md.js';

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

function sessionLabel(s: { qps: number; serviceAccountVolume?: boolean }): string {
  return `${s.qps === 0 ? 'unthrottled' : `--kube-api-qps ${s.qps}`}${s.serviceAccountVolume ? ' + kube-api-access volume' : ''}`;
}

function atMost(v: number | null): string {
  if (v === null) return '–';
  return Number.isFinite(v) ? `≤ ${v}` : '> 30';
}

/**
 * The node lease during each session's burst (issue 12's target: renewal lateness p99 ≤ 1 s),
 * one row per session: the agent's histograms (due → sent; sent → answer handled) and the
 * renewTimes the API server held. Markdown; the terminal prints the same table.
 */
export function leaseTable(sessions: readonly ClusterSessionResult[]): string[] {
  const out: string[] = [];
  out.push(row(['configuration', 'pods', 'renewals in the burst (failed)', 'lateness p99 s', 'lateness max s', 'request p99 s', 'API server PUT p99 s', 'renewTimes seen by the API', 'largest renewTime gap s', 'main-thread ELD max ms', `lateness p99 ≤ ${LEASE_LATENESS_TARGET_S} s`]));
  out.push(row([':---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', ':---:']));
  for (const s of sessions) {
    const l = s.lease;
    out.push(row([
      sessionLabel(s), String(s.pods),
      l ? `${l.renewals} (${l.failed})` : '–', atMost(l?.latenessP99AtMostS ?? null), atMost(l?.latenessMaxAtMostS ?? null), atMost(l?.requestP99AtMostS ?? null), atMost(l?.serverP99AtMostS ?? null),
      l ? String(l.apiRenewals) : '–', fmt(l?.apiMaxGapS, 1), fmt(s.eventLoopDelayMaxMs, 0),
      !l ? 'not measured' : leaseVerdict(l),
    ]));
  }
  return out;
}

export function clusterSection(r: BenchResults): string[] {
  const sessions = r.cluster ?? [];
  if (sessions.length === 0) return [];
  const out: string[] = ['## Cluster mode (pods created through a private kube-apiserver, spec.nodeName set)', ''];
  out.push(row(['configuration', 'pods', 'creates done s', 'all Running in the API s', 'pods/s', 'start p50 ms', 'start p99 ms', 'pods + pods/status requests per pod start']));
  out.push(row([':---', '---:', '---:', '---:', '---:', '---:', '---:', '---:']));
  for (const s of sessions) {
    const rate = s.allRunningS !== null && s.allRunningS > 0 ? s.pods / s.allRunningS : null;
    out.push(row([`cluster, sim/zero w=${s.workers}, ${sessionLabel(s)}`, String(s.pods), fmt(s.createS), fmt(s.allRunningS), fmt(rate), fmt(s.startupMs?.p50), fmt(s.startupMs?.p99), fmt(s.requestsPerPodStart, 2)]));
  }
  const first = sessions[0]!;
  const standalone = r.workloads.find((w) => w.workload === 'burst' && w.runtime === 'sim' && w.profile === 'zero' && w.workers === first.workers && w.pods === first.pods);
  if (standalone) {
    const s = standalone.podsPerSec !== null && standalone.podsPerSec > 0 ? standalone.pods / standalone.podsPerSec : null;
    out.push(row([`standalone burst (manifests), sim/zero w=${standalone.workers}`, String(standalone.pods), '–', fmt(s), fmt(standalone.podsPerSec), fmt(standalone.startupMs?.p50), fmt(standalone.startupMs?.p99), '–']));
  }
  out.push('');
  out.push('Start latency: the create call returned → the bench\'s watch saw the pod Running (cluster); the agent first saw the pod → Running, from its own `pod running` line (standalone; manifest written → Running when the agent logs no such line).', '');
  out.push('API requests over each session (apiserver_request_total deltas, all clients):', '');
  const kinds = [...new Set(sessions.flatMap((s) => Object.keys(s.requests)))].sort();
  out.push(row(['request', ...sessions.map(sessionLabel)]));
  out.push(row([':---', ...sessions.map(() => '---:')]));
  for (const k of kinds) out.push(row([k, ...sessions.map((s) => String(s.requests[k] ?? 0))]));
  out.push('');
  out.push('### Node lease during the burst', '');
  out.push(...leaseTable(sessions), '');
  out.push(`Window: first create → last pod seen Running. Lateness = renewal due → its write stamped (renewTime) and sent (\`shardlet_node_lease_renew_lateness_seconds\`, histogram delta; "≤ x" is the bound of the bucket holding the p99 or the worst renewal); request = sent → answer handled; API server PUT = the server's own time for the lease PUTs (\`apiserver_request_duration_seconds\`): a request far above it is the agent's busy main thread handling the answer late, after the server already held the renewal. renewTimes are what the API server held (the bench's watch on the Lease); the renewal interval is 10 s, the node lifecycle controller's grace period 40–50 s. Target (issue 12): lateness p99 ≤ ${LEASE_LATENESS_TARGET_S} s.`, '');
  for (const n of [...new Set(sessions.flatMap((s) => s.notes))]) out.push(`- ${n}`);
  out.push('');
  return out;
}
