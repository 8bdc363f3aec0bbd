/**
 * /metrics/resource: the kubelet's resource metrics (pkg/kubelet/metrics/collectors/
 * resource_metrics.go), what metrics-server and `kubectl top` read, from the same Summary as
 * /stats/summary. Names, help, types and labels as the kubelet's; each sample carries the
 * timestamp of its measurement (ms), as there. `resource_scrape_error` is 1 when the runtime's
 * stats could not be read (the other families are then empty).
 */
import type { Summary } from './stats-summary.js';

function esc(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : String(n);
}

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: string[];
}

function fam(name: string, help: string, type: Family['type']): Family {
  return { name, help, type, samples: [] };
}

function sample(f: Family, labels: Record<string, string>, value: number, time: string): void {
  const l = Object.entries(labels).map(([k, v]) => `${k}="${esc(v)}"`).join(',');
  f.samples.push(`${f.name}${l ? `{${l}}` : ''} ${fmt(value)} ${Date.parse(time)}`);
}

export function resourceMetricsText(s: Summary | undefined): string {
  const nodeCpu = fam('node_cpu_usage_seconds_total', '[STABLE] Cumulative cpu time consumed by the node in core-seconds', 'counter');
  const nodeMem = fam('node_memory_working_set_bytes', '[STABLE] Current working set of the node in bytes', 'gauge');
  const cCpu = fam('container_cpu_usage_seconds_total', '[STABLE] Cumulative cpu time consumed by the container in core-seconds', 'counter');
  const cMem = fam('container_memory_working_set_bytes', '[STABLE] Current working set of the container in bytes', 'gauge');
  const cStart = fam('container_start_time_seconds', '[STABLE] Start time of the container since unix epoch in seconds', 'gauge');
  const pCpu = fam('pod_cpu_usage_seconds_total', '[STABLE] Cumulative cpu time consumed by the pod in core-seconds', 'counter');
  const pMem = fam('pod_memory_working_set_bytes', '[STABLE] Current working set of the pod in bytes', 'gauge');
  const scrapeError = fam('resource_scrape_error', '[STABLE] 1 if there was an error while getting container metrics, 0 otherwise', 'gauge');
  if (s !== undefined) {
    if (s.node.cpu.usageCoreNanoSeconds !== undefined) sample(nodeCpu, {}, s.node.cpu.usageCoreNanoSeconds / 1e9, s.node.cpu.time);
    if (s.node.memory.workingSetBytes !== undefined) sample(nodeMem, {}, s.node.memory.workingSetBytes, s.node.memory.time);
    for (const p of s.pods) {
      const pl = { namespace: p.podRef.namespace, pod: p.podRef.name };
      if (p.cpu?.usageCoreNanoSeconds !== undefined) sample(pCpu, pl, p.cpu.usageCoreNanoSeconds / 1e9, p.cpu.time);
      if (p.memory?.workingSetBytes !== undefined) sample(pMem, pl, p.memory.workingSetBytes, p.memory.time);
      for (const c of p.containers) {
        const cl = { container: c.name, namespace: p.podRef.namespace, pod: p.podRef.name };
        if (c.cpu?.usageCoreNanoSeconds !== undefined) sample(cCpu, cl, c.cpu.usageCoreNanoSeconds / 1e9, c.cpu.time);
        if (c.memory?.workingSetBytes !== undefined) sample(cMem, cl, c.memory.workingSetBytes, c.memory.time);
        const startMs = Date.parse(c.startTime);
        cStart.samples.push(`${cStart.name}{container="${esc(c.name)}",namespace="${esc(p.podRef.namespace)}",pod="${esc(p.podRef.name)}"} ${startMs / 1000} ${startMs}`);
      }
    }
  }
  scrapeError.samples.push(`${scrapeError.name} ${s === undefined ? 1 : 0}`);
  const out: string[] = [];
  for (const f of [cCpu, cMem, cStart, nodeCpu, nodeMem, pCpu, pMem, scrapeError]) {
    if (f.samples.length === 0) continue;
    out.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`, ...f.samples);
  }
  return out.join('\n') + '\n';
}
